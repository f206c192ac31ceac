-- identifiers, keywords as field names
local _ = 1
local _abc9, A_b, andy, orx, nil_ = 1, 2, 3, 4, 5
print(_abc9, A_b, andy, orx, nil_, _)
local t = {}
t["end"] = 1; t["while"] = 2
print(t["end"], t["while"])
local x_1_ = "ok" print(x_1_)
