-- Call results used directly as operands (the compiler leaves a call's result in the
-- temporary it becomes), and the error messages that name (or do not name) them.
local function id(...) return ... end
local function two() return 1, 2 end
local function none() end
local t = {x = 5, f = function(self, a) return a * 2 end}
local function get() return t end

print(id(3) + id(4), id(3) - two(), two() * id(10))
print(id(2) ^ id(3), id(7) // two(), id(7) % id(4), id(7) / id(2))
print(get().x, get():f(21), get().f(nil, 4) + get():f(1))
print(id("a") .. id("b") .. two(), #id("hello"), -id(4), not none())
print(id(1) < id(2), id(2) <= two(), id("a") == id("a"), id(t) ~= get())
print((two()), select("#", two()), select("#", (two())))
local s = 0
for i = 1, 10 do s = s + id(i) * two() end
print(s)
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
print(fib(20))
-- nested calls as arguments and as table keys
local u = {}
u[id("k")] = id(1) + id(2)
u[id(1)] = get().x + get():f(id(3))
print(u.k, u[1], id(id(id(9))))
-- errors on call results: PUC Lua names no variable for them
for _, f in ipairs({
  function() return none() + 1 end,
  function() return none().x end,
  function() return 1 < none() end,
  function() return id({}) .. "x" end,
  function() return #none() end,
  function() return none()() end,
  function() return get():nomethod() end,
  function() return get().x.y.z end,
  function() local a = none() return a + 1 end,
}) do
  print(pcall(f))
end
