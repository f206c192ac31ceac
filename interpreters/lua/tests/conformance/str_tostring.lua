print(tostring(12), tostring(1.25), tostring(nil), tostring(false), tostring("x"))
print(type(tostring({})), tostring({}):sub(1, 6), tostring(print):sub(1, 9))
print(tostring(-0.0), tostring(1e100), tostring(2^63), tostring(-2^63))
local mt = {__tostring = function(t) return "T(" .. t.v .. ")" end}
print(tostring(setmetatable({v = 5}, mt)))
print(setmetatable({v = 6}, mt))
local named = setmetatable({}, {__name = "MyType"})
print((tostring(named):gsub("0x%x+", "ADDR"):gsub(": [%x]+$", ": ADDR")))
print(pcall(tostring))
