-- each iteration has a fresh loop variable
local fs = {}
for i = 1, 3 do fs[i] = function() return i end end
print(fs[1](), fs[2](), fs[3]())
local gs = {}
for k, v in ipairs({"x", "y"}) do gs[k] = function() return k .. v end end
print(gs[1](), gs[2]())
local hs = {}
for i = 1, 3 do local j = i hs[i] = function() j = j + 1 return j end end
print(hs[1](), hs[1](), hs[2]())
