local f
local function g() return f() end
g()
