-- strings are byte strings: NUL bytes are ordinary characters
local s = "a\0b\0c"
print(#s, s:byte(2), s:find("\0"), s:find("\0", 3), s:find("b\0c"))
print(s:gsub("\0", "-"))
print(("x\0y"):upper() == "X\0Y", ("\0"):rep(3) == "\0\0\0", #("\0"):rep(3))
print(s:sub(2, 2) == "\0", s < "a\0c", s .. "" == s)
print(("%d\0%d"):format(1, 2) == "1\0002", #string.format("%s", s))
print(s:match("(.)b") == "\0", s:match("%c") == "\0")
local t = {}
t[s] = 1
print(t["a\0b\0c"], t["a"])
