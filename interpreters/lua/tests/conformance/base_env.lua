-- _ENV as an upvalue: globals resolve through it
local function with_env()
  local _ENV = {print = print, x = "from env"}
  print(x)
  y = 5
  return _ENV
end
local e = with_env()
print(e.y, y)
local f = load("return a + b", "chunk", "t", {a = 1, b = 2})
print(f())
do
  local _ENV = setmetatable({}, {__index = _G})
  z = 10
  print(z, _G.z)
end
