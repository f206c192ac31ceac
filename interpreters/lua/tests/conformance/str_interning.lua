-- strings are values: equal content, equal keys
local a = "ab" .. "cd"
local b = "abcd"
print(a == b, rawequal(a, b))
local t = {}
t[a] = 1
print(t[b], t["ab" .. "cd"])
local parts = {}
for i = 1, 100 do parts[i] = tostring(i) end
local big = table.concat(parts)
print(#big, big:sub(1, 20), big == table.concat(parts))
print(("x"):rep(1000) == ("x"):rep(500) .. ("x"):rep(500))
