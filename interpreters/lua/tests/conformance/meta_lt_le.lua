local mt = {}
mt.__lt = function(a, b) return a.v < b.v end
mt.__le = function(a, b) return a.v <= b.v end
local function n(v) return setmetatable({v = v}, mt) end
print(n(1) < n(2), n(2) < n(1), n(1) <= n(1), n(2) > n(1), n(1) >= n(2))
local only_lt = {__lt = function(a, b) return a.v < b.v end}
local x, y = setmetatable({v = 1}, only_lt), setmetatable({v = 2}, only_lt)
print(x < y, y < x)
print(pcall(function() return n(1) < 5 end))
local mixed = setmetatable({}, {__lt = function(a, b) return type(a) == "number" end})
print(5 < mixed, mixed < 5)
