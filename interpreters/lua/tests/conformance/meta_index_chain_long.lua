-- long __index chains, and __index/__newindex through proxies in hot loops
local base = {value = "bottom"}
local top = base
for i = 1, 60 do top = setmetatable({["level" .. i] = i}, {__index = top}) end
print(top.value, top.level1, top.level60, top.missing)
local proxy_log = 0
local store = {}
local proxy = setmetatable({}, {
  __index = function(_, k) proxy_log = proxy_log + 1 return store[k] end,
  __newindex = function(_, k, v) proxy_log = proxy_log + 1 store[k] = v end,
})
for i = 1, 200 do proxy[i % 10] = (proxy[i % 10] or 0) + i end
print(proxy_log, store[0], store[9])
