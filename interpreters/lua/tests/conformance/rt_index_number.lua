print("before")
local n = 5
print(n.field)
