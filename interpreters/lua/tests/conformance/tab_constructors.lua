local t = {1, 2, 3, x = "x", ["y z"] = 5, [10] = 10, [1.0 + 1] = "two?"}
print(t[1], t[2], t[3], t.x, t["y z"], t[10], #t)
local u = {[1] = "a", "b"}
print(u[1])
local v = {"a", "b", [2] = "c"}
print(v[2])
local n = {n = {m = {1}}}
print(n.n.m[1])
local f = {function() return 1 end, (function() return 2, 3 end)()}
print(f[1](), f[2], f[3])
local e = {}
print(#e, next(e))
local trailing = {1, 2, 3,}
print(#trailing)
local keys = {[true] = "t", [false] = "f", [1.5] = "fl"}
print(keys[true], keys[false], keys[1.5])
