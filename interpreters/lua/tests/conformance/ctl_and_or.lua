-- short circuit and value results of and/or/not
print(1 and 2, nil and 1, false and nil, 1 or 2, nil or 2, false or nil)
print(not nil, not 0, not not "x")
local calls = 0
local function t() calls = calls + 1 return true end
local _ = false and t()
local _ = true or t()
print(calls)
local v = nil
print(v and v.x or "default")
print(1 == 1 and "yes" or "no", 1 == 2 and "yes" or "no")
print(false or false and true, (false or true) and false)
