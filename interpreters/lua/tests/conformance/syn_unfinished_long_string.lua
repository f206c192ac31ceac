local s = [[abc
def
