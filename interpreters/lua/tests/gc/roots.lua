-- Values that only a native function, an iterator, a metamethod or an error holds stay alive
-- while the program allocates enough to collect many times (run with LUA_GC_STRESS=1 by the
-- stress test, which collects at every call and backward jump).
local function churn(n)
  local keep = 0
  for i = 1, n do
    local t = { i, tostring(i) .. "x", { i } }
    t[4] = t -- a cycle
    keep = keep + #t
  end
  return keep
end

-- a gmatch iterator over a string built at run time holds the only reference to it
local it = string.gmatch(("a1 b2 c3 "):rep(3) .. tostring(42) .. "z9", "(%a)(%d)")
local out = {}
for _ = 1, 20 do
  churn(50)
  local a, b = it()
  if not a then break end
  out[#out + 1] = a .. b
end
print(table.concat(out, ","))

-- pairs and ipairs keep their iterators when the globals are gone
local saved_next = next
next = nil
churn(200)
local n = 0
for k, v in pairs({ x = 1, y = 2, z = 3 }) do n = n + v end
print("pairs", n)
next = saved_next

-- io.write returns the io.stdout it started with
local out_file = io.stdout
io.stdout = nil
churn(200)
print(io.write("") == out_file)
io.stdout = out_file

-- a sort comparator that allocates, on values only the sort holds
local words = {}
for i = 1, 60 do words[i] = ("w" .. (i * 7919) % 1000) .. "!" end
table.sort(words, function(a, b)
  churn(2)
  return a < b
end)
print(words[1], words[30], words[60])

-- gsub with a function on a string built at run time
local s = ("k=v;"):rep(5) .. tostring(12345)
print((s:gsub("(%w+)=(%w+)", function(k, v)
  churn(5)
  return v .. "=" .. k .. tostring(#k)
end)))

-- xpcall's handler is a closure nothing else holds; the error value is a fresh table
local function fail()
  churn(100)
  error({ msg = "boom" .. tostring(7) })
end
print(xpcall(fail, function(e)
  churn(100)
  return "handled " .. e.msg
end))
print(select(2, pcall(function()
  churn(100)
  error(setmetatable({}, { __tostring = function() return "obj" .. "ect" end }))
end)) ~= nil)

-- __index and __concat functions called by the VM's slow paths
local proxy = setmetatable({}, {
  __index = function(_, k)
    churn(20)
    return k .. "!" .. tostring(#k)
  end,
  __concat = function(a, b)
    churn(20)
    return "cat(" .. tostring(type(a)) .. "," .. tostring(type(b)) .. ")"
  end,
})
print(proxy.alpha, proxy.beta, proxy .. "s", "s" .. proxy)

-- closures and their upvalues after the frames that made them are gone
local function counter(start)
  local c = { n = start }
  return function()
    c.n = c.n + 1
    return c.n
  end
end
local counters = {}
for i = 1, 10 do counters[i] = counter(i * 100) end
churn(500)
local total = 0
for i = 1, 10 do total = total + counters[i]() + counters[i]() end
print("counters", total)

-- varargs of a running frame
local function va(...)
  churn(300)
  local t = { ... }
  return #t, t[1], t[3][1]
end
print(va("a" .. "b", 2, { "c" .. "d" }))
print("done", churn(10))
