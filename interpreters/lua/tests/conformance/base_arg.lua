print(type(arg), arg[0], #arg, arg[1])
print(select("#", ...))
