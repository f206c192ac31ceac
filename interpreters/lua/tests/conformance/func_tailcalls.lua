-- proper tail calls do not grow the stack
local function loop(n, acc) if n == 0 then return acc end return loop(n - 1, acc + 1) end
print(loop(200000, 0))
local function a(n) if n == 0 then return "a" end return (function(m) return a(m) end)(n - 1) end
print(a(10))
local t = {}
function t.f(n) if n == 0 then return "done" end return t.f(n - 1) end
print(t.f(100000))
