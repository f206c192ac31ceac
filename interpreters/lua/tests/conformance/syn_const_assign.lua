local x <const> = 1
x = 2
