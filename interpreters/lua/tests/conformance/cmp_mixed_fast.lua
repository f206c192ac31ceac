-- Comparisons of an integer with a float, which the dispatch loop runs inline: exact at
-- the edges (2^53, 2^63, -2^63), NaN, infinities, constants on either side, loops that test
-- a float against an integer constant.
local ints = { 0, 1, -1, 3, 2^53 // 1, (2^53 // 1) + 1, math.maxinteger, math.mininteger,
  math.maxinteger - 1, math.mininteger + 1 }
local floats = { 0.0, -0.0, 0.5, -0.5, 3.0, 2.0^53, 2.0^53 + 2, 2.0^63, -2.0^63, 1/0, -1/0,
  0/0, 9007199254740993.0, -9007199254740993.0, math.maxinteger + 0.0 }
local lines = {}
for _, i in ipairs(ints) do
  local row = {}
  for _, f in ipairs(floats) do
    row[#row + 1] = (i < f and 'a' or '-') .. (i <= f and 'b' or '-') .. (f < i and 'c' or '-')
      .. (f <= i and 'd' or '-') .. (i == f and 'e' or '-') .. (f > i and 'f' or '-')
      .. (f >= i and 'g' or '-') .. (i > f and 'h' or '-') .. (i >= f and 'i' or '-')
  end
  lines[#lines + 1] = table.concat(row, ' ')
end
print(table.concat(lines, '\n'))

-- constants on either side
local x = 4.5
print(x > 4, x < 5, 4 < x, 5 <= x, x >= 4, x <= 4)
local n = 0
for i = 1, 100 do
  local f = i / 10
  if f > 4 then n = n + 1 end
  if 7 <= f then n = n + 100 end
  if f < 2 then n = n + 10000 end
end
print(n)
local z = 0.0
while z < 10 do z = z + 0.75 end
print(z)
