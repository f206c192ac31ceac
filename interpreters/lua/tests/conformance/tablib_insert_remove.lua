local t = {}
table.insert(t, "a"); table.insert(t, "b"); table.insert(t, 1, "z"); table.insert(t, 2, "y")
print(table.concat(t, ","), #t)
print(table.remove(t), table.concat(t, ","))
print(table.remove(t, 1), table.concat(t, ","))
print(table.remove({}), table.remove({}, 0), #t)
print(pcall(table.insert, t, 10, "x"))
print(pcall(table.insert, t, 1, 2, 3))
local u = {1, 2, 3}
print(table.remove(u, #u + 1), #u)
table.insert(u, #u + 1, 4)
print(table.concat(u, " "))
print(pcall(table.remove, u, 7))
