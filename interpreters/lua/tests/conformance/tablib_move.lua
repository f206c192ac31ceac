local a = {1, 2, 3, 4, 5}
table.move(a, 2, 4, 1) print(table.concat(a, ","))
local b = {1, 2, 3, 4, 5}
table.move(b, 1, 3, 3) print(table.concat(b, ","))
local c = table.move({1, 2, 3}, 1, 3, 2, {}) print(c[1], c[2], c[3], c[4])
local d = table.move({1, 2}, 1, 0, 1, {9}) print(d[1], #d)
print(pcall(table.move, {}, 1, math.maxinteger, 2))
