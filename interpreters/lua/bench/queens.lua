-- N queens, counting every solution by backtracking over arrays. Size: n (default 12).
local N = tonumber(arg and arg[1]) or 12
local function count(n)
  local cols, d1, d2 = {}, {}, {}
  local solutions = 0
  local function place(r)
    if r > n then solutions = solutions + 1 return end
    for c = 1, n do
      if not cols[c] and not d1[r + c] and not d2[r - c + n] then
        cols[c], d1[r + c], d2[r - c + n] = true, true, true
        place(r + 1)
        cols[c], d1[r + c], d2[r - c + n] = false, false, false
      end
    end
  end
  place(1)
  return solutions
end
local first = count(N)
print(N, first, first + count(N))
