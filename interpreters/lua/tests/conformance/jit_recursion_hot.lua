local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print(fib(22))
local function sum(t, i) if i > #t then return 0 end return t[i] + sum(t, i + 1) end
local t = {} for i = 1, 150 do t[i] = i end
print(sum(t, 1))
local function tak(x, y, z) if y >= x then return z end return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y)) end
print(tak(12, 6, 0))
