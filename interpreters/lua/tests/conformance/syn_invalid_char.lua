local a = 1 @ 2
