//! Unit tests of the pieces (the conformance suite under `tests/` drives the binary).

use crate::value::{fmt_float, str_to_number, Value};
use crate::vm::Vm;
use crate::Mode;

fn num(s: &str) -> Option<Value> {
    str_to_number(s.as_bytes())
}

/// The portal's jitcode frames are small: register allocation gives values that are never
/// live at once one register (the codewriter's one register per value made 1,124 int, 67
/// float and 234 ref registers; 13, 4 and 11 when this test was written). Every frame the
/// tracer, the blackhole interpreter and resume build holds them all.
#[test]
fn the_portal_frame_holds_few_registers() {
    let code = crate::jit::portal::jitcode();
    let total: usize = code.num_regs.iter().map(|&n| usize::from(n)).sum();
    assert!(code.ops.len() > 1000, "{} ops", code.ops.len());
    assert!(total <= 64, "{:?} registers", code.num_regs);
}

#[test]
fn sizes_stay_small() {
    // `repr(C, u8)` (for the JIT) puts the payload after the tag at its own alignment.
    assert_eq!(std::mem::size_of::<crate::proto::Op>(), 12);
    assert_eq!(std::mem::size_of::<Value>(), 16);
}

#[test]
fn numerals_convert_as_lua_does() {
    assert!(matches!(num("0x10"), Some(Value::Int(16))));
    assert!(matches!(num("0xffffffffffffffff"), Some(Value::Int(-1))));
    assert!(matches!(num(" 12 "), Some(Value::Int(12))));
    assert!(matches!(num("9223372036854775808"), Some(Value::Num(f)) if f == 2f64.powi(63)));
    assert!(matches!(num("0x1p4"), Some(Value::Num(f)) if f == 16.0));
    assert!(matches!(num("0x.8"), Some(Value::Num(f)) if f == 0.5));
    assert!(matches!(num("1e2"), Some(Value::Num(f)) if f == 100.0));
    assert!(num("1e").is_none());
    assert!(num("0x").is_none());
    assert!(num("1 2").is_none());
}

#[test]
fn floats_print_as_puc_lua() {
    assert_eq!(fmt_float(1.0), "1.0");
    assert_eq!(fmt_float(-0.0), "-0.0");
    assert_eq!(fmt_float(1e15), "1e+15");
    assert_eq!(fmt_float(0.1), "0.1");
    assert_eq!(fmt_float(1.0 / 3.0), "0.33333333333333");
    assert_eq!(fmt_float(f64::INFINITY), "inf");
    assert_eq!(fmt_float(2f64.powi(63)), "9.2233720368548e+18");
}

#[test]
fn format_conversions() {
    use crate::stdlib::format::{fmt_a, fmt_e, fmt_g};
    assert_eq!(fmt_e(1234.5, 2, false), "1.23e+03");
    assert_eq!(fmt_g(100000.0, 6, false, false), "100000");
    assert_eq!(fmt_g(1e-5, 6, false, false), "1e-05");
    assert_eq!(fmt_a(1.0, None, false), "0x1p+0");
    assert_eq!(fmt_a(3.0, None, false), "0x1.8p+1");
    assert_eq!(fmt_a(0.0, None, false), "0x0p+0");
}

#[test]
fn table_border_and_traversal() {
    let t = crate::table::Table::default();
    for i in 1..=10 {
        t.set_int(i, Value::Int(i));
    }
    t.set(Value::str("x"), Value::Int(99));
    assert_eq!(t.len(), 10);
    t.set_int(10, Value::Nil);
    assert_eq!(t.len(), 9);
    // Hash keys that continue the array move into it.
    t.set_int(11, Value::Int(11));
    t.set_int(10, Value::Int(10));
    assert_eq!(t.len(), 11);
    let mut n = 0;
    let mut k = Value::Nil;
    while let Ok(Some((nk, _))) = t.next(&k) {
        n += 1;
        k = nk;
    }
    assert_eq!(n, 12);
    assert!(t.next(&Value::str("missing")).is_err());
}

#[test]
fn patterns_match() {
    use crate::stdlib::pattern::Matcher;
    let src = b"key = value";
    let mut m = Matcher::new(src, b"(%w+)%s*=%s*(%w+)");
    assert_eq!(m.do_match(0, 0).unwrap(), Some(src.len()));
    assert_eq!(m.level, 2);
    let mut m = Matcher::new(b"f(a(b)c)", b"%b()");
    assert_eq!(m.do_match(1, 0).unwrap(), Some(8));
    let mut m = Matcher::new(b"x", b"[a");
    assert!(m.do_match(0, 0).is_err());
}

pub(crate) fn run(src: &str, mode: Mode) -> Result<Vm, String> {
    let mut vm = Vm::new();
    vm.mode = mode;
    let f = vm.load(src.as_bytes(), "test")?;
    match vm.run_main(&f, vec![]) {
        Ok(_) => Ok(vm),
        Err(e) => Err(crate::error_report(&mut vm, &e)),
    }
}

pub(crate) fn global_int(vm: &Vm, name: &str) -> i64 {
    match vm.get_global(name) {
        Value::Int(i) => i,
        v => panic!("{name} is {v:?}"),
    }
}

const PROGRAM: &str = r#"
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local acc = 0
for i = 1, 200 do acc = acc + i * 2 - 1 end
local j, w = 0, 0
while j < 300 do w = w + j; j = j + 1 end
local t = {}
for i = 1, 50 do t[#t + 1] = i end
local mt = setmetatable({}, {__index = function(_, k) return k * 3 end})
local s = ("abc"):rep(3):upper()
R1, R2, R3, R4, R5, R6 = fib(15), acc, w, #t, mt[7], #s
"#;

#[test]
fn program_gives_the_same_results_in_every_mode() {
    for mode in [Mode::NoJit, Mode::Jitcode, Mode::Jit] {
        let vm = run(PROGRAM, mode).unwrap();
        let got: Vec<i64> = ["R1", "R2", "R3", "R4", "R5", "R6"]
            .iter()
            .map(|n| global_int(&vm, n))
            .collect();
        assert_eq!(got, vec![610, 40000, 44850, 50, 21, 9], "mode {mode:?}");
    }
}

#[test]
fn deep_recursion_is_a_lua_error() {
    let e = run("local function f() return 1 + f() end f()", Mode::NoJit)
        .err()
        .expect("an error");
    assert!(e.starts_with("test:1: stack overflow"), "{e}");
}

#[test]
fn errors_name_the_variable() {
    let e = run("local t = nil\nlocal y = t.x", Mode::NoJit)
        .err()
        .unwrap();
    assert!(
        e.starts_with("test:2: attempt to index a nil value (local 't')"),
        "{e}"
    );
    let e = run("undefinedf()", Mode::Jitcode).err().unwrap();
    assert!(
        e.starts_with("test:1: attempt to call a nil value (global 'undefinedf')"),
        "{e}"
    );
}

#[test]
fn syntax_errors_read_as_puc_lua() {
    let mut vm = Vm::new();
    let e = vm.load(b"x = = 1", "t.lua").err().unwrap();
    assert_eq!(e, "t.lua:1: unexpected symbol near '='");
    let e = vm.load(b"for i=1,2 do\n", "t.lua").err().unwrap();
    assert_eq!(
        e,
        "t.lua:2: 'end' expected (to close 'for' at line 1) near <eof>"
    );
}

/// A small deterministic generator for the fuzz tests.
fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

const TOKENS: &[&str] = &[
    "local",
    "x",
    "y",
    "=",
    "1",
    "0x1p4",
    "'s'",
    "[[l]]",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    "function",
    "end",
    "if",
    "then",
    "else",
    "elseif",
    "while",
    "do",
    "for",
    "in",
    "repeat",
    "until",
    "return",
    "break",
    "goto",
    "::",
    "lbl",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "^",
    "..",
    "==",
    "~=",
    "<",
    "<=",
    "and",
    "or",
    "not",
    "#",
    "~",
    "&",
    "|",
    "<<",
    ">>",
    ".",
    ":",
    "...",
    "nil",
    "true",
    "false",
    "print",
    "<const>",
    "\n",
    "--c\n",
    "3.5",
    "\"\\x41\"",
];

#[test]
fn random_bytes_and_token_soups_never_panic() {
    let mut seed = 0x2545F4914F6CDD1Du64;
    for _ in 0..3000 {
        let n = (xorshift(&mut seed) % 60) as usize;
        let bytes: Vec<u8> = (0..n).map(|_| (xorshift(&mut seed) % 128) as u8).collect();
        let mut vm = Vm::new();
        let _ = vm.load(&bytes, "fuzz");
        let mut src = String::new();
        for _ in 0..(xorshift(&mut seed) % 40) {
            src.push_str(TOKENS[(xorshift(&mut seed) % TOKENS.len() as u64) as usize]);
            src.push(' ');
        }
        // Compiling must not panic; running could loop, so only straight-line chunks run.
        if let Ok(f) = vm.load(src.as_bytes(), "fuzz") {
            if !src.contains("while")
                && !src.contains("repeat")
                && !src.contains("goto")
                && !src.contains("for")
                && !src.contains("function")
            {
                let _ = vm.run_main(&f, vec![]);
            }
        }
    }
}

/// Runs `src` with the JIT on at threshold 3, keeping optimized traces; returns the loops'
/// traces as text (`call` ops counted by the caller) and the global `R`.
pub(crate) fn jit_loops(src: &str) -> (Vec<String>, Vec<usize>, i64) {
    crate::jit::portal::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,keep_optimized=1").unwrap();
    });
    let vm = run(src, Mode::Jit).unwrap();
    let r = global_int(&vm, "R");
    let stats = crate::jit::portal::with_driver(|d| d.stats());
    let calls = ["call_i", "call_f", "call_r", "call_n"];
    let loops: Vec<_> = stats
        .traces
        .iter()
        .filter(|t| t.optimized.is_some())
        .collect();
    let texts = loops.iter().map(|t| t.optimized().to_string()).collect();
    let ncalls = loops
        .iter()
        .map(|t| calls.iter().map(|c| t.count(c)).sum())
        .collect();
    (texts, ncalls, r)
}

/// Runs `src` (which sets the global `R` to an integer) with the JIT off, on jitcode alone and
/// with the JIT at a low threshold, asserts that the three agree and that a loop compiled, and
/// gives the optimized traces.
pub(crate) fn three_modes_agree(src: &str) -> Vec<String> {
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let jitcode = global_int(&run(src, Mode::Jitcode).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert_eq!(jitcode, plain);
    assert_eq!(on, plain);
    assert!(!traces.is_empty(), "no loop compiled");
    traces
}

/// Asserts that the compiled traces make no call at all (the integer-key table paths
/// `hash_int_entry` and `set_int_hash` named first, for the message).
fn assert_no_calls(traces: &[String], calls: &[usize]) {
    let all = traces.join("\n");
    assert!(!all.contains("ConstFn(hash_int_entry)"), "{all}");
    assert!(!all.contains("ConstFn(set_int_hash)"), "{all}");
    assert!(calls.iter().all(|&c| c == 0), "calls {calls:?} in\n{all}");
}

/// With values `Copy` and tables changed through cells, the portal runs `GetTable` and
/// `SetTable` on the array part with an integer key, and `Mov` of any value, inline: a loop
/// made of them compiles to a trace that reads and writes the items itself, with no call.
#[test]
fn array_loops_compile_without_calls() {
    // The sieve's inner loop: stores into the array part (in place).
    let (traces, calls, r) = jit_loops(
        "local t = {} for i = 1, 300 do t[i] = false end
         for j = 4, 300, 2 do t[j] = true end
         local n = 0 for i = 1, 300 do if t[i] then n = n + 1 end end
         R = n",
    );
    assert_eq!(r, 149);
    assert!(!traces.is_empty(), "no loop compiled");
    assert!(
        calls.iter().all(|&c| c == 0),
        "calls {calls:?} in\n{}",
        traces.join("\n")
    );
    assert!(traces
        .iter()
        .any(|t| t.contains("setfield(") || t.contains("setarrayitem(")));
    // Appending (`t[i] = v` at the key after the last) while the part has room, reading,
    // copying values of any type (`Mov` of a table, a string).
    let (traces, calls, r) = jit_loops(
        "local src, dst = {}, {}
         for i = 1, 200 do src[i] = i * 3 end
         local s, x = 0, 'x'
         for i = 1, 200 do local u = src local y = x dst[i] = u[i] s = s + dst[i] end
         R = s + #dst",
    );
    assert_eq!(r, 3 * 200 * 201 / 2 + 200);
    assert!(!traces.is_empty(), "no loop compiled");
    assert!(
        calls.iter().all(|&c| c == 0),
        "calls {calls:?} in\n{}",
        traces.join("\n")
    );
}

/// A table with a metatable, a hole or a hash part goes to the plain loop and keeps Lua's
/// semantics (`__newindex` on a nil item, `__index` for a hole) with the JIT on.
#[test]
fn array_fast_paths_leave_metatables_to_the_plain_loop() {
    let (_, _, r) = jit_loops(
        "local log = 0
         local t = setmetatable({1, 2, nil, 4}, {
           __index = function(_, k) return 100 * k end,
           __newindex = function(t, k, v) log = log + k rawset(t, k, v) end })
         local s = 0
         for i = 1, 50 do s = s + t[(i % 4) + 1] end
         for i = 5, 40 do t[i] = i end
         R = s * 1000 + log",
    );
    // Items 1, 2, 4 and 300 for the hole, 12 or 13 times each; keys 5..40 through __newindex.
    let mut s = 0;
    for i in 1..=50 {
        s += [1, 2, 300, 4][i % 4];
    }
    assert_eq!(r, s * 1000 + (5..=40).sum::<i64>());
}

/// Integer keys of a hash part (`t[0]` as fannkuch's arrays start at 0, negative keys, keys
/// past a gap) are read and updated in place by the trace after one read-only call that finds
/// the entry (`hash_int_entry`, `writes_nothing`), not by leaving the loop for `step`, nor by
/// a call that reads or stores the value (`get_int_hash` and `set_int_hash` were such calls);
/// a new key still goes through `set_int_hash`. The results are the plain loop's.
#[test]
fn hash_part_integer_keys_stay_in_the_loop() {
    let src = "local t = {[0] = 0, [-1] = 5, [100] = 7}
         local s = 0
         for i = 1, 3000 do
           s = s + t[0] + t[-1] + t[100]
           t[0] = i % 13
           t[100] = t[100] + 1
           if i % 1000 == 0 then t[1000 + i] = i end
         end
         R = s * 100 + (t[2000] or 0) % 100";
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert_eq!(on, plain);
    assert!(!traces.is_empty(), "no loop compiled");
    let all = traces.join("\n");
    assert!(all.contains("ConstFn(hash_int_entry)"), "{all}");
    assert!(!all.contains("ConstFn(get_int_hash)"), "{all}");
    assert!(!all.contains("ConstFn(step)"), "{all}");
    let loop0 = &traces[0];
    assert!(!loop0.contains("ConstFn(set_int_hash)"), "{loop0}");
}

/// Integer keys that arrive out of order, or without key 1 (queens' diagonals `d1[r + c]`),
/// end in the array part once more than half its slots would be used (`Table::set_int`'s
/// rehash): the loop that reads and updates them compiles with no call, no `hash_int_entry`
/// in particular.
#[test]
fn integer_keys_out_of_order_move_to_the_array_part() {
    // No loop fills the tables: it would compile with the hash part's calls.
    let fill: String = (2..=40).map(|k| format!("d[{k}] = false ")).collect();
    let (traces, calls, r) = jit_loops(&format!(
        "local d = {{}}
         {fill}
         local u = {{}}
         u[7] = 0 u[3] = 0 u[5] = 0 u[1] = 0 u[8] = 0 u[2] = 0 u[6] = 0 u[4] = 0
         local s = 0
         for j = 1, 100 do
           for k = 2, 40 do
             if not d[k] then s = s + k end
             d[k] = (j + k) % 3 == 0
             u[k % 8 + 1] = u[k % 8 + 1] + 1
           end
         end
         R = s * 1000 + u[1] + #u"
    ));
    let mut s = 0;
    for j in 1..=100 {
        for k in 2..=40 {
            if j == 1 || (j - 1 + k) % 3 != 0 {
                s += k;
            }
        }
    }
    let u1 = (2..=40).filter(|k| k % 8 == 0).count() as i64 * 100;
    assert_eq!(r, s * 1000 + u1 + 8);
    assert!(!traces.is_empty(), "no loop compiled");
    assert_no_calls(&traces, &calls);
}

/// A key whose hash entry holds nil is set through `Table::set_int`, not revived in the hash
/// part by the trace: the key after the array part's last item goes to the array part, and
/// `#t` stays a border (the trace wrote the hash entry, and `#u` stayed 2, before).
#[test]
fn a_dead_hash_entry_is_not_revived_by_the_trace() {
    let src = "local u = {1}
         u[3] = 0 u[3] = nil u[2] = 2
         local s = 0
         for i = 1, 100 do u[3] = i s = s + #u u[3] = nil end
         R = s";
    assert_eq!(global_int(&run(src, Mode::NoJit).unwrap(), "R"), 300);
    let (_, _, on) = jit_loops(src);
    assert_eq!(on, 300);
}

/// Stores into the nil slots of the array part (past `len`, or holes below it) are traced
/// stores, also on a table with a hash part: every key of the part's range that holds a
/// value is in the part, so the trace neither searches the hash part nor calls
/// `set_int_hash`, and a read of a nil slot is nil with no `hash_int_entry`. The sums and
/// `#t` are the plain loop's.
#[test]
fn stores_into_array_part_holes_compile_without_calls() {
    let nils = "nil, ".repeat(256);
    let src = format!(
        "local t = {{{nils}}}
         t.x = 1
         local s = 0
         for j = 1, 20 do
           for i = j, 250, 7 do
             s = s + (t[i + 3] or 0)
             t[i] = i + j
           end
           s = s + #t
         end
         R = s * 1000 + #t"
    );
    let plain = global_int(&run(&src, Mode::NoJit).unwrap(), "R");
    let jitcode = global_int(&run(&src, Mode::Jitcode).unwrap(), "R");
    let (traces, calls, on) = jit_loops(&src);
    assert_eq!(jitcode, plain);
    assert_eq!(on, plain);
    assert_eq!(plain % 1000, 250);
    assert!(!traces.is_empty(), "no loop compiled");
    assert_no_calls(&traces, &calls);
}

/// Stores around the border keep `#t` the plain loop's: nil at `len` (the border moves
/// down past the holes below it, in `Table::set_int`), nil into a hole, values into holes
/// and past `len`, the part's last slot while the hash part holds the key after it (which
/// moves to the array part), and a table with `__index` and `__newindex`, whose nil slots go
/// to the metamethods.
#[test]
fn border_stores_keep_len_of_the_plain_loop() {
    let nils = "nil, ".repeat(16);
    let src = format!(
        "local t = {{}}
         for i = 1, 100 do t[i] = i end
         local s = 0
         for i = 1, 300 do
           local k = i % 100 + 1
           t[#t] = nil
           s = s + #t
           t[k] = nil
           s = s + #t
           t[(k * 7) % 100 + 1] = i
           t[(k * 13) % 100 + 1] = i
           s = s + #t + (t[k] or -1)
         end
         for j = 1, 50 do
           local u = {{nil, nil, nil, nil, nil, nil, nil, nil}}
           u[9] = j
           for i = 8, 1, -1 do u[i] = i s = s + #u end
           s = s + #u + u[9]
         end
         local log = 0
         local m = setmetatable({{{nils}}}, {{
           __index = function(_, k) return 100 * k end,
           __newindex = function(t, k, v) log = log + k rawset(t, k, v) end }})
         for i = 1, 60 do
           local k = i % 16 + 1
           s = s + m[k] + #m
           m[k] = i
         end
         R = s * 10000 + log"
    );
    let plain = global_int(&run(&src, Mode::NoJit).unwrap(), "R");
    let jitcode = global_int(&run(&src, Mode::Jitcode).unwrap(), "R");
    let (traces, _, on) = jit_loops(&src);
    assert_eq!(jitcode, plain);
    assert_eq!(on, plain);
    assert!(!traces.is_empty(), "no loop compiled");
}

/// `{}` in a loop is a call of `new_table`, which writes nothing traced code reads: the
/// trace keeps what it knows of memory across it (the VM's stack buffer and length are not
/// read again in the loop, where the call of `simple` it replaced made the loop reload
/// them), and the results are the plain loop's.
#[test]
fn new_table_keeps_memory_known() {
    let src = "local o = {x = 3, y = 4}
         local s = 0
         for i = 1, 3000 do
           local a = o.x
           local t = {}
           s = s + a + o.y
         end
         R = s";
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert_eq!(on, plain);
    assert_eq!(on, 21000);
    assert!(!traces.is_empty(), "no loop compiled");
    let loop0 = &traces[0];
    assert!(loop0.contains("ConstFn(new_table)"), "{loop0}");
    assert!(!loop0.contains("ConstFn(simple)"), "{loop0}");
    // The loop after its label: no read of the VM's fields (input p0).
    let body = &loop0[loop0.rfind("label(").expect("a loop")..];
    assert!(
        !body.contains("getfield_r(p0,") && !body.contains("getfield_i(p0,"),
        "{loop0}"
    );
}

/// Two `{}` in one iteration are two tables with the JIT, as without it: `new_table` is a
/// residual call, neither merged with the other (CSE) nor dropped.
#[test]
fn two_new_tables_are_distinct() {
    let src = "local n = 0
         for i = 1, 3000 do
           local a, b = {}, {}
           local c = {}
           if rawequal(a, b) or a == b or rawequal(a, c) then n = n + 1000000 end
           a[1] = i
           b.v = i
           if b[1] ~= nil or a.v ~= nil or c[1] ~= nil then n = n + 1000 end
           n = n + a[1] - b.v + 1
         end
         R = n";
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    assert_eq!(plain, 3000);
    let (traces, _, on) = jit_loops(src);
    assert_eq!(on, plain);
    assert!(!traces.is_empty(), "no loop compiled");
    let loop0 = &traces[0];
    let body = &loop0[loop0.rfind("label(").expect("a loop")..];
    assert_eq!(body.matches("ConstFn(new_table)").count(), 3, "{loop0}");
}

/// `{a, b}` in a loop: `SetList` runs in the portal as stores into the array part that
/// `NewTable` sized, so the loop compiles with the table's call (`new_table`) as its only
/// call: no `simple` or `step` for the list store. The results are the plain loop's.
#[test]
fn set_list_compiles_to_stores() {
    let src = "local s = 0
         for i = 1, 3000 do
           local t = {i, i + 1}
           s = s + t[1] + t[2] + #t
         end
         R = s";
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert_eq!(on, plain);
    assert_eq!(plain, 3000 * 3001 + 3000 * 3);
    assert!(!traces.is_empty(), "no loop compiled");
    let loop0 = &traces[0];
    let body = &loop0[loop0.rfind("label(").expect("a loop")..];
    assert!(body.contains("ConstFn(new_table)"), "{loop0}");
    assert!(!loop0.contains("ConstFn(simple)"), "{loop0}");
    assert!(!loop0.contains("ConstFn(step)"), "{loop0}");
}

/// The list stores the portal leaves to `simple` or that take its other paths give the
/// plain loop's tables: open results (`{f()}`, `{...}`, `b == 0`), a nil item, a constructor
/// longer than the portal's fast path (and than one 50-item block), nested constructors.
#[test]
fn set_list_edge_cases_match_plain_loop() {
    let src = "local function f(n) if n == 0 then return end return n, n * 2, nil, n end
         local function g(...) return {...} end
         local s = 0
         for i = 0, 400 do
           local k = i % 4
           local a = {f(k)}
           local b = {1, 2, nil}
           local c = {i, f(k)}
           local d = g(i, nil, i)
           local e = {{i, {i + 1}}, {i + 2, i + 3}, i}
           local l = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
             1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
             1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, i}
           local m = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, i}
           s = s + #a * 1000 + (a[1] or 0) + (a[4] or 0) + #b * 7 + #c * 11 + c[1]
             + (d[3] or 0) + e[1][2][1] + e[2][2] + e[3] + #l + l[61] + #m + m[18]
           if a[3] ~= nil or b[3] ~= nil then s = s + 1000000 end
         end
         R = s";
    three_modes_agree(src);
}

/// `%` on integers (Lua's floored remainder) and `==` on two integers or two floats run in
/// the portal: a loop made of them compiles with no call, and keeps Lua's semantics for
/// negative operands.
#[test]
fn mod_and_eq_loops_compile_without_calls() {
    let (traces, calls, r) = jit_loops(
        "local s = 0
         for i = -150, 150 do
           local m = i % 7
           if m == 3 then s = s + 1000 end
           s = s + m + (i % -4)
         end
         R = s",
    );
    let mut s = 0i64;
    for i in -150i64..=150 {
        let m = i.rem_euclid(7);
        if m == 3 {
            s += 1000;
        }
        // Lua's floored remainder by -4 takes the divisor's sign.
        let r = i % -4;
        s += m + if r != 0 && (r ^ -4) < 0 { r - 4 } else { r };
    }
    assert_eq!(r, s);
    assert!(!traces.is_empty(), "no loop compiled");
    assert!(
        calls.iter().all(|&c| c == 0),
        "calls {calls:?} in\n{}",
        traces.join("\n")
    );
}

/// The JIT driver's statistics after `jit_loops`.
fn jit_stats() -> meta_jit::warm::Stats {
    crate::jit::portal::with_driver(|d| d.stats())
}

/// A Lua call of a function without `...` is followed by the portal: the loop's trace inlines
/// the callee (its arithmetic is in the trace), pushes and pops the frame with stores into
/// the frame stack (`call_fast`, `return_fast`: no call of `call_lua` or `return_lua`, and no
/// residual call at all, so that what the trace knows of memory survives the call), never
/// calls the plain loop's `step`, and stays in compiled
/// code: the second loop's trace ends at the callee's entry, which
/// the first compiled as a loop, and jumps there (it read the callee's prototype from the
/// closure; it may jump only because the portal's greens are `&'static`, and otherwise leaves
/// compiled code at every turn).
#[test]
fn guest_calls_are_followed_into_the_callee() {
    let (traces, calls, r) = jit_loops(
        "local function f(a, b) local c = a * b return c + 1 end
         local s = 0
         for i = 1, 5000 do s = s + f(i, 3) end
         for i = 1, 5000 do s = s + f(i, 5) end
         R = s",
    );
    let sum = |k: i64| (1..=5000i64).map(|i| i * k + 1).sum::<i64>();
    assert_eq!(r, sum(3) + sum(5));
    let all = traces.join("\n");
    assert!(calls.iter().all(|&c| c == 0), "calls {calls:?} in\n{all}");
    assert!(all.contains("descr=nres_"), "no frame pushed:\n{all}");
    assert!(all.contains("int_mul"), "the callee is not inlined:\n{all}");
    // The callee's return into the second loop fails the first loop's guard on the return
    // position until that guard gets its bridge (200 failures); one entry per turn (4,998)
    // without the jump.
    let entries = jit_stats().entries;
    assert!(entries < 400, "{entries} entries into compiled code");
}

/// Recursion is a loop through the function's entry (`can_enter_jit!` after a call): fib
/// compiles, calls `step` nowhere, and gives the plain loop's result.
#[test]
fn recursion_loops_through_the_function_entry() {
    let (traces, _, r) = jit_loops(
        "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
         R = fib(22)",
    );
    assert_eq!(r, 17711);
    assert!(!traces.is_empty(), "no loop compiled");
    let all = traces.join("\n");
    assert!(!all.contains("ConstFn(step)"), "{all}");
}

/// Field access, globals, natives, metamethods, table and closure construction run as one
/// `simple` call each in a trace (not `step`), with Lua's semantics: `__index` and
/// `__newindex` functions, `__add` and `__lt`, an error raised in a metamethod.
#[test]
fn one_instruction_fast_paths_keep_lua_semantics() {
    let (traces, _, r) = jit_loops(
        "local V = {}
         V.__index = function(t, k) return k == 'z' and 7 or nil end
         V.__add = function(a, b) return setmetatable({x = a.x + b.x}, V) end
         V.__lt = function(a, b) return a.x < b.x end
         local log = 0
         local W = setmetatable({}, {__newindex = function(t, k, v) log = log + v end})
         local acc = setmetatable({x = 0}, V)
         local n = 0
         for i = 1, 400 do
           local p = setmetatable({x = i % 5}, V)
           acc = acc + p
           if p < acc then n = n + p.z end
           W.k = i
           local g = function() return i end
           n = n + g() + #tostring(i)
         end
         local ok = pcall(function() return acc + 1 end)
         R = acc.x * 1000000 + n * 10 + (ok and 1 or 0)
         if log ~= 400 * 401 // 2 then R = -log end",
    );
    let (mut acc, mut n) = (0i64, 0i64);
    for i in 1..=400i64 {
        let p = i % 5;
        acc += p;
        if p < acc {
            n += 7;
        }
        n += i + i.to_string().len() as i64;
    }
    assert_eq!(r, acc * 1_000_000 + n * 10);
    let all = traces.join("\n");
    assert!(all.contains("ConstFn(simple)"), "{all}");
    assert!(!all.contains("ConstFn(step)"), "{all}");
}

/// A metamethod without a loop, called by the VM from a compiled loop (`__lt`, `__add`), runs
/// in the plain loop: in a nested portal call, its call of `val` would enter the compiled
/// code of `val`'s entry once per call.
#[test]
fn small_metamethods_run_in_the_plain_loop() {
    let (_, _, r) = jit_loops(
        "local P = {}
         P.__index = P
         function P.val(s) return s.v end
         P.__lt = function(a, b) return a:val() < b:val() end
         P.__add = function(a, b) return setmetatable({v = a.v + b.v}, P) end
         local one = setmetatable({v = 1}, P)
         local acc = setmetatable({v = 0}, P)
         local n = 0
         for i = 1, 3000 do
           acc = acc + one
           if one < acc then n = n + 1 end
         end
         R = n * 10000 + acc.v",
    );
    assert_eq!(r, 2999 * 10000 + 3000);
    let entries = jit_stats().entries;
    assert!(entries < 300, "{entries} entries into compiled code");
}

/// Fields of tables with a shape (objects, classes, the globals) are a guard on the promoted
/// shape and a load or store in the trace: no call of `get_field` or `set_field` for
/// `self.x`, `p:m()` through the class's `__index`, `p.x = ..` and a global function.
#[test]
fn fields_of_shaped_tables_are_loads_in_the_trace() {
    let (traces, _, r) = jit_loops(
        "local P = {}
         P.__index = P
         function P.new(x, y) return setmetatable({x = x, y = y}, P) end
         function P:sum() return self.x + self.y end
         function twice(v) return 2 * v end
         local ps = {P.new(1, 2), P.new(3, 4)}
         local s = 0
         for i = 1, 3000 do
           local p = ps[i % 2 + 1]
           p.x = p.x + 1
           s = s + twice(p:sum())
         end
         R = s",
    );
    let (mut xs, mut s) = ([1i64, 3], 0i64);
    let ys = [2i64, 4];
    for i in 1..=3000usize {
        let j = i % 2;
        xs[j] += 1;
        s += 2 * (xs[j] + ys[j]);
    }
    assert_eq!(r, s);
    let all = traces.join("\n");
    assert!(!traces.is_empty(), "no loop compiled");
    // (`simple` and `step` appear only after the loop: the `R = s` that adds a global, in
    // the traces of the functions' entries that ran on to the chunk's end.)
    for f in ["get_field", "set_field"] {
        assert!(!all.contains(&format!("ConstFn({f})")), "{f}:\n{all}");
    }
    assert!(all.contains("guard_value"), "no shape guard:\n{all}");
}

/// Lengths, table and string equality, integer bitwise operators, an inner integer `for`
/// loop's preparation, `math.floor` and a nil field stored into an object whose class has no
/// `__newindex` run inline in the portal: the loop's traces call nothing (each of these went
/// through `simple` or `set_field` before, a call that made the optimizer forget memory).
#[test]
fn common_instructions_of_object_code_run_inline() {
    let (traces, calls, r) = jit_loops(
        "R = 0
         local C = {}
         C.__index = C
         local o = setmetatable({x = 1, y = 2}, C)
         local t, a, b, str = {1, 2, 3}, {}, {}, 'abc'
         local s = 0
         for i = 1, 3000 do
           s = s + #t + #str + (i ~ 5) + (i & 3) + (i | 8) + math.floor(i / 3)
           if a == b then s = s + 1 end
           if t == t then s = s + 2 end
           if str == 'abc' then s = s + 4 end
           for j = 1, 2 do s = s + j end
           o.y = nil
           o.y = i
         end
         R = s + o.y",
    );
    let mut s = 0i64;
    for i in 1..=3000i64 {
        s += 3 + 3 + (i ^ 5) + (i & 3) + (i | 8) + i / 3 + 2 + 4 + 3;
    }
    assert_eq!(r, s + 3000);
    assert!(!traces.is_empty(), "no loop compiled");
    let all = traces.join("\n");
    assert!(calls.iter().all(|&c| c == 0), "calls {calls:?} in\n{all}");
}

/// `math.floor`, `math.sqrt` and `setmetatable` run inline in traces give the library's
/// results: integers, negative zeros, floats past the integers' range, metatables set on
/// fresh tables (the loop's result equals the plain loop's).
#[test]
fn inline_natives_agree_with_the_library() {
    let src = "local C, D = {}, {}
         local vals = {2.5, -2.5, 7, -7, 0.0, -0.0, 1e300, -1e300, 2^63, -2^63, 2^53 + 1, 0.5,
                       -0.5, 9007199254740993, math.mininteger}
         local h = 0
         for i = 1, 1500 do
           local v = vals[i % #vals + 1]
           local f = math.floor(v)
           if math.type(f) == 'integer' then h = (h * 31 + f) & 0xffffffff
           else h = (h * 31 + 7) & 0xffffffff end
           local q = math.sqrt(v > 0 and v or -v)
           if q < 1e15 then h = (h + math.floor(q * 1000)) & 0xffffffff end
           local o = setmetatable({}, i % 2 == 0 and C or D)
           if getmetatable(o) == C then h = h + 1 end
         end
         R = h";
    let off = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert!(!traces.is_empty(), "no loop compiled");
    assert_eq!(on, off);
}

/// An operator of a table whose metamethod is a Lua function (`__add`, `__sub` with a
/// number, `__unm`, `__band`, `__lt`, `__le`, `__eq`) is a
/// guest call the portal follows (`jit::meta_call`): the loop compiles with no call at all,
/// and the values stored and the jumps taken either way are the plain loop's.
#[test]
fn metamethods_of_operators_are_followed_into_lua() {
    let src = "local V = {}
         V.__add = function(a, b) return a.x + b.x end
         V.__sub = function(a, b) return a.x - b end
         V.__unm = function(a) return -a.x end
         V.__band = function(a, b) return a.x & 7 end
         V.__lt = function(a, b) return a.x < b.x end
         V.__le = function(a, b) return a.x <= b.x end
         V.__eq = function(a, b) return a.x == b.x end
         local p, q = setmetatable({x = 0}, V), setmetatable({x = 0}, V)
         local s, n = 0, 0
         for i = 1, 3000 do
           p.x = i % 7
           q.x = i % 5
           s = s + (p + q) + (p - 1) + (-q) + (p & 1)
           if p < q then n = n + 1 end
           if not (p <= q) then n = n + 10 end
           if p == q then n = n + 100 end
           if p ~= q then n = n + 1000 end
         end
         R = s * 100000000 + n";
    let (mut s, mut n) = (0i64, 0i64);
    for i in 1..=3000i64 {
        let (a, b) = (i % 7, i % 5);
        s += (a + b) + (a - 1) - b + (a & 7);
        n += (a < b) as i64 + 10 * (a > b) as i64 + 100 * (a == b) as i64;
        n += 1000 * (a != b) as i64;
    }
    let want = s * 100_000_000 + n;
    assert_eq!(global_int(&run(src, Mode::NoJit).unwrap(), "R"), want);
    let (traces, calls, r) = jit_loops(src);
    assert_eq!(r, want);
    assert!(!traces.is_empty(), "no loop compiled");
    let all = traces.join("\n");
    assert!(calls.iter().all(|&c| c == 0), "calls {calls:?} in\n{all}");
}

/// A metamethod followed by a trace may leave compiled code in its body (a guard fails) or
/// raise an error: whichever runs its return (compiled code, the blackhole interpreter, the
/// plain loop's `Vm::leave_lua`) finishes the operator, and `pcall` unwinds the frame. A number on the left of `<` gets the table's
/// metamethod. Each turn's result is the plain loop's.
#[test]
fn a_followed_metamethod_left_midway_finishes_its_operator() {
    let src = "local V = {}
         V.__add = function(a, b)
           if a.x > 2500 then return a.x + 0.5 end
           return a.x + b.x
         end
         V.__lt = function(a, b)
           if type(a) == 'number' then return a < b.x end
           if a.x == 1999 then error('no order') end
           return a.x < b.x
         end
         local p, q = setmetatable({x = 0}, V), setmetatable({x = 3}, V)
         local s, n, errs = 0, 0, 0
         local function lt(a, b) return a < b end
         for i = 1, 3000 do
           p.x = i
           s = s + (p + q)
           local ok, r = pcall(lt, p, q)
           if not ok then errs = errs + 1 elseif r then n = n + 1 end
           if q < p then n = n + 2 end
           if 2900 < p then n = n + 4 end
         end
         R = math.floor(s * 2) * 1000 + n * 10 + errs";
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert!(!traces.is_empty(), "no loop compiled");
    assert_eq!(on, plain);
    let jitcode = global_int(&run(src, Mode::Jitcode).unwrap(), "R");
    assert_eq!(jitcode, plain);
}

/// What a compiled field access assumed changes under it: a field becomes nil (then
/// `__index` answers), the object gets a new field or loses its last one (a new shape), the
/// class's method and `__index` are replaced (by a table, then a function), objects of two
/// shapes alternate, a field written to nil leaves `__newindex` to a later write, and fields
/// of a table without metatable go nil and back (then `pairs` sees the live ones). Each
/// turn's result is the plain loop's.
#[test]
fn compiled_field_access_follows_shape_and_class_changes() {
    let src = "local A = {}
         A.__index = A
         function A:get() return self.v end
         local B = setmetatable({}, {__index = A})
         B.__index = B
         local log = 0
         local objs = {setmetatable({v = 1}, A), setmetatable({w = 0, v = 2}, B)}
         local q = {a = 0, b = 0}
         local s = 0
         for i = 1, 2000 do
           local o = objs[i % 2 + 1]
           s = s + o:get() + (o.w or 7)
           if i == 500 then objs[1].w = 5 end
           if i == 800 then function A:get() return self.v * 3 end end
           if i == 1000 then objs[2].v = nil; B.v = 11 end
           if i == 1200 then B.__index = function(t, k) if k == 'get' then return A.get end return 13 end end
           if i == 1400 then objs[1].w = nil end
           if i == 1600 then
             setmetatable(objs[1], {__index = A, __newindex = function(t, k, v) log = log + v end})
           end
           if i > 1600 then objs[1].w = i end
           q.a = (i % 3 == 0) and nil or i
           q.b = (i % 5 == 0) and i or nil
           s = s + (q.a or 0) + (q.b or 0)
         end
         local keys = 0
         for k, v in pairs(q) do keys = keys + 1 end
         s = s + keys
         R = s * 1000 + log % 1000";
    let (_, _, jit) = jit_loops(src);
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    assert_eq!(jit, plain);
    // The write to a nil field after i = 1600 goes to `__newindex`: its sum, mod 1000.
    assert_eq!(plain % 1000, (1601..=2000i64).sum::<i64>() % 1000);
}

/// A register that gets an integer and then a float in one turn of a compiled loop holds the
/// float: the payload's integer and float stores are one place for the optimizer (generated
/// program 178385 read 71's bits as a float, 3.5e-322, before the alias classes of an enum's
/// payload overlapped).
#[test]
fn an_integer_then_a_float_in_one_register_is_the_float() {
    let (traces, _, r) = jit_loops(
        "local v = 2.5
         for i = 1, 71 do v = i v = 1e-3 end
         R = math.floor(v * 1000 + 0.5)",
    );
    assert!(!traces.is_empty(), "no loop compiled");
    assert_eq!(r, 1);
}

/// `type(x)` and `s:sub(i, j)` with integer positions run in the portal (`fast_native`): a
/// loop of them compiles with no call of `simple`; `type` folds to a constant string under the
/// guard on its argument's tag, and a one-byte `sub` is the interned string (so `==` with a
/// one-byte constant is one pointer comparison).
#[test]
fn type_and_sub_compile_without_simple() {
    let src = "local s = 'a{b}c[d]e' local n = 0
         for i = 1, 3000 do
           local k = i % #s + 1
           local c = s:sub(k, k)
           if c == '{' or c == '[' then n = n + 1 end
           if type(c) == 'string' and type(i) == 'number' then n = n + 2 end
           if #s:sub(k, k + 2) == 3 then n = n + 4 end
           n = n + s:byte(k) + (s:byte(-k) or 0)
         end
         R = n";
    let plain = global_int(&run(src, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(src);
    assert_eq!(on, plain);
    assert!(!traces.is_empty(), "no loop compiled");
    let loop0 = &traces[0];
    assert!(!loop0.contains("ConstFn(simple)"), "{loop0}");
    assert!(!loop0.contains("ConstFn(type_str)"), "type folds: {loop0}");
    assert!(loop0.contains("ConstFn(one_byte_str)"), "{loop0}");
    assert!(loop0.contains("ConstFn(str_byte)"), "{loop0}");
}

/// `string.sub`'s and `string.byte`'s positions in the portal follow the library's: zero,
/// negative, past either end, `j` omitted, floats and strings left to the library; the JIT,
/// the plain loop and jitcode give the same strings and bytes.
#[test]
fn sub_positions_match_the_library() {
    let src = "local s = 'hello, world' local acc = 0
         local is = {0, 1, 2, 5, 12, 13, 40, -1, -3, -12, -13, -40, 2.0, '3'}
         for r = 1, 60 do
           for _, i in ipairs(is) do
             for _, j in ipairs(is) do
               local x = s:sub(i, j)
               local y = s:sub(i)
               local b = s:byte(i) or -1
               acc = (acc * 31 + #x * 7 + #y + (x:byte(1) or 0) + b * 3 + s:byte()) % 1000000007
             end
           end
         end
         R = acc";
    three_modes_agree(src);
}

/// Calls and returns of open values (`return f(g(x))`, `f(g(x))`, `return x, g(x)`: the count
/// is up to `vm.top`, which the call before set) are followed by the portal like the others:
/// a loop of them compiles with no call of `step`, and counts that change from turn to turn
/// (the promoted count's guard fails) give the plain loop's results, as does jitcode.
#[test]
fn open_argument_and_result_counts_are_followed() {
    let src = "local function inc(x) return x + 1 end
         local function dbl(x) return x * 2 end
         local function compose(f, g) return function(x) return f(g(x)) end end
         local h = compose(inc, compose(dbl, inc))
         local function two(x) return x, dbl(x) end
         local function some(n) if n == 0 then return end if n == 1 then return 5 end return 1, 2, 3 end
         local function count(...) return select('#', ...) end
         local s = 0
         for i = 1, 3000 do
           s = s + h(i % 100)
           local a, b = two(i)
           s = s + a + b + count(two(i)) + count(some(i % 3)) + count(some(0), some(2))
         end
         R = s";
    let traces = three_modes_agree(src);
    let loop0 = &traces[0];
    assert!(!loop0.contains("ConstFn(step)"), "{loop0}");
}

/// `..` of strings and numbers runs in the portal (`concat_regs`, a `writes_nothing`
/// allocation, not `simple`); with a table among the operands `__concat` applies, through
/// `simple`. The JIT, the plain loop and jitcode build the same strings.
#[test]
fn concat_of_strings_and_numbers_compiles_without_simple() {
    let src = "local mt = {__concat = function(a, b)
           return (type(a) == 'table' and 't' or a) .. '+' .. (type(b) == 'table' and 't' or b) end}
         local obj = setmetatable({}, mt)
         local n = 0
         for i = 1, 3000 do
           local s = 'k' .. i .. ':' .. (i / 4) .. 'x'
           n = n + #s + #(s .. s)
           if i % 7 == 0 then n = n + #(obj .. i) + #('a' .. obj) end
         end
         R = n";
    let traces = three_modes_agree(src);
    let loop0 = &traces[0];
    assert!(loop0.contains("ConstFn(concat_regs)"), "{loop0}");
    let body = &loop0[loop0.rfind("label(").expect("a loop")..];
    assert!(!body.contains("ConstFn(simple)"), "{loop0}");
}

/// `table.remove(t)` of a list's last item runs in the portal; a hole before the last item,
/// an empty table, a hash part or a metatable with `__len` leave it to the library. The JIT,
/// the plain loop and jitcode agree on every result and length.
#[test]
fn table_remove_of_the_last_item_matches_the_library() {
    let src = "local acc = 0
         local lenmt = {__len = function() return 2 end}
         for i = 1, 2000 do
           local t = {1, 2, 3, i}
           acc = acc + table.remove(t) + #t
           local h = {1, 2, 3} h[2] = nil
           acc = acc + table.remove(h) + #h + (table.remove({}) or 7)
           local z = {5, 6} z.x = 1
           acc = acc + table.remove(z) + #z
           if i % 5 == 0 then
             local m = setmetatable({9, 8, 7}, lenmt)
             acc = acc + table.remove(m) + rawlen(m)
           end
         end
         R = acc";
    three_modes_agree(src);
    // A stack used as such: `table.remove` is no call of `simple`.
    let stack = "local st, acc = {}, 0
         for i = 1, 3000 do st[#st + 1] = i st[#st + 1] = i * 2 acc = acc + table.remove(st) end
         R = acc + #st";
    let plain = global_int(&run(stack, Mode::NoJit).unwrap(), "R");
    let (traces, _, on) = jit_loops(stack);
    assert_eq!(on, plain);
    assert!(!traces.is_empty(), "no loop compiled");
    assert!(
        traces.iter().all(|t| !t.contains("ConstFn(simple)")),
        "{traces:?}"
    );
}

/// A loop over locals keeps them in machine registers: the registers are slots of the stack
/// at `base + a`, which the optimizer sees as one base at known displacements, so a store
/// into one slot keeps what it knows of the others, and the loop carries every slot it
/// reads across its back edge. After the label: no load at all (it had 8 before).
#[test]
fn locals_of_a_float_loop_stay_in_registers() {
    let src = "local zr, zi, zr2, zi2, n = 0.0, 0.0, 0.0, 0.0, 0
         local cr, ci = -0.5, 0.25
         for i = 1, 3000 do
           zi = 2 * zr * zi + ci
           zr = zr2 - zi2 + cr
           zr2 = zr * zr
           zi2 = zi * zi
           if zr2 + zi2 > 4 then n = n + 1; zr, zi, zr2, zi2 = 0.0, 0.0, 0.0, 0.0 end
         end
         R = n + math.floor(zr * 1000)";
    let traces = three_modes_agree(src);
    let loop0 = &traces[0];
    let body = &loop0[loop0.rfind("label(").expect("a loop")..];
    assert!(!body.contains("getfield"), "{loop0}");
    assert!(!body.contains("call_"), "{loop0}");
}

/// The registers are items of `vm.stack` and a table's array part the items of its
/// `ArrayPart`'s `Vec`: two places, so stores into `t[j]` (a tag and a payload) leave what the
/// loop knows of its registers, the table's among them (alias classes follow the `Vec` that
/// owns the buffer, `Value.tag:Vm.stack.items` against `Value.tag:ArrayPart.items.items`).
/// After the label: no load at all (before, the register holding `t`, its tag and payload,
/// and the table's length, array part, metatable and hash count, at every iteration).
#[test]
fn stores_into_a_table_leave_the_registers_known() {
    let src = "local t = {}
         for i = 1, 3000 do t[i] = false end
         for j = 4, 3000, 3 do t[j] = true end
         local n = 0
         for i = 1, 3000 do if t[i] then n = n + 1 end end
         R = n";
    let traces = three_modes_agree(src);
    // The loops that store into the table: a store through the descriptor of an item's tag.
    let bodies: Vec<&str> = traces
        .iter()
        .filter_map(|t| t.rfind("label(").map(|at| (t, &t[at..])))
        .filter(|(t, body)| {
            body.lines()
                .any(|l| l.starts_with("setfield(") && item_tag_store(t, l))
        })
        .map(|(_, body)| body)
        .collect();
    assert!(bodies.len() >= 2, "{traces:#?}");
    for body in bodies {
        assert!(!body.contains("getfield"), "{body}");
    }
}

/// Whether `line` of trace `t` stores through a descriptor of an array part item's tag.
fn item_tag_store(t: &str, line: &str) -> bool {
    t.lines()
        .filter(|l| l.starts_with("descr ") && l.contains("alias=Value.tag:"))
        .filter(|l| l.contains("ArrayPart.items.items"))
        .filter_map(|l| l["descr ".len()..].split(' ').next())
        .any(|name| line.contains(&format!("descr={name})")))
}
