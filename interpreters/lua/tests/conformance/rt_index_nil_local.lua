print("start")
local x
print(x.y)
