local log = {}
local t = setmetatable({}, {__newindex = function(tbl, k, v) log[#log + 1] = k; rawset(tbl, k, v * 2) end})
t.a = 1; t.b = 2; t.a = 10
print(t.a, t.b, #log, log[1], log[2])
local store = {}
local proxy = setmetatable({}, {__newindex = store, __index = store})
proxy.x = 5
print(rawget(proxy, "x"), store.x, proxy.x)
local ro = setmetatable({}, {__newindex = function(_, k) error("read-only: " .. k, 2) end})
print(pcall(function() ro.z = 1 end))
