-- integer loops near the limits do not overflow (5.4 precomputes the count)
local maxi, mini = math.maxinteger, math.mininteger
local c = 0
for i = maxi - 2, maxi do c = c + 1 end print(c)
c = 0
for i = mini, mini + 2 do c = c + 1 end print(c)
c = 0
for i = mini + 2, mini, -1 do c = c + 1 end print(c)
c = 0
for i = maxi - 10, maxi, 4 do c = c + 1; io.write(i - maxi, " ") end print(c)
c = 0
for i = 1, maxi, maxi do c = c + 1 end print(c)
c = 0
for i = mini, maxi, maxi do c = c + 1 end print(c)
c = 0
for i = maxi, mini, mini do c = c + 1 end print(c)
-- float limit clipped to integers
c = 0
for i = maxi - 1, 1e100 do c = c + 1 end print(c)
c = 0
for i = 1, -1e100 do c = c + 1 end print(c)
c = 0
for i = mini + 1, -1e100, -1 do c = c + 1 end print(c)
for i = 1, 2.9 do io.write(i, " ") end print()
for i = -1, -2.9, -1 do io.write(i, " ") end print()
