local f = load("return 1 + 2")
print(f())
print(load("x = 10; return x")(), x)
local g = load("local a, b = ...; return a * b")
print(g(6, 7))
print(load("syntax error here"))
print(load("return +", "=mychunk"))
print(type(load("error('rt')", "=named")))
print(pcall(load("error('rt')", "=named")))
print(pcall(load("error('rt')", "@file.lua")))
print(pcall(load("error('rt')")))
local parts = {"return ", "4", "2"}
local i = 0
print(load(function() i = i + 1 return parts[i] end)())
local env = {y = 5}
print(load("return y", "c", "t", env)())
print(load("y = 7", "c", "t", env)(), env.y)
local h = load("return ...")
print(h(1, 2, 3))
