local ok = true
print("x" .. ok)
