local p = table.pack(1, nil, 3)
print(p.n, p[1], p[2], p[3])
local e = table.pack()
print(e.n, #e)
print(table.unpack(table.pack(4, 5, 6)))
local function roundtrip(...) return table.unpack(table.pack(...), 1, select("#", ...)) end
print(roundtrip(1, nil, nil))
print(select("#", roundtrip(1, nil, nil)))
