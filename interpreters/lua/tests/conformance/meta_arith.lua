local V = {}
V.__index = V
local function vec(x, y) return setmetatable({x = x, y = y}, V) end
V.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
V.__sub = function(a, b) return vec(a.x - b.x, a.y - b.y) end
V.__mul = function(a, b) if type(a) == "number" then return vec(a * b.x, a * b.y) end return vec(a.x * b, a.y * b) end
V.__div = function(a, b) return vec(a.x / b, a.y / b) end
V.__mod = function(a, b) return vec(a.x % b, a.y % b) end
V.__pow = function(a, b) return vec(a.x ^ b, a.y ^ b) end
V.__unm = function(a) return vec(-a.x, -a.y) end
V.__idiv = function(a, b) return vec(a.x // b, a.y // b) end
V.__tostring = function(a) return "(" .. a.x .. "," .. a.y .. ")" end
local a, b = vec(1, 2), vec(3, 4)
print(tostring(a + b), tostring(a - b), tostring(a * 2), tostring(2 * a))
print(tostring(b / 2), tostring(b % 2), tostring(a ^ 2), tostring(-a), tostring(b // 2))
-- metamethod taken from the second operand
local n = setmetatable({}, {__add = function(x, y) return "right " .. type(x) .. " " .. type(y) end})
print(1 + n, n + 1, "s" + n)
print(pcall(function() return {} + 1 end))
