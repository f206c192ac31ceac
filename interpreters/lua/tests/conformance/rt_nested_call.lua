local function a() local t = nil; return t[1] end
local function b() return a() + 1 end
print(pcall(b))
b()
