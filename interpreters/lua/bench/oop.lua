-- Object-oriented code with metatables: classes, inheritance, method calls, __index chains,
-- __add/__eq/__lt/__tostring. Size: iterations (default 1000000).
local N = tonumber(arg and arg[1]) or 1000000
local Point = {}
Point.__index = Point
function Point.new(x, y) return setmetatable({x = x, y = y}, Point) end
function Point:len2() return self.x * self.x + self.y * self.y end
Point.__add = function(a, b) return Point.new(a.x + b.x, a.y + b.y) end
Point.__eq = function(a, b) return a.x == b.x and a.y == b.y end
Point.__lt = function(a, b) return a:len2() < b:len2() end
Point.__tostring = function(p) return "(" .. p.x .. "," .. p.y .. ")" end
local Shape = {}
Shape.__index = Shape
function Shape.new(name) return setmetatable({name = name, moves = 0}, Shape) end
function Shape:area() return 0 end
function Shape:move(d) self.moves = self.moves + 1; self.origin = self.origin + d return self end
local Rect = setmetatable({}, {__index = Shape})
Rect.__index = Rect
function Rect.new(w, h) local r = Shape.new("rect"); r.w, r.h = w, h; r.origin = Point.new(0, 0) return setmetatable(r, Rect) end
function Rect:area() return self.w * self.h end
local Circle = setmetatable({}, {__index = Shape})
Circle.__index = Circle
function Circle.new(r) local c = Shape.new("circle"); c.r = r; c.origin = Point.new(1, 1) return setmetatable(c, Circle) end
function Circle:area() return 3 * self.r * self.r end
local shapes = {}
for i = 1, 100 do shapes[i] = (i % 2 == 0) and Rect.new(i, i + 1) or Circle.new(i) end
local total, less, eq = 0, 0, 0
local step = Point.new(1, 2)
for i = 1, N do
  local s = shapes[i % 100 + 1]
  s:move(step)
  total = total + s:area()
  local p = Point.new(i % 10, i % 7)
  if p < step then less = less + 1 end
  if p == step then eq = eq + 1 end
end
print(total, less, eq, tostring(shapes[1].origin), shapes[2].moves)
