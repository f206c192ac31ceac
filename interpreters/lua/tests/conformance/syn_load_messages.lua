-- syntax errors reported by load, with chunk names
local cases = {
  "x = = 1", "if x then", "for i = 1 do end", "local 1 = 2", "return return",
  "a.b:c = 1", "f(", "x = }", "local t = {", "while true do", "repeat until",
  "x = 'abc", "goto l", "::l:: ::l::", "return 1 +", "a, b", "local function end",
  "x = 1e", "x = 0x", "x = 1..2", "print('a' 'b')", "(f)", "local x <close>, y <close> = 1, 2",
  "function f(a, ...) end function g(..., a) end", "x = #", "t = {[1] 2}",
}
for _, src in ipairs(cases) do
  local f, e = load(src, "=src")
  print(f == nil, e)
end
