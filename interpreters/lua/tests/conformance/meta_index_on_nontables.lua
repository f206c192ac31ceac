-- __index on the string metatable can be replaced, then restored
local mt = getmetatable("")
local old = mt.__index
mt.__index = function(s, k) if k == "first" then return s:sub(1, 1) end return old[k] end
print(("hello").first, ("abc"):upper())
mt.__index = old
print(("hello").first)
