-- DeltaBlue: an incremental one-way constraint solver (chain and projection tests), in an
-- object-oriented style with classes, inheritance and many small method calls.
-- Size: problem size (default 1500).
local N = tonumber(arg and arg[1]) or 1500

local function class(parent)
  local c = {}
  c.__index = c
  if parent then setmetatable(c, {__index = parent}) end
  return c
end

-- Strengths: 0 (required) is the strongest, 6 (weakest) the weakest.
local REQUIRED, STRONG_PREFERRED, PREFERRED, STRONG_DEFAULT, NORMAL, WEAK_DEFAULT, WEAKEST = 0, 1, 2, 3, 4, 5, 6
local function stronger(a, b) return a < b end
local function weaker(a, b) return a > b end
local function weakest_of(a, b) if weaker(a, b) then return a end return b end

local FORWARD, BACKWARD, NONE = 1, 2, 0

local planner

local Variable = class()
function Variable.new(name, value)
  return setmetatable({name = name, value = value or 0, constraints = {}, determined_by = nil,
    mark = 0, walk_strength = WEAKEST, stay = true}, Variable)
end
function Variable:add_constraint(c) self.constraints[#self.constraints + 1] = c end
function Variable:remove_constraint(c)
  local cs = self.constraints
  for i = #cs, 1, -1 do if cs[i] == c then table.remove(cs, i) end end
  if self.determined_by == c then self.determined_by = nil end
end

local Constraint = class()
function Constraint:add_constraint() self:add_to_graph(); planner:incremental_add(self) end
function Constraint:satisfy(mark)
  self:choose_method(mark)
  if not self:is_satisfied() then
    if self.strength == REQUIRED then error("could not satisfy a required constraint") end
    return nil
  end
  self:mark_inputs(mark)
  local out = self:output()
  local overridden = out.determined_by
  if overridden then overridden:mark_unsatisfied() end
  out.determined_by = self
  if not planner:add_propagate(self, mark) then error("cycle encountered") end
  out.mark = mark
  return overridden
end
function Constraint:destroy_constraint()
  if self:is_satisfied() then planner:incremental_remove(self) else self:remove_from_graph() end
end
function Constraint:is_input() return false end

local UnaryConstraint = class(Constraint)
function UnaryConstraint.init(self, v, strength)
  self.my_output, self.strength, self.satisfied = v, strength, false
  self:add_constraint()
  return self
end
function UnaryConstraint:add_to_graph() self.my_output:add_constraint(self); self.satisfied = false end
function UnaryConstraint:choose_method(mark)
  self.satisfied = self.my_output.mark ~= mark and stronger(self.strength, self.my_output.walk_strength)
end
function UnaryConstraint:is_satisfied() return self.satisfied end
function UnaryConstraint:mark_inputs() end
function UnaryConstraint:output() return self.my_output end
function UnaryConstraint:recalculate()
  self.my_output.walk_strength = self.strength
  self.my_output.stay = not self:is_input()
  if self.my_output.stay then self:execute() end
end
function UnaryConstraint:mark_unsatisfied() self.satisfied = false end
function UnaryConstraint:inputs_known() return true end
function UnaryConstraint:remove_from_graph()
  if self.my_output then self.my_output:remove_constraint(self) end
  self.satisfied = false
end

local StayConstraint = class(UnaryConstraint)
function StayConstraint.new(v, s) return UnaryConstraint.init(setmetatable({}, StayConstraint), v, s) end
function StayConstraint:execute() end

local EditConstraint = class(UnaryConstraint)
function EditConstraint.new(v, s) return UnaryConstraint.init(setmetatable({}, EditConstraint), v, s) end
function EditConstraint:is_input() return true end
function EditConstraint:execute() end

local BinaryConstraint = class(Constraint)
function BinaryConstraint.init(self, v1, v2, strength)
  self.v1, self.v2, self.strength, self.direction = v1, v2, strength, NONE
  self:add_constraint()
  return self
end
function BinaryConstraint:choose_method(mark)
  local v1, v2 = self.v1, self.v2
  if v1.mark == mark then
    self.direction = (v2.mark ~= mark and stronger(self.strength, v2.walk_strength)) and FORWARD or NONE
  end
  if v2.mark == mark then
    self.direction = (v1.mark ~= mark and stronger(self.strength, v1.walk_strength)) and BACKWARD or NONE
  end
  if weaker(v1.walk_strength, v2.walk_strength) then
    self.direction = stronger(self.strength, v1.walk_strength) and BACKWARD or NONE
  else
    self.direction = stronger(self.strength, v2.walk_strength) and FORWARD or BACKWARD
  end
end
function BinaryConstraint:add_to_graph()
  self.v1:add_constraint(self); self.v2:add_constraint(self); self.direction = NONE
end
function BinaryConstraint:is_satisfied() return self.direction ~= NONE end
function BinaryConstraint:mark_inputs(mark) self:input().mark = mark end
function BinaryConstraint:input() if self.direction == FORWARD then return self.v1 end return self.v2 end
function BinaryConstraint:output() if self.direction == FORWARD then return self.v2 end return self.v1 end
function BinaryConstraint:recalculate()
  local ihn, out = self:input(), self:output()
  out.walk_strength = weakest_of(self.strength, ihn.walk_strength)
  out.stay = ihn.stay
  if out.stay then self:execute() end
end
function BinaryConstraint:mark_unsatisfied() self.direction = NONE end
function BinaryConstraint:inputs_known(mark)
  local i = self:input()
  return i.mark == mark or i.stay or i.determined_by == nil
end
function BinaryConstraint:remove_from_graph()
  if self.v1 then self.v1:remove_constraint(self) end
  if self.v2 then self.v2:remove_constraint(self) end
  self.direction = NONE
end

local ScaleConstraint = class(BinaryConstraint)
function ScaleConstraint.new(src, scale, offset, dest, strength)
  local c = setmetatable({direction = NONE, scale = scale, offset = offset}, ScaleConstraint)
  return BinaryConstraint.init(c, src, dest, strength)
end
function ScaleConstraint:add_to_graph()
  BinaryConstraint.add_to_graph(self)
  self.scale:add_constraint(self); self.offset:add_constraint(self)
end
function ScaleConstraint:remove_from_graph()
  BinaryConstraint.remove_from_graph(self)
  if self.scale then self.scale:remove_constraint(self) end
  if self.offset then self.offset:remove_constraint(self) end
end
function ScaleConstraint:mark_inputs(mark)
  BinaryConstraint.mark_inputs(self, mark)
  self.scale.mark = mark; self.offset.mark = mark
end
function ScaleConstraint:execute()
  if self.direction == FORWARD then
    self.v2.value = self.v1.value * self.scale.value + self.offset.value
  else
    self.v1.value = math.floor((self.v2.value - self.offset.value) / self.scale.value)
  end
end
function ScaleConstraint:recalculate()
  local ihn, out = self:input(), self:output()
  out.walk_strength = weakest_of(self.strength, ihn.walk_strength)
  out.stay = ihn.stay and self.scale.stay and self.offset.stay
  if out.stay then self:execute() end
end

local EqualityConstraint = class(BinaryConstraint)
function EqualityConstraint.new(v1, v2, strength)
  return BinaryConstraint.init(setmetatable({}, EqualityConstraint), v1, v2, strength)
end
function EqualityConstraint:execute() self:output().value = self:input().value end

local Plan = class()
function Plan.new() return setmetatable({list = {}}, Plan) end
function Plan:add(c) self.list[#self.list + 1] = c end
function Plan:execute() for i = 1, #self.list do self.list[i]:execute() end end

local Planner = class()
function Planner.new() return setmetatable({current_mark = 0}, Planner) end
function Planner:new_mark() self.current_mark = self.current_mark + 1 return self.current_mark end
function Planner:incremental_add(c)
  local mark = self:new_mark()
  local overridden = c:satisfy(mark)
  while overridden do overridden = overridden:satisfy(mark) end
end
function Planner:incremental_remove(c)
  local out = c:output()
  c:mark_unsatisfied()
  c:remove_from_graph()
  local unsatisfied = self:remove_propagate_from(out)
  for strength = REQUIRED, WEAKEST do
    for i = 1, #unsatisfied do
      local u = unsatisfied[i]
      if u.strength == strength then self:incremental_add(u) end
    end
  end
end
function Planner:make_plan(sources)
  local mark = self:new_mark()
  local plan = Plan.new()
  local todo = sources
  while #todo > 0 do
    local c = table.remove(todo, 1)
    if c:output().mark ~= mark and c:inputs_known(mark) then
      plan:add(c)
      c:output().mark = mark
      self:add_constraints_consuming_to(c:output(), todo)
    end
  end
  return plan
end
function Planner:extract_plan_from_constraints(constraints)
  local sources = {}
  for i = 1, #constraints do
    local c = constraints[i]
    if c:is_input() and c:is_satisfied() then sources[#sources + 1] = c end
  end
  return self:make_plan(sources)
end
function Planner:add_propagate(c, mark)
  local todo = {c}
  while #todo > 0 do
    local d = table.remove(todo)
    if d:output().mark == mark then self:incremental_remove(c) return false end
    d:recalculate()
    self:add_constraints_consuming_to(d:output(), todo)
  end
  return true
end
function Planner:remove_propagate_from(out)
  out.determined_by = nil
  out.walk_strength = WEAKEST
  out.stay = true
  local unsatisfied, todo = {}, {out}
  while #todo > 0 do
    local v = table.remove(todo)
    for i = 1, #v.constraints do
      local c = v.constraints[i]
      if not c:is_satisfied() then unsatisfied[#unsatisfied + 1] = c end
    end
    local determining = v.determined_by
    for i = 1, #v.constraints do
      local next_c = v.constraints[i]
      if next_c ~= determining and next_c:is_satisfied() then
        next_c:recalculate()
        todo[#todo + 1] = next_c:output()
      end
    end
  end
  return unsatisfied
end
function Planner:add_constraints_consuming_to(v, coll)
  local determining = v.determined_by
  for i = 1, #v.constraints do
    local c = v.constraints[i]
    if c ~= determining and c:is_satisfied() then coll[#coll + 1] = c end
  end
end

local checksum = 0
local function change(v, new_value)
  local edit = EditConstraint.new(v, PREFERRED)
  local plan = planner:extract_plan_from_constraints({edit})
  for _ = 1, 10 do v.value = new_value; plan:execute() end
  edit:destroy_constraint()
end

local function chain_test(n)
  planner = Planner.new()
  local prev, first, last
  for i = 0, n do
    local v = Variable.new("v" .. i, 0)
    if prev then EqualityConstraint.new(prev, v, REQUIRED) end
    if i == 0 then first = v end
    if i == n then last = v end
    prev = v
  end
  StayConstraint.new(last, STRONG_DEFAULT)
  local edit = EditConstraint.new(first, PREFERRED)
  local plan = planner:extract_plan_from_constraints({edit})
  for i = 1, 100 do
    first.value = i
    plan:execute()
    if last.value ~= i then error("chain test failed") end
    checksum = (checksum + last.value) % 1000000007
  end
end

local function projection_test(n)
  planner = Planner.new()
  local scale, offset = Variable.new("scale", 10), Variable.new("offset", 1000)
  local src, dst
  local dests = {}
  for i = 0, n - 1 do
    src = Variable.new("src" .. i, i)
    dst = Variable.new("dst" .. i, i)
    dests[#dests + 1] = dst
    StayConstraint.new(src, NORMAL)
    ScaleConstraint.new(src, scale, offset, dst, REQUIRED)
  end
  change(src, 17)
  if dst.value ~= 1170 then error("projection 1 failed") end
  change(dst, 1050)
  if src.value ~= 5 then error("projection 2 failed") end
  change(scale, 5)
  for i = 0, n - 2 do if dests[i + 1].value ~= i * 5 + 1000 then error("projection 3 failed") end end
  change(offset, 2000)
  for i = 0, n - 2 do if dests[i + 1].value ~= i * 5 + 2000 then error("projection 4 failed") end end
  for i = 1, #dests do checksum = (checksum + dests[i].value) % 1000000007 end
end

for _ = 1, 5 do
  chain_test(N)
  projection_test(N)
end
print(N, checksum)
