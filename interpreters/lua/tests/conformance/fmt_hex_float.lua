local f = string.format
print(f("%a", 1.0), f("%a", 0.5), f("%a", -2.75), f("%A", 255.5))
print(f("%a", 0.0), f("%.3a", 1/3), f("%a", 1e-310 > 0 and 1))
print(f("%a", math.huge), f("%a", -math.huge))
