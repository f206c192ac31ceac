-- branches that flip late in a hot loop
local s = 0
for i = 1, 1000 do
  if i > 900 then s = s - i elseif i % 100 == 0 then s = s * 2 else s = s + 1 end
end
print(s)
local t = {}
for i = 1, 500 do t[i] = (i < 400) and i or tostring(i) end
local n, strs = 0, 0
for i = 1, 500 do
  local v = t[i]
  if type(v) == "number" then n = n + v else strs = strs + #v end
end
print(n, strs)
local x = 0
for i = 1, 500 do if i == 499 then x = x + 0.5 end x = x + 1 end
print(x)
