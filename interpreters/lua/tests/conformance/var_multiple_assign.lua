-- multiple assignment evaluates all expressions before assigning
local a, b, c = 1, 2
print(a, b, c)
a, b = b, a
print(a, b)
local t = {1, 2, 3}
local i = 1
i, t[i] = i + 1, 20
print(i, t[1], t[2])
local function three() return 1, 2, 3 end
local x, y, z, w = three()
print(x, y, z, w)
x, y, z = three(), 10
print(x, y, z)
x, y, z = (three())
print(x, y, z)
local p, q = 1, 2, 3, print("extra evaluated")
print(p, q)
