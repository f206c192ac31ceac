local t = {5, 2, 8, 1, 9, 3, 7}
table.sort(t) print(table.concat(t, " "))
table.sort(t, function(a, b) return a > b end) print(table.concat(t, " "))
local words = {"pear", "Apple", "fig", "banana"}
table.sort(words) print(table.concat(words, " "))
table.sort(words, function(a, b) return #a < #b end) print(words[1], words[4])
local recs = {{n = "b", v = 2}, {n = "a", v = 3}, {n = "c", v = 1}}
table.sort(recs, function(x, y) return x.v < y.v end)
print(recs[1].n, recs[2].n, recs[3].n)
local big = {}
for i = 1, 500 do big[i] = (i * 7919) % 503 end
table.sort(big)
local ok = true
for i = 2, #big do if big[i - 1] > big[i] then ok = false end end
print(ok, big[1], big[500])
local sok, serr = pcall(table.sort, {1, "x", 2})
print(sok, (serr:gsub("string with number", "X"):gsub("number with string", "X")))
local mixed = {3, 1.5, 2, -1}
table.sort(mixed) print(table.concat(mixed, " "))
table.sort({}) table.sort({1})
print("empty ok")
