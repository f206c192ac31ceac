local grid = {}
for i = 1, 4 do grid[i] = {} for j = 1, 4 do grid[i][j] = i * j end end
local s = 0
for i = 1, 4 do for j = 1, 4 do s = s + grid[i][j] end end
print(s, grid[3][4], #grid, #grid[1])
local tree = {v = 1, kids = {{v = 2, kids = {}}, {v = 3, kids = {{v = 4, kids = {}}}}}}
local function total(n) local x = n.v for _, k in ipairs(n.kids) do x = x + total(k) end return x end
print(total(tree))
local a = {}
a.a = a
print(a.a.a.a == a)
