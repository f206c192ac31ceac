goto inner
local x = 1
::inner::
print(x)
