local calls = 0
local t = setmetatable({a = 1}, {__index = function(tbl, k) calls = calls + 1 return k .. "!" end})
print(t.a, t.b, t[1], calls)
local fib = setmetatable({[0] = 0, [1] = 1}, {__index = function(f, n) local v = f[n - 1] + f[n - 2]; f[n] = v; return v end})
print(fib[50], fib[80])
