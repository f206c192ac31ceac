error(setmetatable({}, {__tostring = function() return "custom object" end}))
