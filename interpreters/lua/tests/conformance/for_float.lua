-- a float in start or step makes a float loop
for i = 1.0, 3 do io.write(i, " ", math.type(i), " ") end print()
for i = 1, 2, 0.5 do io.write(i, " ") end print()
for i = 0.1, 0.35, 0.1 do io.write(string.format("%.2f ", i)) end print()
for i = 1, 3.5 do io.write(i, " ", math.type(i), " ") end print()
for i = 3, 1.5, -0.5 do io.write(i, " ") end print()
local c = 0
for i = 0, 1, 0.25 do c = c + 1 end print(c)
for i = 1, math.huge do if i > 3 then break end io.write(i, " ") end print()
for i = -1, -math.huge, -1 do if i < -3 then break end io.write(i, " ") end print()
