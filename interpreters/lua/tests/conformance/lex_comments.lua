-- short comment
print(1) -- trailing comment
--[[ long
comment ]] print(2)
--[==[ another
]] still comment
]==] print(3)
---[[ this is a short comment so the next line runs
print(4)
--]]
print(5) --[[inline]] print(6)
--
print(7)
