for i = 1, 10 do if i == 4 then break end io.write(i, " ") end print()
for i = 1, 3 do
  for j = 1, 3 do if j == 2 then break end io.write(i, j, " ") end
end
print()
local t = {}
for k, v in ipairs({10, 20, 30, 40}) do if v > 25 then break end t[#t+1] = v end
print(#t, t[1], t[2])
while true do do break end end
print("done")
