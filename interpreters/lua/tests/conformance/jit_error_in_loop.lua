-- errors raised from inside hot loops are caught correctly
local function risky(i) if i == 777 then error("fail at " .. i, 0) end return i end
local s = 0
local ok, e = pcall(function() for i = 1, 1000 do s = s + risky(i) end end)
print(ok, e, s)
local caught = 0
for i = 1, 500 do
  local ok2 = pcall(function() if i % 50 == 0 then error("x") end end)
  if not ok2 then caught = caught + 1 end
end
print(caught)
local t = {}
local ok3, e3 = pcall(function() for i = 1, 400 do t[i] = i if i == 350 then return t.nope.x end end end)
print(ok3, e3)
