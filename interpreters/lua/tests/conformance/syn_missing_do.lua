for i = 1, 2 print(i) end
