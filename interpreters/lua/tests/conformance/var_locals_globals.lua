-- locals shadow globals; scopes end at `end`
x = 10
local x = 20
print(x, _G.x, _ENV.x)
do local x = 30 print(x) end
print(x)
y = nil
print(y, rawget(_G, "y"))
g1, g2 = 1
print(g1, g2)
local function f() return x end
x = 99
print(f())
local a <const> = 5
print(a)
do
  local z <close> = nil
  print("close nil ok")
end
