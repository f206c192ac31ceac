-- %.14g, integral floats get ".0", inf, nan, -0.0
print(1.0, -1.0, 0.0, -0.0, 100.0, 1e14, 1e15, 1e16, 1e100, 1e+100, 1e-5, 123.456)
print(2^24, 2^53, 2^63, -2^63, 1e300 * 1e300, -1e300 * 1e300)
print(0.1, 1/3, 2/3, 3.14159265358979323846, 1e-310)
print(math.huge, -math.huge, math.pi, -math.pi)
local nan = 0/0
print(tostring(nan) == "nan" or tostring(nan) == "-nan", tostring(-(0/0)):find("nan") ~= nil)
print(tostring(1.5), tostring(-0.0), 1e15 + 0.5, 12345678901234.5)
print(255 / 5, 1e2, 5e-324, 2.5e-8)
print(string.format("%.14g", 2^63), 9007199254740993.0)
print(tostring(3) == "3", tostring(3.0) == "3.0")
