local rows = {{"apple", 3, 1.25}, {"banana", 12, 0.5}, {"cherry", 100, 10}}
for _, r in ipairs(rows) do print(string.format("%-8s %4d %8.2f %5.1f%%", r[1], r[2], r[3], r[2] / 1.15)) end
print(string.format("[%3d%%]", 50))
print(string.format("%s=%d, %s=%g", "a", 1, "b", 2.5))
print(pcall(string.format, "%10.123d", 1))
print(pcall(string.format, "%123d", 1))
print(("%d"):rep(3, " "):format(1, 2, 3))
