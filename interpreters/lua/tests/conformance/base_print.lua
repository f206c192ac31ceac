print()
print(nil)
print(1, nil, 3)
print("a", "b")
print(true, false)
print(1, 1.5, "s", nil, false)
local mt = {__tostring = function() return "custom" end}
print(setmetatable({}, mt), 1)
