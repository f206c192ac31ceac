-- Mandelbrot set: float loops; prints a checksum of the bitmap, not the image. Size: width (default 1000).
local N = tonumber(arg and arg[1]) or 1000
local iter = 50
local sum, set = 0, 0
for y = 0, N - 1 do
  local ci = 2 * y / N - 1
  local bits, nbits = 0, 0
  for x = 0, N - 1 do
    local cr = 2 * x / N - 1.5
    local zr, zi, zr2, zi2 = 0.0, 0.0, 0.0, 0.0
    local inside = 1
    for _ = 1, iter do
      zi = 2 * zr * zi + ci
      zr = zr2 - zi2 + cr
      zr2 = zr * zr
      zi2 = zi * zi
      if zr2 + zi2 > 4 then inside = 0; break end
    end
    bits = bits * 2 + inside
    set = set + inside
    nbits = nbits + 1
    if nbits == 8 then sum = (sum * 31 + bits) % 1000000007; bits, nbits = 0, 0 end
  end
  if nbits > 0 then sum = (sum * 31 + bits) % 1000000007 end
end
print(N, set, sum)
