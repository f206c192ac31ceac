-- a global function redefined while a caller is hot
function step(x) return x + 1 end
local s = 0
for i = 1, 400 do
  if i == 200 then function step(x) return x + 100 end end
  s = step(s)
end
print(s)
K = 3
local t = 0
for i = 1, 300 do if i == 150 then K = 7 end t = t + K end
print(t)
