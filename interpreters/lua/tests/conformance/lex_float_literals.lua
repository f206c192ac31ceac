-- decimal float literals with points and exponents
print(1.0, 1., .5, 3.25, 0.1)
print(1e0, 1e2, 1E2, 1e+2, 1e-2, 2.5e3, .5e1, 5.e-1)
print(math.type(1e2), math.type(1.), math.type(100))
print(1e308, 1e309, -1e309, 1e-320)
print(123456789012345678901234567890)
print(3.14159265358979, 2^53, 2^63)
