-- Closures: counters, composition and higher-order functions over shared upvalues.
-- Size: iterations (default 2000000).
local N = tonumber(arg and arg[1]) or 2000000
local function counter()
  local c = 0
  return function(d) c = c + d return c end
end
local function compose(f, g) return function(x) return f(g(x)) end end
local function map(t, f) local r = {} for i = 1, #t do r[i] = f(t[i]) end return r end
local function fold(t, f, acc) for i = 1, #t do acc = f(acc, t[i]) end return acc end
local inc = counter()
local add1 = function(x) return x + 1 end
local dbl = function(x) return x * 2 end
local h = compose(add1, compose(dbl, add1))
local total = 0
for i = 1, N do
  total = total + h(i % 100) + inc(1)
  local k = i % 7
  local adder = function(x) return x + k end
  total = total + adder(i) % 13
end
local data = {}
for i = 1, 100 do data[i] = i end
for _ = 1, math.floor(N / 100) do
  local m = map(data, function(x) return x * 3 % 17 end)
  total = total + fold(m, function(a, b) return a + b end, 0)
end
print(total % 1000000007, inc(0))
