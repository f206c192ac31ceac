print(_G._G == _G, type(_G), _G.print == print)
myglobal = 5
print(_G.myglobal, _G["myglobal"])
_G.other = 6
print(other)
local names = {}
for _, n in ipairs({"assert", "error", "getmetatable", "ipairs", "load", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset", "require", "select", "setmetatable", "tonumber", "tostring", "type", "xpcall"}) do
  names[#names + 1] = n .. "=" .. type(_G[n])
end
print(table.concat(names, " "))
print(type(string), type(table), type(math), type(os), type(io), type(package))
print(_VERSION)
