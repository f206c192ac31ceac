local s = "hello world from lua"
print(s:find("world"), s:find("o"), s:find("o", 6), s:find("xyz"), s:find(""))
print(s:find("l+"), s:find("o w"), s:find("%s"), s:find("(o)(r)"))
print(s:find("o", -3), s:find("", 100), s:find("", #s + 1), s:find("h", 0))
print(("a.b"):find(".", 1, true), ("a.b"):find("%."), ("a+b"):find("+", 1, true))
print(("x*y"):find("*", 1, true), ("[a]"):find("[", 1, true))
print(string.find("abc", "b", -1), string.find("abc", "b", -10))
