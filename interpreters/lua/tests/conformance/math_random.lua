-- only properties of random numbers, never values
math.randomseed(42)
local ok = true
for i = 1, 1000 do local r = math.random() if r < 0 or r >= 1 then ok = false end end
print("float range", ok)
ok = true
for i = 1, 1000 do local r = math.random(10) if r < 1 or r > 10 or math.type(r) ~= "integer" then ok = false end end
print("1..10", ok)
ok = true
local seen = {}
for i = 1, 1000 do local r = math.random(-3, 3) seen[r] = true if r < -3 or r > 3 then ok = false end end
local n = 0 for k in pairs(seen) do n = n + 1 end
print("-3..3", ok, n)
print(math.random(5, 5), math.type(math.random(1 << 40)))
math.randomseed(7) local a = {math.random(1000), math.random(1000), math.random(1000)}
math.randomseed(7) local b = {math.random(1000), math.random(1000), math.random(1000)}
print("same seed same sequence", a[1] == b[1] and a[2] == b[2] and a[3] == b[3])
print(pcall(math.random, 2, 1))
print(pcall(math.random, 1, 2, 3))
print(math.type(math.random(0)))
