-- Field reads and writes by constant string keys (`t.x`, `t.x = v`, `o:m()`, globals) at one
-- instruction over tables of different layouts, while keys are removed, added back, compacted
-- away, and held by equal strings built at run time.
local function getx(t) return t.x end
local function setx(t, v) t.x = v end
local layouts = {
  {x = 1}, {a = 1, x = 2}, {a = 1, b = 2, c = 3, x = 3}, {y = 0},
  {a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i = 9, x = 4},
}
for round = 1, 3 do
  local out = {}
  for i, t in ipairs(layouts) do out[#out + 1] = tostring(getx(t)) end
  print(round, table.concat(out, " "))
end
-- removal and re-insertion at another position
local t = {x = 1, y = 2, z = 3}
print(getx(t)); t.x = nil; print(getx(t)); setx(t, 10); print(getx(t), t.y, t.z)
-- many removals so that the hash part is compacted (positions move)
local big = {}
for i = 1, 40 do big["k" .. i] = i end
big.x = "bx"
print(getx(big))
for i = 1, 40 do big["k" .. i] = nil end
print(getx(big))
for i = 1, 40 do big["n" .. i] = i end
print(getx(big), big.n1, big.n40)
setx(big, "bx2"); print(getx(big))
-- a key built at run time (not the constant's string object) that equals the constant
local k = string.rep("x", 1) .. ""
local ky = ("y"):rep(2)
local u = {}
u[ky] = "built"
print(u.yy)
u.yy = "const"
print(u[ky], u.yy)
local w = {}
w[k] = 5
print(getx(w)); setx(w, 6); print(w[k])
-- methods through an __index chain, with fields shadowing them
local A = {}; A.__index = A
function A:who() return "A" end
function A:val() return self.v end
local B = setmetatable({}, A); B.__index = B
function B:who() return "B" end
local objs = {setmetatable({v = 1}, A), setmetatable({v = 2}, B), setmetatable({v = 3, who = function() return "own" end}, B)}
for round = 1, 2 do
  for _, o in ipairs(objs) do io.write(o:who(), o:val(), " ") end
  print()
end
B.who = nil
for _, o in ipairs(objs) do io.write(o:who(), " ") end
print()
-- __newindex on a key absent then present
local log = {}
local mt = {__newindex = function(t, k, v) log[#log + 1] = k; rawset(t, k, v) end}
local p = setmetatable({}, mt)
for i = 1, 3 do setx(p, i) end
print(p.x, #log)
p.x = nil; setx(p, 7)
print(p.x, #log)
-- globals read and written in a loop, removed and defined again
g1 = 1
local s = 0
for i = 1, 5 do s = s + g1; g1 = g1 + 1 end
print(s, g1)
g1 = nil
print(g1)
g1 = 3
print(g1)
