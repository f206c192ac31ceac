-- Hash parts of up to 8 string keys have no index (searched along the entries): growing past
-- 8 keys, a first key that is not a string, keys built at run time, removal and compaction.
local function dump(t)
  local ks = {}
  for k, v in pairs(t) do ks[#ks + 1] = tostring(k) .. "=" .. tostring(v) end
  table.sort(ks)
  return table.concat(ks, " ")
end
local t = {}
for i = 1, 12 do
  t["k" .. i] = i             -- built at run time (not interned)
  print(i, t["k" .. i], t.k1, t["k" .. (i + 1)])
end
print(dump(t))
local u = {a = 1, b = 2}
u[0] = "zero"; u[2.5] = "f"; u[true] = "t"
print(u.a, u.b, u[0], u[2.5], u[true], u[false], u[1])
for i = 1, 20 do u["x" .. i] = i end
for i = 1, 20, 2 do u["x" .. i] = nil end
print(dump(u))
for i = 1, 20 do u["x" .. i] = nil end
print(dump(u))
local s = {}
for r = 1, 5 do
  for i = 1, 9 do s["f" .. i] = r * i end
  for i = 1, 9 do s["f" .. i] = nil end
  s.q = r
end
print(dump(s), next(s))
local v = {x = 1}
v[string.rep("x", 1)] = 5
print(v.x, v["x"], #dump(v))
local w = {}
for i = 1, 8 do w[string.char(96 + i)] = i end
w[0] = 0
print(dump(w), w[0], w.h)
w[0] = nil
for i = 1, 8 do w[string.char(96 + i)] = nil end
print(dump(w), next(w))
w.z = 26; w[-1] = -1
print(dump(w), w[-1], w.z)
local m = setmetatable({}, {__index = function(_, k) return "mm:" .. tostring(k) end})
for i = 1, 10 do m["p" .. i] = i end
print(m.p3, m.p10, m.p11, m[5])
