local function d(a, b) return a // b end
print(d(10, 3))
print(d(10, 0))
