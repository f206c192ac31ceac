for i = 1, 10, 0 do end
