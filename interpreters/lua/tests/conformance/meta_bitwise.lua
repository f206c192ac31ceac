local B = {}
local function b(v) return setmetatable({v = v}, B) end
B.__band = function(x, y) return "band" end
B.__bor = function(x, y) return "bor" end
B.__bxor = function(x, y) return "bxor" end
B.__shl = function(x, y) return "shl" end
B.__shr = function(x, y) return "shr" end
B.__bnot = function(x) return "bnot" end
local x = b(1)
print(x & 1, 1 | x, x ~ x, x << 1, 1 >> x, ~x)
print(pcall(function() return 1.5 & x end))
