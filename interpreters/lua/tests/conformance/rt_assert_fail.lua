assert(1 == 2, "values differ")
