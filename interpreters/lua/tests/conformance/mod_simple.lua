-- a module for require tests (not a test program itself)
local M = {}
M.loaded_count = (M.loaded_count or 0) + 1
function M.greet(name) return "hello " .. name end
print("loading mod_simple", (...))
return M
