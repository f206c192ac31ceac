-- errors in numeric for are caught
print(pcall(function() for i = 1, 10, 0 do end end))
print(pcall(function() for i = 1.0, 10, 0.0 do end end))
print(pcall(function() for i = "a", 10 do end end))
print(pcall(function() for i = 1, {} do end end))
print(pcall(function() for i = 1, 2, nil do end end))
