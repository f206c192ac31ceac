local s = 0
for i = 1, 60 do
  for j = 1, 60 do
    if (i + j) % 3 == 0 then s = s + i * j elseif (i * j) % 5 == 0 then s = s - j else s = s + 1 end
  end
end
print(s)
local m = {}
for i = 1, 40 do m[i] = {} for j = 1, 40 do m[i][j] = (i * j) % 7 end end
local tr = 0
for k = 1, 40 do for i = 1, 40 do tr = tr + m[i][k] * m[k][i] end end
print(tr)
local w = 0
local i = 0
while i < 1000 do i = i + 1 local j = 0 repeat j = j + 1 w = w + (i ~ j) until j >= 3 end
print(w)
