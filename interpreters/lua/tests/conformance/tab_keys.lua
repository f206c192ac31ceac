-- float keys with integral values are normalized to integers
local t = {}
t[1.0] = "one"; t[2] = "two"
print(t[1], t[2.0], math.type(next(t)))
t[2^53] = "big"
print(t[2^53], t[1 << 53])
t["1"] = "string one"
print(t[1], t["1"])
print(pcall(function() t[nil] = 1 end))
print(pcall(function() t[0/0] = 1 end))
print(t[nil], t[0/0])
t[-0.0] = "zero"
print(t[0], t[0.0])
local k1, k2 = {}, {}
t[k1] = "k1"; t[k2] = "k2"
print(t[k1], t[k2])
t[print] = "fn"
print(t[print])
