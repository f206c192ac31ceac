-- Tail calls that take over the caller's frame: between fixed-parameter and vararg functions,
-- with fewer or more arguments than parameters, closing upvalues, with the results adjusted to
-- what the original caller wanted, into natives and through __call, and errors after them.
local function three(a, b, c) return a, b, c end
local function va(...) return select("#", ...), ... end
local function to_three(...) return three(...) end
local function to_va(a, b) return va(a, b, a) end
local function fewer() return three(1) end
local function more() return three(1, 2, 3, 4, 5) end
print(to_three(1, 2, 3, 4))
print(to_va(7, 8))
print(fewer())
print(more())
print((more()))
local x, y = to_three("p", "q", "r")
print(x, y)
local t = {to_three(1, 2)}
print(#t, t[1], t[2], t[3])
-- a frame with varargs handing over to one without, then reading `...` again upstream
local function outer(...)
  local n = select("#", ...)
  local function inner(k) return k * 10 end
  local r = inner(n)
  return r, ...
end
local function vtail(...) return outer(...) end
print(vtail(1, 2, 3))
-- upvalues of the caller's locals are closed before the callee reuses the frame
local fs = {}
local function mk(i) local v = i * 2; fs[#fs + 1] = function() return v end; return three(v, i) end
for i = 1, 3 do print(mk(i)) end
for _, f in ipairs(fs) do io.write(f(), " ") end
print()
local function capture_then_tail(n)
  local c = n
  local get = function() return c end
  if n == 0 then return get end
  return capture_then_tail(n - 1)
end
print(capture_then_tail(5)())
-- mutual recursion by tail calls, deep
local even, odd
function even(n) if n == 0 then return true end return odd(n - 1) end
function odd(n) if n == 0 then return false end return even(n - 1) end
print(even(300001), odd(300001))
-- into natives and through __call
local function tnative(s) return string.upper(s) end
print(tnative("abc"))
local function tselect(...) return select(2, ...) end
print(tselect("a", "b", "c"))
local callable = setmetatable({}, {__call = function(self, a, b) return a + b, self ~= nil end})
local function tcall(a) return callable(a, 1) end
print(tcall(41))
-- under pcall, and an error raised in the tail-called function
local function boom(n) if n == 0 then error("boom at zero") end return boom(n - 1) end
print(pcall(boom, 10))
local function tail_to_bad() return (nil)() end
print(pcall(tail_to_bad))
local function tail_arith(a) return three(a + 1) end
print(pcall(tail_arith, {}))
print(pcall(function() return to_three(1, 2, 3) end))
