print("ok")
local s = "abc
print(s)
