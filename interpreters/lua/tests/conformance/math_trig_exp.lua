local function r(x) return string.format("%.10f", x) end
print(r(math.sin(1)), r(math.cos(1)), r(math.tan(1)))
print(r(math.asin(0.5)), r(math.acos(0.5)), r(math.atan(1)), r(math.atan(1, 2)), r(math.atan(-1, -1)))
print(r(math.exp(1)), r(math.log(10)), r(math.log(8, 2)), r(math.log(100, 10)), r(math.log(27, 3)))
print(math.log(0), math.exp(0), math.sin(0), math.cos(0))
print(math.log(1024, 2), math.log(1000, 10))
print(r(math.rad(180)), r(math.deg(math.pi)))
print(2^0.5 == math.sqrt(2))
