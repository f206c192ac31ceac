-- upvalues are closed when their scope ends by break, goto, return or error
local fs = {}
for i = 1, 10 do
  local x = i * 2
  fs[#fs + 1] = function() x = x + 1 return x end
  if i == 3 then break end
end
print(#fs, fs[1](), fs[1](), fs[2](), fs[3]())
local gs = {}
do
  local k = 0
  ::again::
  local y = k
  gs[#gs + 1] = function() return y end
  k = k + 1
  if k < 3 then goto again end
end
print(gs[1](), gs[2](), gs[3]())
local function make()
  local a = 1
  local function get() return a end
  local function set(v) a = v end
  return get, set
end
local get, set = make()
set(42)
print(get())
local hs = {}
pcall(function()
  for i = 1, 5 do
    local v = i
    hs[i] = function() return v end
    if i == 2 then error("stop") end
  end
end)
print(#hs, hs[1](), hs[2]())
local shared = {}
for i = 1, 3 do
  local count = 0
  shared[i] = {inc = function() count = count + 1 end, get = function() return count end}
end
shared[1].inc() shared[1].inc() shared[3].inc()
print(shared[1].get(), shared[2].get(), shared[3].get())
