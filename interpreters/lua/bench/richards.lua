-- Richards: an operating-system task scheduler simulation (idle, worker, handler and device
-- tasks exchanging packets); object fields, method calls, linked lists. Size: runs (default 20).
local N = tonumber(arg and arg[1]) or 20

local ID_IDLE, ID_WORKER, ID_HANDLER_A, ID_HANDLER_B, ID_DEVICE_A, ID_DEVICE_B = 1, 2, 3, 4, 5, 6
local KIND_DEVICE, KIND_WORK = 0, 1
local DATA_SIZE = 4
-- Exclusive or: Lua 5.4's operator, or LuaJIT's bit library (so that LuaJIT runs this too).
local bxor = (bit and bit.bxor) or load("return function(a, b) return a ~ b end")()

local Packet = {}
Packet.__index = Packet
function Packet.new(link, id, kind)
  local data = {}
  for i = 1, DATA_SIZE do data[i] = 0 end
  return setmetatable({link = link, id = id, kind = kind, a1 = 0, a2 = data}, Packet)
end
function Packet:append_to(queue)
  self.link = nil
  if queue == nil then return self end
  local p = queue
  while p.link do p = p.link end
  p.link = self
  return queue
end

local Scheduler = {}
Scheduler.__index = Scheduler

local Task = {}
Task.__index = Task
-- state bits: packet pending, task waiting, task holding
function Task.new(sched, id, prio, queue, fn, data)
  local t = setmetatable({sched = sched, id = id, prio = prio, queue = queue, fn = fn, data = data,
    pending = queue ~= nil, waiting = false, holding = false}, Task)
  t.link = sched.list
  sched.list = t
  sched.tasks[id] = t
  return t
end
function Task:held_or_suspended() return self.holding or (not self.pending and self.waiting) end
function Task:run()
  local pkt
  if self.waiting and self.pending then
    pkt = self.queue
    self.queue = pkt.link
    self.pending = self.queue ~= nil
    self.waiting = false
  end
  return self.fn(self, pkt)
end
function Task:check_priority_add(task, pkt)
  if self.queue == nil then
    self.queue = pkt
    self.pending = true
    if self.prio > task.prio then return self end
  else
    self.queue = pkt:append_to(self.queue)
  end
  return task
end

function Scheduler.new()
  return setmetatable({list = nil, tasks = {}, current = nil, current_id = nil, queue_count = 0, hold_count = 0}, Scheduler)
end
function Scheduler:schedule()
  self.current = self.list
  while self.current do
    local t = self.current
    if t:held_or_suspended() then
      self.current = t.link
    else
      self.current_id = t.id
      self.current = t:run()
    end
  end
end
function Scheduler:release(id)
  local t = self.tasks[id]
  if t == nil then return nil end
  t.holding = false
  if t.prio > self.current.prio then return t end
  return self.current
end
function Scheduler:hold_current()
  self.hold_count = self.hold_count + 1
  self.current.holding = true
  return self.current.link
end
function Scheduler:suspend_current()
  self.current.waiting = true
  return self.current
end
function Scheduler:queue(pkt)
  local t = self.tasks[pkt.id]
  if t == nil then return nil end
  self.queue_count = self.queue_count + 1
  pkt.link = nil
  pkt.id = self.current_id
  return t:check_priority_add(self.current, pkt)
end

local function idle_fn(task, pkt)
  local s, d = task.sched, task.data
  d.count = d.count - 1
  if d.count == 0 then return s:hold_current() end
  if d.control % 2 == 0 then
    d.control = math.floor(d.control / 2)
    return s:release(ID_DEVICE_A)
  end
  d.control = bxor(math.floor(d.control / 2), 0xD008)
  return s:release(ID_DEVICE_B)
end
local function worker_fn(task, pkt)
  local s, d = task.sched, task.data
  if pkt == nil then return s:suspend_current() end
  d.dest = (d.dest == ID_HANDLER_A) and ID_HANDLER_B or ID_HANDLER_A
  pkt.id = d.dest
  pkt.a1 = 0
  for i = 1, DATA_SIZE do
    d.count = d.count + 1
    if d.count > 26 then d.count = 1 end
    pkt.a2[i] = d.count
  end
  return s:queue(pkt)
end
local function handler_fn(task, pkt)
  local s, d = task.sched, task.data
  if pkt then
    if pkt.kind == KIND_WORK then d.work = pkt:append_to(d.work) else d.device = pkt:append_to(d.device) end
  end
  if d.work then
    local w = d.work
    local count = w.a1
    if count < DATA_SIZE then
      if d.device then
        local dev = d.device
        d.device = dev.link
        dev.a1 = w.a2[count + 1]
        w.a1 = count + 1
        return s:queue(dev)
      end
    else
      d.work = w.link
      return s:queue(w)
    end
  end
  return s:suspend_current()
end
local function device_fn(task, pkt)
  local s, d = task.sched, task.data
  if pkt == nil then
    if d.pending == nil then return s:suspend_current() end
    local v = d.pending
    d.pending = nil
    return s:queue(v)
  end
  d.pending = pkt
  return s:hold_current()
end

local function run_once()
  local s = Scheduler.new()
  local idle = Task.new(s, ID_IDLE, 0, nil, idle_fn, {control = 1, count = 10000})
  idle.pending = false; idle.waiting = false
  local wq = Packet.new(nil, ID_WORKER, KIND_WORK)
  wq = Packet.new(wq, ID_WORKER, KIND_WORK)
  local w = Task.new(s, ID_WORKER, 1000, wq, worker_fn, {dest = ID_HANDLER_A, count = 0})
  w.waiting = true
  local q = Packet.new(nil, ID_DEVICE_A, KIND_DEVICE)
  q = Packet.new(q, ID_DEVICE_A, KIND_DEVICE)
  q = Packet.new(q, ID_DEVICE_A, KIND_DEVICE)
  Task.new(s, ID_HANDLER_A, 2000, q, handler_fn, {}).waiting = true
  q = Packet.new(nil, ID_DEVICE_B, KIND_DEVICE)
  q = Packet.new(q, ID_DEVICE_B, KIND_DEVICE)
  q = Packet.new(q, ID_DEVICE_B, KIND_DEVICE)
  Task.new(s, ID_HANDLER_B, 3000, q, handler_fn, {}).waiting = true
  Task.new(s, ID_DEVICE_A, 4000, nil, device_fn, {}).waiting = true
  Task.new(s, ID_DEVICE_B, 5000, nil, device_fn, {}).waiting = true
  s:schedule()
  return s.queue_count, s.hold_count
end

local qc, hc
for _ = 1, N do qc, hc = run_once() end
print(qc, hc)
