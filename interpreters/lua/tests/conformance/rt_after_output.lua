for i = 1, 3 do print(i) end
io.write("partial")
local n = nil + 1
