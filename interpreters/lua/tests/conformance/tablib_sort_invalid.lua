-- an inconsistent comparator raises "invalid order function for sorting" (for large enough input)
local t = {}
for i = 1, 100 do t[i] = (i * 37) % 101 end
local ok, e = pcall(table.sort, t, function(a, b) return true end)
print(ok, e)
