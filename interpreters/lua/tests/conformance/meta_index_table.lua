local base = {greet = "hi", n = 1}
local obj = setmetatable({}, {__index = base})
print(obj.greet, obj.n, obj.missing, rawget(obj, "greet"))
obj.n = 5
print(obj.n, base.n)
local chain = setmetatable({}, {__index = setmetatable({}, {__index = {deep = "deep"}})})
print(chain.deep)
