local buf = {}
for i = 1, 500 do buf[#buf + 1] = string.format("%03d", i % 1000) end
local s = table.concat(buf)
print(#s, s:sub(1, 12), s:sub(-6))
local count = 0
for i = 1, 300 do if (("x"):rep(i % 5) .. "y"):find("xy") then count = count + 1 end end
print(count)
local u = ""
for i = 1, 200 do u = u .. string.char(65 + i % 26) end
print(#u, u:sub(1, 30), u:upper() == u, u:lower():sub(1, 5))
local words = 0
for i = 1, 200 do for _ in ("a bb ccc"):gmatch("%a+") do words = words + 1 end end
print(words)
