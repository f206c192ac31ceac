-- Calls and returns through the dispatch loop's fast paths: vararg frames (their extra
-- arguments kept beside the frame stack), tail calls between vararg and fixed functions,
-- results wanted 0, 1, several and all, errors unwinding vararg frames under pcall,
-- closures called once and dropped, and deep recursion growing the stack.

local function va(...) return select('#', ...), ... end
print(va())
print(va(nil))
print(va(1, nil, 3))
print((va(1, 2, 3)))

local function fixed(a, b, c) return a, b, c end
print(fixed(1))
print(fixed(1, 2, 3, 4, 5))

-- vararg frames nested: each sees its own extra arguments
local function outer(...)
  local function inner(...)
    return select('#', ...), ...
  end
  local n1 = select('#', ...)
  local r = { inner(10, 20, ...) }
  return n1, #r, table.unpack(r)
end
print(outer('a', 'b', 'c'))
print(outer())

-- a vararg frame's extra arguments survive a call of another vararg function
local function keep(...)
  local a = { va(7, 8) }
  local b = { ... }
  return #a, a[1], #b, b[1], b[#b]
end
print(keep(1, 2, 3, 4))

-- tail calls: vararg -> fixed, fixed -> vararg, vararg -> vararg
local function tfixed(a, b) return a + b end
local function tv1(...) return tfixed(...) end
local function tv2(x, ...) return va(x, ...) end
local function tv3(...) return tv2(...) end
print(tv1(3, 4), tv2(1, 2, 3), tv3('p', 'q'))
local function count(n, ...)
  if n == 0 then return select('#', ...) end
  return count(n - 1, n, ...)
end
print(count(50))

-- results wanted: none, one, two, all
local function three() return 1, 2, 3 end
three()
local x = three()
local p, q = three()
local t = { three(), three() }
print(x, p, q, #t, t[4], t[5])
print(three(), (three()))
local function none() end
local u, v = none()
print(u, v, select('#', none()))

-- errors inside vararg frames, caught: the extra arguments of the frames left behind are
-- dropped, and those of the frames still running are intact
local function boom(...)
  local n = select('#', ...)
  if n > 2 then error('boom ' .. n) end
  return boom(1, ...)
end
local function guard(...)
  local ok, err = pcall(boom, ...)
  return ok, err, select('#', ...), ...
end
print(guard('z'))
print(guard())
for i = 1, 3 do
  print(pcall(function(...) local a, b = ... ; return a .. b .. nil end, 'x', 'y'))
end
print(select('#', guard(1, 2, 3, 4)))

-- a closure called once and dropped (the frame owns the only reference)
local s = 0
for i = 1, 100 do
  s = s + (function(a) return a * 2 end)(i)
end
print(s)

-- a method call and a __call metamethod, with and without varargs
local obj = setmetatable({ k = 5 }, { __call = function(self, ...) return self.k, select('#', ...) end })
print(obj(1, 2))
function obj:m(...) return self.k + select('#', ...) end
print(obj:m(), obj:m(1, 2, 3))

-- deep recursion grows the value stack and the frame stack
local function depth(n) if n == 0 then return 0 end return 1 + depth(n - 1) end
print(depth(20000))
local function vdepth(n, ...) if n == 0 then return select('#', ...) end return (vdepth(n - 1, n, ...)) end
print(vdepth(300))
local function sum(n, acc) if n == 0 then return acc end return sum(n - 1, acc + n) end
print(sum(100000, 0))

-- an error in a deep call chain, then normal calls again
local function deep_err(n) if n == 0 then error({ code = 42 }) end return deep_err(n - 1) + 1 end
local ok, e = pcall(deep_err, 5000)
print(ok, type(e), e.code)
print(va(1, 2), fixed(9, 8, 7))
