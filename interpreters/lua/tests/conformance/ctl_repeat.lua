-- repeat body scope extends into the condition
local i = 0
repeat local j = i * 2; i = i + 1 until j >= 6
print(i)
local n = 0
repeat n = n + 1 until true
print(n)
repeat
  n = n + 1
  if n == 4 then break end
until false
print(n)
local fs = {}
local c = 0
repeat c = c + 1; local v = c; fs[c] = function() return v end until v == 3
print(fs[1](), fs[2](), fs[3]())
