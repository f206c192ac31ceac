local function make(n) return function(x) return x + n end end
local fs = {}
for i = 1, 10 do fs[i] = make(i) end
local s = 0
for i = 1, 500 do s = fs[(i % 10) + 1](s) end
print(s)
local counter = 0
local function bump() counter = counter + 1 end
for i = 1, 1000 do bump() end
print(counter)
local acc = {}
for i = 1, 300 do local v = i acc[i] = function() v = v + 1 return v end end
local t = 0
for i = 1, 300 do t = t + acc[i]() + acc[i]() end
print(t)
