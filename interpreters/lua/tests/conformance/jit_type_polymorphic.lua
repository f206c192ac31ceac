-- one hot loop sees integers, floats, strings and tables
local vals = {1, 2.5, "3", 4, 5.0, "6.5"}
local s = 0
for i = 1, 600 do s = s + vals[(i % #vals) + 1] end
print(s, math.type(s))
local parts = {}
for i = 1, 200 do
  local v = vals[(i % #vals) + 1]
  parts[#parts + 1] = type(v) == "string" and v or tostring(v)
end
print(#table.concat(parts))
local kinds = {}
for i = 1, 300 do local v = (i % 2 == 0) and i or i + 0.0 kinds[math.type(v)] = (kinds[math.type(v)] or 0) + 1 end
print(kinds.integer, kinds.float)
