//! Building objects in the trace: a new string key stored through the shape's transition
//! (`jit::field_add`, with the native `append_str_key` that writes no memory the trace does
//! not store again), and `return setmetatable({...}, C)`, a tail call of a native run inline
//! (`jit::native_one_result`). Each compiles without the calls that made the optimizer forget
//! memory, and gives what the plain loop gives on the edge cases.

use crate::tests::{jit_loops, three_modes_agree};

/// The loop traces of `src` (which sets `R`) hold none of `banned` and each of `want`.
fn assert_calls(src: &str, banned: &[&str], want: &[&str]) {
    let traces = three_modes_agree(src);
    let all = traces.join("\n");
    for b in banned {
        assert!(!all.contains(&format!("ConstFn({b})")), "{b} in\n{all}");
    }
    for w in want {
        assert!(all.contains(&format!("ConstFn({w})")), "no {w} in\n{all}");
    }
}

/// Constructors with named fields (`{x = x, y = y}` is `{}` and two new keys), new keys
/// added to an object after its constructor, and a class's `new` that returns
/// `setmetatable({...}, C)` compile with no call of `set_field`, `simple` or `tail_native`.
#[test]
fn new_keys_and_setmetatable_tail_calls_compile_without_residual_writes() {
    assert_calls(
        "local P = {} P.__index = P
         function P.new(x, y) return setmetatable({x = x, y = y}, P) end
         function P:sum() return self.x + self.y end
         local n = 0
         for i = 1, 3000 do
           local p = P.new(i, 2 * i)
           local o = {}
           o.a = i
           o.b = 0
           o.c = p
           n = n + p:sum() + o.a + o.b + o.c.y
         end
         R = n",
        &["set_field", "simple", "tail_native", "step"],
        &["append_str_key"],
    );
}

/// A new key reads back in the same iteration from what the trace stored: the loop after
/// `o.a = i` has no load of the field's value between the store and the read (the native
/// call writes nothing the optimizer does not know).
#[test]
fn a_new_key_reads_back_without_a_call_in_between() {
    let (traces, _, r) = jit_loops(
        "local n = 0
         for i = 1, 3000 do
           local o = {}
           o.a = i
           o.b = i + 1
           n = n + o.a + o.b
         end
         R = n",
    );
    assert_eq!(r, (1..=3000).map(|i| 2 * i + 1).sum::<i64>());
    let all = traces.join("\n");
    assert!(all.contains("ConstFn(append_str_key)"), "{all}");
    assert!(!all.contains("ConstFn(set_field)"), "{all}");
}

/// New keys in the trace against the plain loop: a nil value (no key), `__newindex` on the
/// metatable (called, and not when the key holds a value), a metatable without it, more
/// keys than the hash part's first size (it grows) and than an index-free part holds (8),
/// more than a shape holds (128: a dictionary), a full part with mostly dead entries (a
/// compaction, which the trace leaves to the plain loop), constants as values, the order
/// `pairs` then gives, and shapes shared by objects built in other orders.
#[test]
fn new_keys_match_the_plain_loop() {
    three_modes_agree(
        "local function h(acc, v)
           local s = tostring(v)
           for i = 1, #s do acc = (acc * 31 + s:byte(i)) % 1000000007 end
           return (acc * 7 + #s) % 1000000007
         end
         local acc = 0
         local log = {}
         local NI = {__newindex = function(t, k, v) log[#log + 1] = k rawset(t, k, v * 10) end}
         local Plain = {__index = function(t, k) return 'dflt' end}
         for i = 1, 400 do
           local o = {}
           o.a = nil
           o.b = i
           if i % 3 == 0 then o.c = 'three' end
           o.d = false
           for k, v in pairs(o) do acc = h(acc, k) acc = h(acc, v) end
           local m = setmetatable({}, NI)
           m.x = i
           m.x = i + 1
           m.y = 2
           acc = h(acc, m.x) acc = h(acc, m.y)
           local p = setmetatable({}, Plain)
           p.f = i p.g = 'g'
           acc = h(acc, p.f) acc = h(acc, p.g) acc = h(acc, p.zz)
           local big = {}
           big.k1 = 1 big.k2 = 2 big.k3 = 3 big.k4 = 4 big.k5 = 5
           big.k6 = 6 big.k7 = 7 big.k8 = 8 big.k9 = 9 big.k10 = 10
           big.k1 = nil big.k2 = nil big.k3 = nil big.k4 = nil big.k5 = nil big.k6 = nil
           big.k7 = nil big.k8 = nil big.k9 = nil
           big.k11 = 11 big.k12 = 12 big.k13 = 13 big.k14 = 14 big.k15 = 15 big.k16 = 16
           big.k17 = 17 big.k18 = 18
           for k, v in pairs(big) do acc = h(acc, k) acc = h(acc, v) end
           local q = {}
           if i % 2 == 0 then q.u = 1 q.v = 2 else q.v = 2 q.u = 1 end
           q.w = i
           for k, v in pairs(q) do acc = h(acc, k) acc = h(acc, v) end
         end
         for _, k in ipairs(log) do acc = h(acc, k) end
         local wide = {}
         for r = 1, 3 do
           for j = 1, 140 do
             local t = {}
             for l = 1, j do t['f' .. (l % 140)] = l end
             wide[j] = t
           end
         end
         local cnt = 0
         for _, t in ipairs(wide) do for k, v in pairs(t) do cnt = cnt + v end end
         R = (acc + cnt) % 1000000007",
    );
}

/// `return f(...)` of a native run inline for one result (`setmetatable`, `type`,
/// `math.floor`, `math.sqrt`, `string.sub`) against the plain loop: the number of results
/// the caller sees, a table whose metatable is protected (`__metatable`: the library's
/// error), arguments the inline path refuses, and natives that give other counts
/// (`string.byte` out of range, `string.find`, `next`).
#[test]
fn native_tail_calls_match_the_plain_loop() {
    three_modes_agree(
        "local C = {} C.__index = C
         local Locked = {__metatable = 'locked'}
         local function mk(x) return setmetatable({x = x}, C) end
         local function ty(v) return type(v) end
         local function fl(v) return math.floor(v) end
         local function sq(v) return math.sqrt(v) end
         local function sb(s, i, j) return string.sub(s, i, j) end
         local function by(s, i) return s:byte(i) end
         local function fd(s, p) return s:find(p) end
         local function nx(t, k) return next(t, k) end
         local function lock(t, m) return setmetatable(t, m) end
         local n = 0
         for i = 1, 600 do
           local o = mk(i)
           n = n + o.x + select('#', mk(i)) + (getmetatable(o) == C and 1 or 0)
           n = n + #ty(i) + #ty('s') + #ty(o) + select('#', ty(nil))
           n = n + fl(i / 7) + fl(i) + select('#', fl(2.5))
           n = n + math.floor(sq(i)) + select('#', sq(4))
           n = n + #sb('hello world', i % 5, i % 9) + select('#', sb('abc', 5, 9))
           n = n + select('#', by('abc', i % 5)) + (by('abc', 1) or 0)
           n = n + select('#', fd('abcabc', 'c')) + select('#', fd('abc', 'z'))
           n = n + select('#', nx({}, nil)) + select('#', nx({1}, nil))
           local ok = pcall(lock, setmetatable({}, Locked), C)
           n = n + (ok and 1 or 0)
           local ok2, e = pcall(fl, 'x')
           n = n + (ok2 and 1 or 0) + #tostring(e)
           n = n + select('#', sb(i, 1, 2)) + #sb(i, 1, 2)
         end
         R = n",
    );
}

/// `t[k] = v` of string keys made at run time (not interned: the table is a dictionary)
/// that `t` lacks runs in the trace (`append_dict_key`), and against the plain loop: a nil
/// value, `__newindex`, keys set to nil and set again, a full part with mostly dead entries
/// (a compaction: the plain loop's), the hash index past 8 keys, and the order `pairs` gives.
#[test]
fn new_keys_of_dictionaries_run_in_the_trace_and_match_the_plain_loop() {
    let src = "local function h(acc, v)
           local s = tostring(v)
           for i = 1, #s do acc = (acc * 31 + s:byte(i)) % 1000000007 end
           return (acc * 7 + #s) % 1000000007
         end
         local acc = 0
         local NI = {__newindex = function(t, k, v) rawset(t, k, 'ni' .. v) end}
         for r = 1, 60 do
           local t = {}
           local m = setmetatable({}, NI)
           for i = 1, 40 do
             local k = 'key' .. (i % 30)
             t[k] = i
             if i % 7 == 0 then t[k] = nil end
             if i % 5 == 0 then t['nil' .. i] = nil end
             m[k] = i
             acc = h(acc, t[k]) acc = h(acc, m[k])
           end
           for k, v in pairs(t) do acc = h(acc, k) acc = h(acc, v) end
           for k, v in pairs(m) do acc = h(acc, k) acc = h(acc, v) end
         end
         R = acc";
    let traces = three_modes_agree(src);
    let all = traces.join("\n");
    assert!(all.contains("ConstFn(append_dict_key)"), "{all}");
}

/// `t[i]` of an integer key outside the array part of a table whose hash part is empty
/// (binarytrees' `tree[1]` of a leaf `{}`) is nil with no call of `hash_int_entry`; a key
/// in the hash part is still found.
#[test]
fn an_integer_key_of_an_empty_hash_part_is_nil_without_a_call() {
    let src = "local n = 0
         local leaves = {{}, {}, {}}
         for i = 1, 3000 do
           local leaf = leaves[i % 3 + 1]
           if leaf[1] then n = n + 1 end
           if leaf[0] == nil then n = n + 2 end
         end
         R = n";
    let traces = three_modes_agree(src);
    let all = traces.join("\n");
    assert!(!all.contains("ConstFn(hash_int_entry)"), "{all}");
    three_modes_agree(
        "local n = 0
         local t = {[0] = 5, [-3] = 7, x = 1}
         for i = 1, 3000 do
           n = n + (t[0] or 0) + (t[-3] or 0) + (t[i % 4 - 3] or 100)
         end
         R = n",
    );
}
