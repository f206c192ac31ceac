-- String building: concatenation, table.concat, string.format, rep, sub, byte, upper, gsub.
-- Size: iterations (default 400000).
local N = tonumber(arg and arg[1]) or 400000
local parts = {}
for i = 1, N do parts[#parts + 1] = string.format("%d:%s;", i, i % 3 == 0 and "fizz" or "x") end
local s = table.concat(parts)
local h = 0
for i = 1, #s, 7 do h = (h * 31 + s:byte(i)) % 1000000007 end
local acc = ""
for i = 1, math.floor(N / 10) do
  acc = acc .. string.char(97 + i % 26)
  if #acc > 200 then acc = acc:sub(100) end
end
local words = 0
for w in s:sub(1, 200000):gmatch("%a+") do words = words + #w end
local up = s:sub(1, 100000):upper():gsub("FIZZ", "buzz")
local lines = {}
for i = 1, math.floor(N / 10) do lines[i] = ("ab"):rep(i % 10) .. tostring(i) end
print(#s, h, #acc, words, #up, #table.concat(lines, "\n"))
