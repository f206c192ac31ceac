local t = {}
t.missing(1)
