local function inner() error("inner error") end
local function middle()
  local ok, e = pcall(inner)
  error("middle saw: " .. e, 0)
end
print(pcall(middle))
print(pcall(pcall, error, "x"))
local depth = 0
local function rec(n) if n == 0 then error("bottom", 0) end depth = depth + 1 local ok, e = pcall(rec, n - 1) return e end
print(rec(5), depth)
local ok, e = pcall(function()
  local ok2, e2 = pcall(error, "a", 0)
  error(e2 .. "b", 0)
end)
print(ok, e)
