error({code = 1})
