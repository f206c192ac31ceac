local obj = {name = "obj", n = 0}
function obj:inc(k) self.n = self.n + (k or 1) return self end
function obj.static(x) return x * 2 end
obj:inc():inc(5)
print(obj.n, obj.static(21))
print(obj.inc(obj, 10).n)
local s = "hello"
print(s:upper(), ("x"):rep(3), s:sub(2, 3))
local a = {b = {c = {}}}
function a.b.c:m() return self == a.b.c end
function a.b.c.f() return "f" end
print(a.b.c:m(), a.b.c.f())
local function retobj() return obj end
print(retobj():inc().n)
