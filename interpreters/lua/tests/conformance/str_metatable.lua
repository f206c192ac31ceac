-- the string metatable gives method syntax; indexing a string works
local s = "Lua"
print(s:len(), s:upper(), ("%d-%d"):format(1, 2))
print(getmetatable("").__index == string)
print(("abc").len == string.len, #string)
local mt = getmetatable("x")
string.twice = function(str) return str .. str end
print(("ab"):twice())
print(s.nonexistent)
print(("5") + 1, "3" * "4")
