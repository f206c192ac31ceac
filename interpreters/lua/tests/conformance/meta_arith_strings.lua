-- arithmetic on strings goes through the string metatable in 5.4
print("10" + 5, "3" - "1", "2" * 3, "9" / "3", "7" // 2, "7" % "4", "2" ^ 3, -"3")
print(math.type("10" + 5), math.type("10" // 3))
print(pcall(function() return "a" + 1 end))
print(pcall(function() return "1" + {} end))
