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
