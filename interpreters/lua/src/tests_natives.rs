//! Natives the portal runs in the trace (`jit::fast_native`, `jit::fast_iter`, string keys,
//! closures): each compiles without a call of `simple`, and gives what the library gives on
//! the edge cases (the plain loop runs the library; `three_modes_agree` compares it with
//! jitcode and the JIT).

use crate::tests::{jit_loops, three_modes_agree};

/// A Lua function `h(acc, v)` that folds `tostring(v)`'s bytes into `acc`, so that a test
/// compares strings, nils and booleans through the integer `R`.
const HASH: &str = "local function h(acc, v)
       local s = tostring(v)
       for i = 1, #s do acc = (acc * 31 + s:byte(i)) % 1000000007 end
       return (acc * 7 + #s) % 1000000007
     end
";

/// The loop traces of `src` (which sets `R`) hold no call of `simple` or `step`, and each of
/// `want` (a function the trace calls instead, `ConstFn(name)`) appears in them.
fn assert_without_simple(src: &str, want: &[&str]) {
    let traces = three_modes_agree(src);
    let all = traces.join("\n");
    assert!(!all.contains("ConstFn(simple)"), "{all}");
    assert!(!all.contains("ConstFn(step)"), "{all}");
    assert!(!all.contains("ConstFn(get_field)"), "{all}");
    for w in want {
        assert!(all.contains(&format!("ConstFn({w})")), "no {w} in\n{all}");
    }
}

/// `s:find(p [, init])` (one or two results), `s:gsub(p, f)` that matches nothing, and
/// `s:method` through the string metatable compile with no call of `simple` (or of
/// `get_field`, which made the optimizer forget memory at every method lookup).
#[test]
fn find_and_gsub_compile_without_simple() {
    assert_without_simple(
        "local s = '  {\"ab\\\\c\": 12}  ' local n = 0
         for i = 1, 3000 do
           local k = i % #s + 1
           local a = s:find('[^ \\t]', k) or 0
           local b, e = s:find('%d+', k)
           local q = string.find(s, '\"', k, true)
           local g = s:gsub('[%c]', function(c) return '?' end)
           n = n + a + (b or 0) + (e or 0) + (q or 0) + #g
         end
         R = n",
        &["str_find"],
    );
}

/// `table.concat`, a closure of no register, `ipairs` and `pairs` loops, `t[k]` of string
/// keys and `#t` of a table with a hash part only compile with no call of `simple`.
#[test]
fn concat_closures_iterators_and_string_keys_compile_without_simple() {
    assert_without_simple(
        "local n = 0
         local t = {'a', 'bc', 'def'}
         local o = {x = 1, y = 2, z = 3}
         local keys = {'x', 'y', 'z'}
         local up = 5
         local function mk() return function() return up end end
         for i = 1, 3000 do
           n = n + #table.concat(t) + #table.concat(t, ', ')
           local f = mk()
           n = n + f()
           for j, v in ipairs(t) do n = n + j + #v end
           for k, v in pairs(o) do n = n + v + #k end
           local k = keys[i % 3 + 1]
           o[k] = o[k] + 1
           n = n + #o
         end
         R = n",
        &["concat_list", "new_closure", "next_pos", "str_entry"],
    );
}

/// `string.find` in the trace against the library: positions zero, negative, past either end
/// and far before the start; plain finds; anchors; one-item patterns and their `+`; captures
/// (which the library returns: its call); a number as the subject (converted by the library);
/// malformed patterns (the library's error, under `pcall`); an empty pattern and subject.
#[test]
fn find_matches_the_library() {
    let src = format!(
        "{HASH}
         local subjects = {{'', 'a', 'hello world', '  \\t x', 'abc123def', 'aaa', 'x\"y\\\\z'}}
         local pats = {{'[^ \\t\\r\\n]', '[\"\\\\]', '%d+', '%d', 'a', 'a+', '^a', '^a+', 'o', 'l+',
           '', '.', '%a+', '[%c\"\\\\]', 'x', '+', 'a-', 'a*', '(a)', '%s', '^$', '$', '[a-c]+',
           '[^%d]', '[]]', '[a-]', '%.', '[%]]', '.+', '%W', 'l(l)', '()'}}
         local inits = {{0, 1, 2, 5, -1, -3, 11, 12, 13, 100, -100}}
         local acc = 0
         for r = 1, 4 do
           for _, s in ipairs(subjects) do
             for _, p in ipairs(pats) do
               local a, b = s:find(p)
               acc = h(h(acc, a), b)
               for _, i in ipairs(inits) do
                 local c, d = s:find(p, i)
                 local e = string.find(s, p, i)
                 local f, g = s:find(p, i, true)
                 acc = h(h(h(h(h(acc, c), d), e), f), g)
               end
             end
           end
           local a, b, c = ('key=val'):find('(%w+)=')
           acc = h(h(h(acc, a), b), c)
           acc = h(acc, string.find(12345, 34))
           for _, p in ipairs({{'[a', '%', '(()', '[%', 'a[', '%1'}}) do
             local ok, e = pcall(string.find, 'abc', p)
             acc = h(h(acc, ok), e)
           end
         end
         R = acc"
    );
    three_modes_agree(&src);
}

/// `string.gsub` with nothing to replace returns its subject without the library, and the
/// library's results otherwise: function, table, string and number replacements, an anchor,
/// a limit, a replacement of a type the library refuses (its error even with no match), a
/// malformed pattern.
#[test]
fn gsub_matches_the_library() {
    let src = format!(
        "{HASH}
         local subjects = {{'', 'plain', 'q\"uote\\n', 'a\\tb', '\\\\\\\\', 'aaa'}}
         local acc = 0
         local map = {{['\"'] = '\\\\\"', ['\\n'] = '\\\\n'}}
         for r = 1, 30 do
           for _, s in ipairs(subjects) do
             local a, n = s:gsub('[%c\"\\\\]', function(c) return '<' .. c:byte() .. '>' end)
             local b, m = s:gsub('[%c\"\\\\]', map)
             local c = s:gsub('a', '%0%0')
             local d = s:gsub('^a', 7)
             local e, k = s:gsub('a', 'b', 1)
             local f = s:gsub('x', function() return nil end)
             acc = h(h(h(h(h(h(h(h(h(acc, a), n), b), m), c), d), e), k), f)
             local ok, err = pcall(string.gsub, s, 'zzz', true)
             acc = h(h(acc, ok), err)
             ok, err = pcall(string.gsub, s, '[a', 'x')
             acc = h(h(acc, ok), err)
           end
         end
         R = acc"
    );
    three_modes_agree(&src);
}

/// `table.concat` in the trace against the library: numbers (integers and floats), a
/// separator, an empty table, one item (a string or a number), holes (the library's error),
/// a table with `__index` and `__len` (the library's metamethods), a boolean item (its
/// error), explicit bounds (the library's call).
#[test]
fn concat_matches_the_library() {
    let src = format!(
        "{HASH}
         local acc = 0
         local proxy = setmetatable({{}}, {{__index = function(_, i) return 'p' .. i end,
                                          __len = function() return 3 end}})
         for r = 1, 100 do
           acc = h(acc, table.concat({{'a', 1, 2.5, -0.0, 1e100, 'b'}}))
           acc = h(acc, table.concat({{'a', 'b', 'c'}}, ', '))
           acc = h(acc, table.concat({{}}))
           acc = h(acc, table.concat({{}}, 'x'))
           acc = h(acc, table.concat({{'only'}}, 'x'))
           acc = h(acc, table.concat({{7}}))
           acc = h(acc, table.concat(proxy, '-'))
           acc = h(acc, table.concat({{'a', 'b', 'c', 'd'}}, '', 2, 3))
           local ok, e = pcall(table.concat, {{'a', true, 'c'}})
           acc = h(h(acc, ok), e)
           ok, e = pcall(table.concat, {{'a', nil, 'c'}})
           acc = h(h(acc, ok), e)
           local t = {{}}
           t.x = 1
           acc = h(acc, table.concat(t))
         end
         R = acc"
    );
    three_modes_agree(&src);
}

/// `ipairs` and `pairs` in the trace against the library: holes end `ipairs`; `ipairs` of a
/// table with `__index` (Lua 5.4 follows it: the library's call); integer keys in the hash
/// part; `pairs` over the array and the hash part; fields set to nil while `pairs` walks
/// (allowed by Lua); `__pairs`; one and two loop variables.
#[test]
fn iterators_match_the_library() {
    let src = format!(
        "{HASH}
         local acc = 0
         local proxy = setmetatable({{}}, {{__index = function(_, i) if i <= 3 then return i * 10 end end}})
         local custom = setmetatable({{}}, {{__pairs = function(t) return function(_, k)
             if not k then return 1, 'one' elseif k < 3 then return k + 1, 'more' end end, t, nil end}})
         for r = 1, 60 do
           local holes = {{1, 2, nil, 4}}
           for i, v in ipairs(holes) do acc = h(h(acc, i), v) end
           for i, v in ipairs(proxy) do acc = h(h(acc, i), v) end
           local hashed = {{}}
           hashed[3] = 'c' hashed[2] = 'b' hashed[1] = 'a' hashed.k = 'v'
           for i, v in ipairs(hashed) do acc = h(h(acc, i), v) end
           for i in ipairs({{'x', 'y'}}) do acc = h(acc, i) end
           local mixed = {{10, 20, 30, a = 1, b = 2, c = 3}}
           local n = 0
           for k, v in pairs(mixed) do
             acc = h(h(acc, k), v)
             n = n + 1
             if k == 'a' then mixed.b = nil end
             if k == 2 then mixed[3] = nil end
           end
           acc = h(acc, n)
           for k in pairs(hashed) do acc = h(acc, k) end
           for k, v in pairs(custom) do acc = h(h(acc, k), v) end
           for k, v in next, {{5, 6, x = 7}} do acc = h(h(acc, k), v) end
           local t = {{7, y = 8}}
           local k1, v1 = next(t)
           local k2, v2 = next(t, k1)
           local k3 = next(t, k2)
           acc = h(h(h(h(h(h(acc, k1), v1), k2), v2), k3), next({{}}))
           local ok, err = pcall(function() local k = next(t, 'zz') return k end)
           acc = h(h(acc, ok), err)
         end
         R = acc"
    );
    three_modes_agree(&src);
}

/// `t[k]` and `t[k] = v` of string keys that are not constants, and `#t`, in the trace
/// against the library: absent keys (nil, or `__index`), a nil field with `__newindex`, new
/// keys (the library's), keys made at run time (not interned), a table whose integer keys are
/// in the hash part.
#[test]
fn string_keys_and_lengths_match_the_library() {
    let src = format!(
        "{HASH}
         local acc = 0
         local logged = 0
         local base = {{inherited = 'i'}}
         local obj = setmetatable({{own = 1, gone = 2}}, {{__index = base,
             __newindex = function(t, k, v) logged = logged + 1 rawset(t, k, v) end}})
         local keys = {{'own', 'inherited', 'missing', 'gone', ('o' .. 'wn'), ('x'):rep(2)}}
         local plain = {{}}
         for r = 1, 200 do
           obj.gone = nil
           for _, k in ipairs(keys) do
             acc = h(h(acc, obj[k]), plain[k])
             plain[k] = r
             obj[k] = r
             acc = h(acc, rawget(obj, k))
           end
           local t = {{}}
           t.x = 1
           t[2] = 'b' t[1] = 'a'
           acc = h(h(acc, #t), #plain)
         end
         R = acc + logged"
    );
    three_modes_agree(&src);
}

/// A closure made in the trace (`new_closure`: its upvalues are the running closure's) is a
/// new function each time, with the upvalues shared with the enclosing closure; a closure
/// that captures a register of the frame is the library's (`simple`).
#[test]
fn closures_made_in_the_trace_share_their_upvalues() {
    let (traces, _, r) = jit_loops(
        "local count = 0
         local function outer()
           return function() count = count + 1 return count end
         end
         local seen, n = {}, 0
         for i = 1, 3000 do
           local f = outer()
           if not seen[f] then seen[f] = true n = n + 1 end
           local j = i
           local g = function() return j end
           n = n + f() + g()
         end
         R = n * 1000 + count",
    );
    let mut want = 0i64;
    for i in 1..=3000i64 {
        want += 1 + i + i;
    }
    assert_eq!(r, want * 1000 + 3000);
    let all = traces.join("\n");
    assert!(all.contains("ConstFn(new_closure)"), "{all}");
}

/// `string.match` without captures and `tonumber` of one argument in the trace against the
/// library: anchors, positions, patterns with captures (the library's), empty, one-byte and
/// longer matches; numerals in decimal, hexadecimal, with spaces and exponents, malformed
/// ones, numbers, nil, tables and booleans.
#[test]
fn match_and_tonumber_match_the_library() {
    let src = format!(
        "{HASH}
         local subjects = {{'', '-12.5e3,', 'abc123def', '  7', 'x'}}
         local pats = {{'^-?%d+%.?%d*[eE]?[-+]?%d*', '%d+', '%a*', '.', '^x', '(%d)(%d)', 'z', ''}}
         local nums = {{'12', ' 12 ', '0x10', '1e2', '1e', '0x', '1.5', '-0', '  ', 'abc',
           '9223372036854775808', '0x1p4', 12, 1.5, nil, true}}
         local acc = 0
         for r = 1, 40 do
           for _, s in ipairs(subjects) do
             for _, p in ipairs(pats) do
               acc = h(acc, s:match(p))
               for i = -3, 4 do acc = h(acc, s:match(p, i)) end
             end
           end
           for i = 1, 16 do acc = h(acc, tonumber(nums[i])) end
           acc = h(acc, tonumber({{}}))
         end
         R = acc"
    );
    three_modes_agree(&src);
}

/// `s:match(p, i)` of a pattern without captures, `tonumber(s)`, `next(t)` and
/// `string.format` of one `%d` or `%g` compile with no call of `simple`.
#[test]
fn match_tonumber_and_next_compile_without_simple() {
    assert_without_simple(
        "local s = 'x = -12.5e3, y = 7' local n = 0 local t = {a = 1} local e = {}
         for i = 1, 3000 do
           local k = i % 8 + 1
           local m = s:match('^-?%d+%.?%d*[eE]?[-+]?%d*', k)
           local num = tonumber(m or '0x10')
           n = n + num + #(s:match('%a', k) or '')
           if next(t) ~= nil and next(e) == nil then n = n + 1 end
           n = n + #string.format('%d', i) + #string.format('%.14g', i * 1.25)
         end
         R = math.floor(n)",
        &["str_find", "str_num_kind", "format_one"],
    );
}

/// `string.format(f, v)` in the trace (`format_one`) against the library: integers at the
/// ends of their range, negative zero, floats of every exponent, precisions, text around the
/// conversion, `%%` after it, flags and widths (the library's), other types (its errors).
#[test]
fn format_matches_the_library() {
    let src = format!(
        "{HASH}
         local vals = {{0, -7, 42, math.mininteger, math.maxinteger, 1.5, -2.25, 1e100, -0.0, 0.1,
           1/3, 1e15, 2^63, 1e-5, '12', true}}
         local fmts = {{'%d', 'x%dy', '%.14g', '%g', '%.3g', '<%.14g>', '%5d', '%d%%', '%.0g',
           '%.20g', '%d %d', '%s', '%.g', '%i'}}
         local acc = 0
         for r = 1, 20 do
           for _, f in ipairs(fmts) do
             for i = 1, 16 do
               local ok, s = pcall(function() local x = string.format(f, vals[i]) return x end)
               acc = h(h(acc, ok), s)
             end
           end
         end
         R = acc"
    );
    three_modes_agree(&src);
}
