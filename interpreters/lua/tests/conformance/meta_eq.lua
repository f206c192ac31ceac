local mt = {__eq = function(a, b) return a.id == b.id end}
local a = setmetatable({id = 1}, mt)
local b = setmetatable({id = 1}, mt)
local c = setmetatable({id = 2}, mt)
print(a == b, a ~= b, a == c, rawequal(a, b))
local plain = {id = 1}
print(a == plain, plain == a)
-- __eq is not called for different types or primitive values
print(a == 1, a == "x")
local res = setmetatable({}, {__eq = function() return 1 end})
print(res == setmetatable({}, {}))
