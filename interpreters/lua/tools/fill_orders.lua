-- Times filling tables in orders that move integer keys between the array part and the hash
-- part (book: lua.md, "Fill orders: what a rehash costs").
-- usage: lua fill_orders.lua NAME [n] [rounds]; prints NAME, then the CPU seconds of its
-- first and second phase summed over the rounds. NAME: oddeven topdown random mul3 mul100
-- delre strmix strhash churn queue (a window of 1000 sliding through n items).
local name = arg[1]
local n = tonumber(arg[2]) or 1000000
local R = tonumber(arg[3]) or 10
local clock = os.clock
local t1, t2 = 0, 0
local function phase(f) local c = clock(); f(); return clock() - c end
-- deterministic permutation
local perm
if name == "random" then
  perm = {}
  for i = 1, n do perm[i] = i end
  local s = 12345
  for i = n, 2, -1 do
    s = (s * 1103515245 + 12345) % 2147483648
    local j = s % i + 1
    perm[i], perm[j] = perm[j], perm[i]
  end
end
local strs
if name == "strmix" or name == "strhash" then
  strs = {}
  for i = 1, n do strs[i] = "k" .. i end
end
for r = 1, R do
  local t = {}
  if name == "oddeven" then
    t1 = t1 + phase(function() for i = 1, n, 2 do t[i] = i end end)
    t2 = t2 + phase(function() for i = 2, n, 2 do t[i] = i end end)
  elseif name == "topdown" then
    t1 = t1 + phase(function() for i = n, 1, -1 do t[i] = i end end)
  elseif name == "random" then
    t1 = t1 + phase(function() for i = 1, n do local k = perm[i]; t[k] = k end end)
  elseif name == "mul3" then
    t1 = t1 + phase(function() for i = 3, 3 * n, 3 do t[i] = i end end)
  elseif name == "mul100" then
    t1 = t1 + phase(function() for i = 100, 100 * n, 100 do t[i] = i end end)
  elseif name == "delre" then
    for i = 1, n do t[i] = i end
    t1 = t1 + phase(function()
      for i = 1, n, 2 do t[i] = nil end
      for i = 1, n, 2 do t[i] = i end
    end)
    t2 = t2 + phase(function()
      for i = n, 1, -1 do t[i] = nil end
      for i = 1, n do t[i] = i end
    end)
  elseif name == "strmix" then
    t1 = t1 + phase(function() for i = 1, n do t[i] = i; t[strs[i]] = i end end)
  elseif name == "strhash" then
    t1 = t1 + phase(function() for i = 1, n do t[strs[i]] = i end end)
  elseif name == "queue" then
    t1 = t1 + phase(function()
      local head, tail = 1, 0
      for i = 1, n do
        tail = tail + 1; t[tail] = i
        if tail - head >= 1000 then t[head] = nil; head = head + 1 end
      end
    end)
  elseif name == "churn" then
    -- hash keys deleted and added: a sliding window of sparse keys
    t1 = t1 + phase(function()
      for i = 1, n do t[i * 7 + 1000000000] = i; if i > 1000 then t[(i - 1000) * 7 + 1000000000] = nil end end
    end)
  end
end
print(string.format("%-8s %8.3f %8.3f", name, t1, t2))
