-- / and ^ always produce floats
print(4 / 2, 2 ^ 2, math.type(4 / 2), math.type(2 ^ 2))
print(0 ^ 0, 0 ^ -1, 2 ^ 0.5, 10 ^ 2, 10 ^ -2)
print(2 ^ 63, 2 ^ 64, -2 ^ 63 == math.mininteger)
print(1 / 3 * 3 == 1, 9 ^ 0.5)
