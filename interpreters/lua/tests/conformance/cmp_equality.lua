-- equality between types never coerces
local t = {}
print(1 == "1", "1" == 1, t == t, t == {}, nil == false, print == print)
print(0 == false, "" == false, 1 ~= 1.0)
local f1 = function() end
local f2 = function() end
print(f1 == f1, f1 == f2)
print(rawequal(t, t), rawequal(t, {}), rawequal(1, 1.0), rawequal("a", "a"))
