-- a module that requires another (not a test program itself)
local s = require("mod_simple")
return {twice = function(n) return s.greet(n) .. "!" end}
