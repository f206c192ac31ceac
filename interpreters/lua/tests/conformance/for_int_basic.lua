for i = 1, 5 do io.write(i, " ") end print()
for i = 5, 1, -1 do io.write(i, " ") end print()
for i = 1, 10, 3 do io.write(i, " ") end print()
for i = 10, 1, -4 do io.write(i, " ") end print()
for i = 1, 0 do print("never") end
for i = 3, 3 do print("once", i, math.type(i)) end
local n = 0
for i = 1, 100 do n = n + i end print(n)
-- the loop variable is a copy
for i = 1, 3 do local j = i; i = i * 10; io.write(i, ":", j, " ") end print()
