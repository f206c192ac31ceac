local function f(...) return select("#", ...), ... end
print(f())
print(f(nil))
print(f(1, nil, nil))
local function g(a, ...) local t = {...} return a, #t, ... end
print(g(1, 2, 3))
local function h(...) local a, b = ... return a, b end
print(h(5), h(6, 7, 8))
print(select(2, "a", "b", "c"))
print(select(-1, "a", "b", "c"))
print(select(-2, "a", "b", "c"))
local function pk(...) local t = table.pack(...) return t.n, t[1], t[3] end
print(pk(1, nil, 3, nil))
local function sum(...) local s = 0 for i = 1, select("#", ...) do s = s + (select(i, ...)) end return s end
print(sum(1, 2, 3, 4.5))
print(pcall(select, 0, 1))
local function va2(...) return ..., "end" end
print(va2(1, 2))
