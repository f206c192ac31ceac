-- objects of different shapes through one hot site
local function getx(o) return o.x end
local objs = {}
for i = 1, 300 do
  local o
  if i % 3 == 0 then o = {x = i} elseif i % 3 == 1 then o = {y = 0, x = i} else o = {z = 1, y = 2, x = i} end
  objs[i] = o
end
local s = 0
for i = 1, 300 do s = s + getx(objs[i]) end
print(s)
for i = 1, 300, 7 do objs[i].x = nil end
s = 0
for i = 1, 300 do s = s + (getx(objs[i]) or -1) end
print(s)
