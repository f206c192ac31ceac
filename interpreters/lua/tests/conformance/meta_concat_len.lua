local mt = {__concat = function(a, b)
  local av = type(a) == "table" and a.s or a
  local bv = type(b) == "table" and b.s or b
  return av .. "+" .. bv
end, __len = function(t) return 42 end}
local o = setmetatable({s = "o"}, mt)
print(o .. "x", "x" .. o, o .. o, 1 .. o)
print("a" .. "b" .. o)
print(#o, rawlen(o), rawlen("abc"))
print(pcall(rawlen, 5))
