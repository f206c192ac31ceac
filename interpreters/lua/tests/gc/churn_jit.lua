-- Allocates in a loop that compiles: a table with a metatable and string keys, and a closure
-- whose upvalue is the table (a cycle), all made by native code the trace calls, and garbage
-- by the next iteration. Memory stays bounded only if compiled code collects.
local n = tonumber(arg[1]) or 100000
local Obj = {}
Obj.__index = Obj
function Obj.get(o) return o.x end
local sink = 0
for i = 1, n do
  local t = setmetatable({ x = i, y = i + 1 }, Obj)
  t.self = t
  local f = function() return t end
  t.f = f
  sink = sink + t:get() + f().y
end
print(sink)
