local function f()
  error("custom failure")
end
f()
