local function lvl1() error("level1", 1) end
local function lvl2() error("level2", 2) end
local function caller() lvl2() end
print(pcall(lvl1))
print(pcall(caller))
local function check(x) if type(x) ~= "number" then error("expected number", 2) end return x end
local function user() local v = check("s") return v end
print(pcall(user))
print(pcall(function() error("lvl0", 0) end))
local function deep3() error("three", 3) end
local function deep2() deep3() end
local function deep1() deep2() end
print(pcall(deep1))
