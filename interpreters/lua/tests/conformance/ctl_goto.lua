-- goto forward, backward, continue idiom, nested loops
local i = 1
::top::
if i <= 3 then io.write(i, " ") i = i + 1 goto top end
print()
for j = 1, 5 do
  if j % 2 == 0 then goto continue end
  io.write(j, " ")
  ::continue::
end
print()
for a = 1, 3 do
  for b = 1, 3 do
    if a * b == 4 then goto out end
  end
end
::out::
print("out")
do goto skip; print("skipped") ::skip:: end
print("end")
-- each iteration gets a fresh local after a backward goto
local fs = {}
do
  local k = 1
  ::again::
  local x = k * 10
  fs[#fs + 1] = function() return x end
  k = k + 1
  if k <= 3 then goto again end
end
print(fs[1](), fs[2](), fs[3]())
