local s = "abcdef"
print(s:sub(2), s:sub(2, 4), s:sub(-3), s:sub(-3, -2), s:sub(0), s:sub(10), s:sub(3, 2))
print(s:sub(-100, 2), s:sub(2, 100), s:sub(-1, -1), s:sub(0, 0), s:sub(1, -7))
print(string.sub(s, 2.0, 3), pcall(string.sub, s, 1.5))
print(("x"):sub(math.mininteger, math.maxinteger))
