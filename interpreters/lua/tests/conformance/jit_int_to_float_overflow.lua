-- a hot loop whose values change subtype mid-way
local x = 1
local acc = 0
for i = 1, 200 do
  if i == 100 then x = 1.5 end
  acc = acc + x * i
end
print(acc, math.type(acc))
local y = math.maxinteger - 100
for i = 1, 200 do y = y + 1 end
print(y, math.type(y))
local f = 0.0
for i = 1, 300 do f = f + 0.1 end
print(f, string.format("%.17g", f))
