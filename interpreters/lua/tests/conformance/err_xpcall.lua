local function handler(e) return "handled: " .. tostring(e) end
print(xpcall(function() error("boom") end, handler))
print(xpcall(function() return 1, 2 end, handler))
print(xpcall(function(a, b) return a + b end, handler, 3, 4))
print(xpcall(error, function(e) return type(e) end, {}))
print(xpcall(function() local t = nil; return t.x end, function(m) return "H:" .. m end))
local ok, e = xpcall(function() error({1, 2}) end, function(e) return #e end)
print(ok, e)
print(pcall(xpcall))
