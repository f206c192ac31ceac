-- # is a border; for sequences it is the count
print(#{}, #{1}, #{1, 2, 3}, #{n = 1})
local t = {}
for i = 1, 100 do t[i] = i end
print(#t)
t[#t] = nil
print(#t)
t[#t + 1] = "x"
print(#t, t[100])
local s = {1, 2, 3}
s[4] = 4; s[5] = 5
print(#s)
local big = {}
for i = 1, 1000 do big[i] = true end
for i = 1000, 501, -1 do big[i] = nil end
print(#big)
local h = {}
h[1] = 1; h[2] = 2; h[3] = 3
print(#h)
print(#"abc", #{"a", "b"})
