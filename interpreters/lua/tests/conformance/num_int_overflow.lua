-- integer arithmetic wraps around
local maxi, mini = math.maxinteger, math.mininteger
print(maxi + 1 == mini, mini - 1 == maxi, maxi * 2, mini * -1, -mini)
print(maxi * maxi, mini * mini)
print(mini // -1, mini % -1)
print(maxi + 1.0, math.type(maxi + 1.0))
print(1 << 63, (1 << 63) - 1)
print(math.abs(mini), mini == -mini)
