-- JSON: encodes a generated document to text and parses it back, repeatedly; string scanning,
-- string building and table construction. Size: repetitions (default 80).
local N = tonumber(arg and arg[1]) or 80

local encode
local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    local map = {['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\t'] = '\\t'}
    return map[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end
function encode(v, out)
  local t = type(v)
  if t == "table" then
    if #v > 0 or next(v) == nil then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = encode_string(k)
        out[#out + 1] = ":"
        encode(v[k], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "string" then
    out[#out + 1] = encode_string(v)
  elseif t == "number" then
    if v % 1 == 0 and v > -1e15 and v < 1e15 then out[#out + 1] = string.format("%d", v)
    else out[#out + 1] = string.format("%.14g", v) end
  elseif t == "boolean" then
    out[#out + 1] = v and "true" or "false"
  else
    out[#out + 1] = "null"
  end
  return out
end

local decode_value
local function skip(s, i)
  return s:find("[^ \t\r\n]", i) or #s + 1
end
local escapes = {b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/"}
local function decode_string(s, i)
  local buf = {}
  local j = i + 1
  while true do
    local c = s:sub(j, j)
    if c == '"' then return table.concat(buf), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      if e == "u" then
        buf[#buf + 1] = string.char(tonumber(s:sub(j + 2, j + 5), 16) % 256)
        j = j + 6
      else
        buf[#buf + 1] = escapes[e]
        j = j + 2
      end
    else
      local k = s:find('["\\]', j)
      buf[#buf + 1] = s:sub(j, k - 1)
      j = k
    end
  end
end
function decode_value(s, i)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then
    local obj = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return obj, i + 1 end
    while true do
      local k
      k, i = decode_string(s, skip(s, i))
      i = skip(s, i) + 1 -- the colon
      obj[k], i = decode_value(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      i = i + 1
      if d == "}" then return obj, i end
    end
  elseif c == "[" then
    local arr = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return arr, i + 1 end
    while true do
      arr[#arr + 1], i = decode_value(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      i = i + 1
      if d == "]" then return arr, i end
    end
  elseif c == '"' then
    return decode_string(s, i)
  elseif c == "t" then return true, i + 4
  elseif c == "f" then return false, i + 5
  elseif c == "n" then return nil, i + 4
  else
    local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
    return tonumber(num), i + #num
  end
end

local function make_doc(n)
  local items = {}
  for i = 1, n do
    items[i] = {
      id = i, name = "item " .. i, price = i * 1.25, tags = {"a" .. i % 7, "b" .. i % 3, "q\"uote\n"},
      active = i % 2 == 0, nested = {depth = {value = i * i, list = {i, i + 1, i + 2}}},
    }
  end
  return {items = items, count = n, title = "benchmark \\ document"}
end

local doc = make_doc(200)
local text, checksum = "", 0
for _ = 1, N do
  text = table.concat(encode(doc, {}))
  local back = decode_value(text, 1)
  checksum = (checksum + #text + back.count + back.items[100].nested.depth.value) % 1000000007
  doc = back
end
print(#text, checksum, doc.items[7].tags[3] == "q\"uote\n", doc.title)
