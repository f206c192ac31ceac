print(1 .. "", 1.0 .. "", -1 .. "", 1e100 .. "", 2^63 .. "", math.mininteger .. "")
print(pcall(function() return "a" .. nil end))
print(pcall(function() return "a" .. {} end))
print(pcall(function() return true .. "" end))
local t = {}
for i = 1, 5 do t[#t + 1] = i .. "," end
print(table.concat(t))
