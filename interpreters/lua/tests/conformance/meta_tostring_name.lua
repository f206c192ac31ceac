local P = {__tostring = function(p) return "Point" end, __name = "PointType"}
local p = setmetatable({}, P)
print(tostring(p), p)
local bad = setmetatable({}, {__tostring = function() return 1 end})
print(pcall(tostring, bad))
local Q = setmetatable({}, {__name = "QType"})
print(pcall(function() return Q + 1 end))
print((tostring(Q):match("^QType: ")))
