-- function statement forms and local function recursion
function gf(x) return x + 1 end
print(gf(1))
local function lf(n) if n > 0 then return lf(n - 1) end return "lf" end
print(lf(3))
local anon = function(...) return select("#", ...) end
print(anon(1, 2))
local t = {f = function(self) return self.v end, v = 7}
print(t:f())
print((function() return 1, 2 end)())
print(type(print), type(gf), type(nil))
local function noret() end
print(noret(), select("#", noret()))
local function many() return 1, 2, 3 end
local x = many()
print(x)
