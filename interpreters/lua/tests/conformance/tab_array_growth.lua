local t = {}
for i = 1, 10000 do t[i] = i * 2 end
print(#t, t[1], t[5000], t[10000])
local s = 0
for i = 1, #t do s = s + t[i] end
print(s)
local r = {}
for i = 100, 1, -1 do r[i] = i end
print(#r, r[1], r[100])
local sparse = {}
sparse[1000000] = 1
print(sparse[1000000], sparse[999999])
