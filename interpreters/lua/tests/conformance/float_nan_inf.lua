-- NaN and infinity as PUC Lua prints them on x86-64 Linux (0/0 has its sign bit set there)
local z = 0
local nan = z / z
print(nan, -nan, math.huge - math.huge, -(math.huge - math.huge))
print(string.format("%f %g %.3f", 1 / z, -1 / z, 1 / z))
print(math.huge, -math.huge, 1e308 * 10, math.huge // 1, -math.huge % 2 ~= -math.huge % 2)
print(nan ~= nan, math.max(1, 2, math.huge), math.min(-math.huge, 0))
print(math.tointeger(math.huge), math.floor(-math.huge), math.fmod(1, math.huge))
