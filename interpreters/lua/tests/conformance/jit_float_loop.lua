local x, y = 0.0, 1.0
for i = 1, 1000 do x, y = y, x + y * 0.5 end
print(string.format("%.6e %.6e", x, y))
local s = 0.0
for i = 1.0, 100.0, 0.5 do s = s + i end
print(s)
local z = 1.0
for i = 1, 2000 do z = z * 1.0001 end
print(string.format("%.10f", z))
local h = 0
for i = 1, 1000 do h = h + math.sin(i) * math.cos(i) end
print(string.format("%.8f", h))
