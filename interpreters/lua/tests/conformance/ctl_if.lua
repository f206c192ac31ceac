local function cls(n)
  if n < 0 then return "neg"
  elseif n == 0 then return "zero"
  elseif n < 10 then return "small"
  else return "big" end
end
for _, v in ipairs({-5, 0, 3, 50}) do print(v, cls(v)) end
if nil then print("nil true") else print("nil false") end
if false then print("x") end
if 0 then print("0 is true") end
if "" then print("empty string is true") end
