-- any value can be an error object
local ok, e = pcall(error, {code = 42})
print(ok, type(e), e.code)
print(pcall(error, 42))
print(pcall(error, 4.5))
print(pcall(error, true))
ok, e = pcall(error, setmetatable({}, {__tostring = function() return "E!" end}))
print(ok, tostring(e))
local function thrower() error({msg = "deep"}) end
ok, e = pcall(function() thrower() end)
print(ok, e.msg)
-- errors with numbers get no position
print(pcall(function() error(7) end))
