local a, b = 0.1, 0.2
print(a + b, a + b == 0.3, string.format("%.17g", a + b))
print(1e300 * 1e10, -1e300 * 1e10, 1e-300 * 1e-300)
print(3.0 == 3, 3.5 // 1, -3.5 // 1, 3.5 % -1)
print(math.huge - math.huge ~= math.huge - math.huge)
print(2^53 + 1, 2^53 + 1.0 == 2^53)
print(7 // 2.0, 7 % 2.5, -7 % 2.5)
print(1/3)
print(100 / 3, -100 / 3)
