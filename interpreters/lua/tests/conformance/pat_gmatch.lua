for w in ("one two  three"):gmatch("%a+") do io.write(w, ";") end print()
for k, v in ("a=1, b=2, c=3"):gmatch("(%w+)=(%w+)") do io.write(k, v, " ") end print()
local n = 0
for _ in ("aaaa"):gmatch("") do n = n + 1 end print(n)
for pos in ("abc"):gmatch("()") do io.write(pos, " ") end print()
for a in ("xyz"):gmatch(".") do io.write(a, ".") end print()
local it = ("1 2 3"):gmatch("%d")
print(it(), it(), it(), it())
for w in ("hello"):gmatch("^h") do io.write("anchor:", w, " ") end print()
