local x <foo> = 1
