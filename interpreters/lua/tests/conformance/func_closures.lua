-- counters and shared upvalues
local function counter()
  local n = 0
  return function() n = n + 1 return n end, function() return n end
end
local inc, get = counter()
inc() inc()
print(get())
local inc2 = counter()
inc2()
print(get(), inc2())
local function mk()
  local v = 1
  local function set(x) v = x end
  local function read() return v end
  return set, read
end
local s, r = mk()
s(42) print(r())
-- nested upvalues through several levels
local function outer()
  local a = 1
  return function()
    local b = 2
    return function() a = a + 1; b = b + 1; return a + b end
  end
end
local mid = outer()
local in1, in2 = mid(), mid()
print(in1(), in1(), in2())
-- upvalue of a loop local after the loop ended
local saved
for i = 1, 2 do local x = i * 100 if i == 2 then saved = function() x = x + 1 return x end end end
print(saved(), saved())
