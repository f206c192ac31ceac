-- many hash keys; iterate in sorted order for determinism
local t = {}
for i = 1, 50 do t["k" .. i] = i end
for i = 1, 50, 2 do t["k" .. i] = nil end
local keys = {}
for k, v in pairs(t) do keys[#keys + 1] = k end
table.sort(keys)
print(#keys, keys[1], keys[#keys])
local sum = 0
for _, k in ipairs(keys) do sum = sum + t[k] end
print(sum)
local mixed = {1, 2, 3, a = 1, b = 2, [3.5] = 3}
local n = 0
for k, v in pairs(mixed) do n = n + v end
print(n)
