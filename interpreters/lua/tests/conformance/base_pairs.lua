local t = {10, 20, 30}
local sum = 0
for k, v in pairs(t) do sum = sum + k + v end
print(sum)
local mt = {__pairs = function(t) return function(_, k) if not k then return 1, "one" elseif k < 3 then return k + 1, "more" end end, t, nil end}
local p = setmetatable({}, mt)
for k, v in pairs(p) do io.write(k, v, " ") end print()
print(pcall(pairs))
local f = pairs({})
print(f == next)
