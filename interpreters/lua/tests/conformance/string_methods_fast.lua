-- String methods through `s:m()` and `s.m`, which the dispatch loop finds from the strings'
-- metatable inline: added methods, a missing method, and the metatable's `__index` changed to
-- another table, to a function, and removed.
local s = 'Hello'
print(s:upper(), s:len(), s:sub(2, 3), s:rep(2, '-'), ('x'):byte(), s.len == string.len)
function string.twice(x) return x .. x end
print(s:twice(), ('ab'):twice():upper())
print(pcall(function() return s:nosuch() end))
print(pcall(function() return s.nosuch end))
local n = 0
for i = 1, 200 do n = n + ('abc'):len() + s:find('l') end
print(n)
local mt = getmetatable('')
local lib = mt.__index
mt.__index = { len = function() return 'replaced' end }
print(s:len(), s.upper)
mt.__index = function(str, k) return function() return 'fn:' .. k .. ':' .. str end end
print(s:anything(), s:len())
mt.__index = nil
print(pcall(function() return s:len() end))
print(pcall(function() return s.x end))
mt.__index = lib
print(s:lower(), #s, s:len())
