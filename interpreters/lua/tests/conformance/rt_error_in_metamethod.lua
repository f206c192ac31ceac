local t = setmetatable({}, {__index = function(t, k) error("no field " .. k) end})
print(t.abc)
