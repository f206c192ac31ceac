-- generic for with ipairs, next, custom iterators and stateless iterators
for i, v in ipairs({"a", "b", "c"}) do io.write(i, v, " ") end print()
for i, v in ipairs({1, 2, nil, 4}) do io.write(i, " ") end print()
local function range(n)
  local i = 0
  return function() i = i + 1; if i <= n then return i end end
end
for v in range(4) do io.write(v, " ") end print()
local function iter(s, c) if c < s then return c + 1, c * c end end
for a, b in iter, 3, 0 do io.write(a, "/", b, " ") end print()
local keys = {}
for k in next, {x = 1, y = 2, z = 3} do keys[#keys + 1] = k end
table.sort(keys) print(table.concat(keys, ","))
local t = {10, 20, 30}
local sum = 0
for k, v in pairs(t) do sum = sum + k * v end print(sum)
-- closing value (4th) accepted
for i in function(_, c) c = (c or 0) + 1; if c < 3 then return c end end, nil, nil, nil do io.write(i, " ") end print()
