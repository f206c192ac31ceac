-- chunks loaded at run time are functions with their own upvalues
local adders = {}
for i = 1, 3 do adders[i] = load("local n = ... return function(x) return x + n end")(i * 10) end
print(adders[1](1), adders[2](1), adders[3](1))
local counter = load("local c = 0 return function() c = c + 1 return c end")()
counter() counter()
print(counter())
local src = "local t = {} for i = 1, 5 do t[i] = i * i end return table.concat(t, ' ')"
print(load(src)())
print(type(load("")), load("")())
