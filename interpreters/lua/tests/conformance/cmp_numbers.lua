-- comparisons across integer and float subtypes are exact
print(1 < 2, 1 < 1.5, 1.5 < 2, 2 <= 2.0, 2.0 >= 2, 3 > 2.9)
print(1 == 1.0, 0 == -0.0, math.maxinteger == 2^63, math.maxinteger < 2^63)
print(math.maxinteger + 0.0 == 2^63, math.mininteger == -2^63)
print(2^53 == 2^53 + 1, (1 << 53) + 1 == 2^53, (1 << 53) + 1 > 2^53)
local nan = 0/0
print(nan == nan, nan < nan, nan <= nan, nan > 1, 1 < nan, nan ~= nan)
print(math.huge > math.maxinteger, -math.huge < math.mininteger)
print(1 < math.huge, math.mininteger <= -math.huge)
