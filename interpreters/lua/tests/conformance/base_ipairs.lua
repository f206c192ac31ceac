local t = {1, 2, 3, nil, 5}
local n = 0
for i, v in ipairs(t) do n = i end
print(n)
local proxy = setmetatable({}, {__index = function(_, i) if i <= 4 then return i * 10 end end})
for i, v in ipairs(proxy) do io.write(i, "=", v, " ") end print()
local f, s, c = ipairs({})
print(type(f), type(s), c)
print(pcall(ipairs))
