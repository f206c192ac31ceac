-- decimal and hex integer literals, including wrap-around of large hex
print(0, 1, 42, 1234567890)
print(0x0, 0xff, 0XFF, 0xDeadBeef, 0x7fffffffffffffff)
print(0xffffffffffffffff, 0x10000000000000000, 0x8000000000000000)
print(math.type(10), math.type(0x10))
print(9223372036854775807, math.type(9223372036854775807))
print(9223372036854775808, math.type(9223372036854775808))
print(-9223372036854775808, math.type(-9223372036854775808))
print(00012, 0x000a)
