-- Tables filled in orders that move keys between the array part and the hash part: odd keys
-- then even keys, top down, a queue that slides through the keys (its array part shrinks),
-- and a queue refilled from key 1. Loops are hot, so traced code stores too.
local function sum(t)
  local s, c = 0, 0
  for k, v in pairs(t) do s = s + k * 3 + v; c = c + 1 end
  return s, c
end

local t = {}
for i = 1, 3000, 2 do t[i] = i end
print("odd", sum(t))
for i = 2, 3000, 2 do t[i] = -i end
print("odd+even", #t, sum(t))

local u = {}
for i = 2000, 1, -1 do u[i] = i * 2 end
print("topdown", #u, sum(u))

local q, head, tail = {}, 1, 0
for i = 1, 5000 do
  tail = tail + 1; q[tail] = i
  if tail - head >= 100 then q[head] = nil; head = head + 1 end
end
print("queue", head, tail, sum(q))
local s = 0
for i = head, tail do s = s + q[i] end
print("queue items", s, q[head - 1], q[tail + 1])
-- empty it, then fill it again from key 1
for i = head, tail do q[i] = nil end
print("emptied", next(q), #q)
for i = 1, 300 do q[i] = i end
print("refilled", #q, sum(q))
for i = 300, 1, -1 do q[i] = nil end
print("cleared", next(q), #q)
