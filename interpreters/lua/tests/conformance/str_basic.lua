local s = "hello world"
print(#s, s:len(), string.len(""), #"\0\0")
print(s .. "!", "a" .. "b" .. "c", 1 .. 2 .. 3)
print(s:upper(), ("MiXeD"):lower(), s:reverse(), (""):reverse())
print(s:rep(2), s:rep(2, "-"), ("x"):rep(0), ("x"):rep(-1), ("ab"):rep(3, ","))
print(("abc"):byte(), ("abc"):byte(2), ("abc"):byte(1, 3), ("abc"):byte(-1), ("abc"):byte(10))
print(string.char(72, 105), string.char(), #string.char(0, 255))
print(pcall(string.char, 256))
print(pcall(string.rep))
