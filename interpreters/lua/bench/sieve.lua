-- Sieve of Eratosthenes, repeated: array stores and loads. Size: limit (default 2000000).
local limit = tonumber(arg and arg[1]) or 2000000
local function sieve(n)
  local composite = {}
  for i = 1, n do composite[i] = false end
  local count = 0
  for i = 2, n do
    if not composite[i] then
      count = count + 1
      for j = i * i, n, i do composite[j] = true end
    end
  end
  return count
end
local sum = 0
for _ = 1, 3 do sum = sum + sieve(limit) end
print(limit, sieve(limit), sum)
