-- Recursive Fibonacci: calls and integer arithmetic. Size: n (default 35).
local n = tonumber(arg and arg[1]) or 35
local function fib(k)
  if k < 2 then return k end
  return fib(k - 1) + fib(k - 2)
end
print(fib(n))
