-- a metamethod swapped while a loop runs hot
local mt = {__add = function(a, b) return a.v + b end}
local o = setmetatable({v = 1}, mt)
local s = 0
for i = 1, 300 do
  if i == 150 then mt.__add = function(a, b) return a.v * b end end
  s = s + (o + i)
end
print(s)
local idx = {}
local obj = setmetatable({}, {__index = idx})
local n = 0
for i = 1, 300 do
  if i == 100 then idx.val = 5 end
  if i == 200 then rawset(obj, "val", 1) end
  n = n + (obj.val or 0)
end
print(n)
