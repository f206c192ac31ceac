local function f()
  if true then
    print(1)
end
