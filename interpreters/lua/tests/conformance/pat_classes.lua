local s = "aB3 _\t.!\n"
for _, c in ipairs({"%a", "%d", "%l", "%s", "%u", "%w", "%x", "%p", "%c", "%g", "%A", "%D", "%S", "%W"}) do
  local out = s:gsub(c, "#")
  io.write(c, "=", (out:gsub("\n", "N"):gsub("\t", "T")), " ")
end
print()
print(("0x1F zz"):gsub("%x", "h"))
print(("a%b"):gsub("%%", "pct"))
print(("a.b"):gsub("%.", "dot"))
