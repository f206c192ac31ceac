local t = {}
for i = 1, 2000 do t[#t + 1] = i end
print(#t, t[2000])
local q = {}
for i = 1, 1000 do table.insert(q, i) end
local s = 0
while #q > 0 do s = s + table.remove(q) end
print(s)
local h = {}
for i = 1, 500 do h["k" .. (i % 50)] = (h["k" .. (i % 50)] or 0) + i end
print(h.k0, h.k49)
local sparse = {}
for i = 1, 500 do sparse[i * 3] = i end
local c = 0
for k, v in pairs(sparse) do c = c + v end
print(c)
