local a = {}
local b = a.count + 1
