-- long brackets of several levels; first newline skipped; no escapes inside
local a = [[hello]]
local b = [[
first newline skipped]]
local c = [==[contains ]] and ]=] inside]==]
local d = [=[
line1
line2\n not an escape]=]
print(a) print(b) print(c) print(d)
print(#[[]], #[[

]])
local e = [[a
b]]
print(#e, e:byte(2))
