local t = {10, 20, 30}
print(next(t))
print(next(t, 1))
print(next(t, 3))
print(next({}))
print(pcall(next, t, "nokey"))
local count = 0
local k, v = next(t)
while k do count = count + v; k, v = next(t, k) end
print(count)
-- clearing fields during traversal is allowed
local h = {}
for i = 1, 20 do h[i * 7] = i end
for k in pairs(h) do h[k] = nil end
print(next(h))
