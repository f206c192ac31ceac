local inner = {}
local mid = setmetatable({}, {__newindex = inner})
local outer = setmetatable({}, {__newindex = mid})
outer.k = "v"
print(rawget(outer, "k"), rawget(mid, "k"), inner.k)
local existing = setmetatable({k = 1}, {__newindex = function() error("not called") end})
existing.k = 2
print(existing.k)
