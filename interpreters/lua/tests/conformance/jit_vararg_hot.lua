local function sum(...) local s = 0 for i = 1, select("#", ...) do s = s + select(i, ...) end return s end
local t = 0
for i = 1, 400 do t = t + sum(i, i, i) end
print(t)
local function pass(...) return ... end
local c = 0
for i = 1, 400 do local a, b, d = pass(i, i * 2) c = c + a + b + (d or 0) end
print(c)
local function pk(...) return table.pack(...).n end
local n = 0
for i = 1, 300 do n = n + pk(1, nil, i % 3 == 0 and nil or 2) end
print(n)
