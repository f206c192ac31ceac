-- sums the numbers on stdin (io_read_numbers.in)
local sum, n = 0, 0
while true do
  local x = io.read("n")
  if not x then break end
  sum = sum + x; n = n + 1
end
print(n, sum, math.type(sum))
print(io.read("a") == "", io.read("l"))
