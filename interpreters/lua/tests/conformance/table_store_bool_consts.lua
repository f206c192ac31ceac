-- `true` and `false` stored as constants (no register in between): into array slots, the hash
-- part, fields, globals and constructors, through __newindex, and the errors on such stores.
local t = {}
for i = 1, 5 do t[i] = false end
t[3] = true
print(#t, t[1], t[3], t[5])
t.flag = true; t["other"] = false; t[2.0] = true; t[-1] = false
print(t.flag, t.other, t[2], t[-1])
g_flag = true; print(g_flag); g_flag = false; print(g_flag)
local c = {a = true, b = false, [1] = true, [10] = false, true, false}
print(c.a, c.b, c[1], c[2], c[10], #c)
local seen = {}
local p = setmetatable({}, {__newindex = function(_, k, v) seen[#seen + 1] = tostring(k) .. "=" .. tostring(v) end})
p.x = true; p[1] = false; p.y = false
print(table.concat(seen, " "), rawget(p, "x"))
local q = {x = 1}
local up = {}
local function setup() up[1] = true; up.k = false end
setup()
print(up[1], up.k, q.x == true)
for _, f in ipairs({
  function() local n = nil; n.x = true end,
  function() local n = nil; n[1] = false end,
  function() local s = "str"; s.x = true end,
  function() local tt = {}; tt[nil] = true end,
  function() local tt = {}; tt[0/0] = false end,
}) do
  print(pcall(f))
end
-- multiple assignment: literals stored into fields and globals straight from constants, mixed
-- with locals, upvalues and calls, with fewer and more values than targets
local a, b = {}, {}
local order = {}
local function v(x) order[#order + 1] = x; return x end
a[1], a.s, b[v(2)], gm1, b.n = true, "str", 3.5, false, v(7)
print(a[1], a.s, b[2], gm1, b.n, table.concat(order, ","))
local l1, up1
local function f() up1, a.x, l1, b.y = false, 10, true, "y" end
f()
print(up1, a.x, l1, b.y)
a.p, a.q, a.r = 1, 2
print(a.p, a.q, a.r)
a.p, a.q = true, false, v(9), "extra"
print(a.p, a.q, table.concat(order, ","))
local i = 1
i, a[i] = i + 1, true
print(i, a[1], a[2])
a[1], a[1] = false, true
print(a[1])
local function two() return "m1", "m2" end
a.u, a.w, a.z = false, two()
print(a.u, a.w, a.z)
print(pcall(function() local n; a.k, n.k = true, false end))
