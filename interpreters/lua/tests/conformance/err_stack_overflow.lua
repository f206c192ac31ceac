-- unbounded recursion is a Lua error ("stack overflow"), caught by pcall, never a crash
local function f(n) return 1 + f(n + 1) end
local ok, e = pcall(f, 1)
print(ok, type(e), e:match("stack overflow") ~= nil)
local depth = 0
local function g() depth = depth + 1 g() end
ok, e = pcall(g)
print(ok, depth > 1000, e:match("stack overflow") ~= nil)
local t = setmetatable({}, {})
getmetatable(t).__index = function(tbl, k) return tbl[k] end
ok, e = pcall(function() return t.x end)
print(ok, e:match("stack overflow") ~= nil)
-- the interpreter still works afterwards
print(select("#", pcall(f, 1)), (function() return "alive" end)())
