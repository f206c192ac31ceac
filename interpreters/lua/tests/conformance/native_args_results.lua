-- Native functions with few and many arguments and results (their arguments move from the
-- caller's registers into a buffer reused between calls): nested native -> Lua -> native
-- calls, errors raised by natives with their argument messages, varargs passed to natives.

print(select('#', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20))
print(select(-2, 'a', 'b', 'c', 'd'))
print(select(18, table.unpack({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 })))
local big = {}
for i = 1, 300 do big[i] = i * 2 end
local packed = table.pack(table.unpack(big))
print(packed.n, packed[1], packed[300], select('#', table.unpack(big)))
print(math.max(3, 9, 1, 7, 2, 8, 4, 6, 5), math.min(3, 9, 1, 7, 2, 8, 4, 6, 5, -1.5))
print(string.format('%d %s %5.2f %x %q %s %s %s %s', 1, 'two', 3.14159, 255, 'q"', nil, true, {} ~= nil, 9))
print(assert(1, 2, 3, 'four'))
print(tostring(nil), tostring(12), tonumber('0x10'), tonumber('z', 36), tonumber('  12  '))

-- natives calling Lua calling natives
local t = { 5, 3, 8, 1, 9, 2, 7 }
table.sort(t, function(a, b)
  local da, db = math.abs(a - 4.5), math.abs(b - 4.5)
  if da ~= db then return da < db end
  return a < b
end)
print(table.concat(t, ','))
print((string.gsub('a1b22c333', '%d+', function(d) return string.rep('#', #d) .. tostring(#d) end)))
print(pcall(string.rep, 'ab', 3, '-'))
print(pcall(select, 2, 'x', 'y', 'z'))
print(select('#', pcall(table.unpack, { 1, 2, 3, nil, 5 }, 1, 5)))
local function va(...) return select('#', ...), math.max(...) end
print(va(4, 8, 2))
print(pcall(va))

-- errors from natives: messages name the function and the argument
print(pcall(string.rep))
print(pcall(string.sub, 'abc', {}))
print(pcall(math.floor, 'x'))
print(pcall(setmetatable, 1, {}))
print(pcall(table.insert, {}, 1, 2, 3))
print(pcall(string.char, 65, 66, 300))
print(pcall(ipairs))
print(pcall(error, 'plain', 0))
local ok7, e7 = pcall(error, { code = 7 })
print(ok7, type(e7), e7.code)
local ok, e = pcall(error)
print(ok, e)

-- a native called many times in a loop, with results wanted 0, 1 and all
local s, n = 0, 0
for i = 1, 2000 do
  s = s + math.floor(i / 3)
  local a, b = math.modf(i / 7)
  n = n + a
  string.len('x')
end
print(s, n, select('#', math.modf(2.5)), (math.modf(2.5)))
local parts = {}
for w in string.gmatch('one two three four', '%a+') do parts[#parts + 1] = string.upper(w) end
print(table.concat(parts, ' '))
