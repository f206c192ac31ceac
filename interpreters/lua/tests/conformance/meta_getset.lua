local t = {}
local mt = {}
print(getmetatable(t), setmetatable(t, mt) == t, getmetatable(t) == mt)
print(setmetatable(t, nil) == t, getmetatable(t))
local guarded = setmetatable({}, {__metatable = "locked"})
print(getmetatable(guarded))
print(pcall(setmetatable, guarded, {}))
print(pcall(setmetatable, 1, {}))
print(pcall(setmetatable, {}, 1))
print(getmetatable("abc") == getmetatable("x"), getmetatable(1), getmetatable(nil))
