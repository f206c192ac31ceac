-- Allocates 5 objects an iteration (a table, its array part, a string, a closure and its
-- upvalue cell), in reference cycles (t.self = t; t.f = f, whose upvalue is t), all garbage
-- by the next iteration but for one table in a thousand, kept for ten thousand iterations.
local n = tonumber(arg[1]) or 100000
local sink = 0
local keep = {}
for i = 1, n do
  local t = { i, i + 1 }
  local s = "k" .. i
  t.self = t
  t.name = s
  local f = function() return t end
  t.f = f
  sink = sink + #t + #s + #f().name
  if i % 1000 == 0 then keep[(i // 1000) % 10 + 1] = t end
end
local kept = 0
for _, t in pairs(keep) do kept = kept + t[1] % 7 end
print(sink, kept)
