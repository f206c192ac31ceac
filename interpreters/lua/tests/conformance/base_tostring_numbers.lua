for _, v in ipairs({0, -1, 1.5, -1.5, 1e20, 1e-20, 2^31, 2^32, 0.1 + 0.2, 1/7}) do io.write(tostring(v), " ") end print()
print(10 // 3 .. "", 10 / 2 .. "", 3 | 0)
