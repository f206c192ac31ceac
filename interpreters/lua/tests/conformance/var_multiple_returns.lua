-- adjustment of multiple results in every context
local function none() end
local function two() return 1, 2 end
print(two())
print(two(), 3)
print(3, two())
print((two()))
print(({two()})[2], #{two(), two()}, #{two(), (two())})
print(select("#", none()), select("#", none(), nil), select("#", two()))
local function pass(...) return ... end
print(pass(1, nil, 3))
print(select("#", pass(nil, nil)))
local t = {two(), two(), k = two()}
print(t[1], t[2], t[3], t.k)
print(string.format("%d %d", two()))
local function tail() return two() end
print(tail())
