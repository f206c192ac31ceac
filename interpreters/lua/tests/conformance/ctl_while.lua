local i, s = 0, 0
while i < 10 do i = i + 1; s = s + i end
print(i, s)
while false do print("never") end
local n = 0
while true do n = n + 1 if n > 5 then break end end
print(n)
local a = {}
local k = 1
while k <= 3 do local kk = k; a[k] = function() return kk end; k = k + 1 end
print(a[1](), a[2](), a[3]())
