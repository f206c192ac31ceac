-- integer division and modulo by zero raise errors, float ones do not
-- (positions are stripped: PUC 5.4.4 reports a stale line for these errors)
local function msg(f) local ok, e = pcall(f) return ok, (tostring(e):gsub("^[^:]*:%d+: ", "")) end
print(msg(function() return 1 // 0 end))
print(msg(function() return 1 % 0 end))
print(1 // 0.0, -1 // 0.0, 1.0 % 0 ~= 1.0 % 0)
print(0.0 / 0 ~= 0.0 / 0, 1 / 0)
local z = 0
print(msg(function() return 5 // z end))
print(msg(function() return 5 % z end))
print(msg(function() return math.mininteger // z end))
