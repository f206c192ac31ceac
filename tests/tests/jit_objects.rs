//! Objects in traces, end to end: a small VM whose numbers are boxed (`Gc<Num>`, allocated with
//! `Gc::new` in traced code). The JIT must agree with the interpreter; the hot loop's
//! optimized trace allocates nothing and calls nothing; a guard that fails in the middle of
//! the loop rebuilds the boxes the loop had not allocated yet, and gets a bridge.

// Every arm of the dispatch sets the destination register and the value.
#![allow(unused_assignments)]

use meta_jit::hints as jit;
use meta_jit::hints::*;

/// A boxed number.
#[derive(Debug, JitLayout, Trace)]
pub struct Num {
    pub v: i64,
}

/// A boxed pair (nested objects: a box that holds boxes).
#[derive(Debug, JitLayout, Trace)]
pub struct Pair {
    pub a: Gc<Num>,
    pub b: Gc<Num>,
}

/// The registers at the end.
#[derive(Debug, JitLayout, Trace)]
pub struct Regs {
    pub r0: Gc<Num>,
    pub r1: Gc<Num>,
    pub r2: Gc<Num>,
    pub r3: Gc<Num>,
}

/// Four boxed registers `r0..r3`, held in the portal's reds.
#[derive(Clone, Copy, Debug, PartialEq, JitLayout, Trace)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[d] = r[a] + r[b]` (a new box)
    Add(u8, u8, u8),
    /// `r[d] = r[a] + k`
    AddK(u8, u8, i64),
    /// `r[d] = (r[a], r[b])` boxed as a pair, then unpacked again: `r[d] = pair.a + pair.b`
    PairSum(u8, u8, u8),
    /// `r[d] = r[a] * 2` if `r[a] < k`, else `r[d] = r[a] - k` (a branch on a boxed value)
    Fold(u8, u8, i64),
    /// back to `t` while `r[a] < r[b]`
    LoopLt(u8, u8, u32),
    Halt,
}

#[derive(JitLayout, Trace)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

#[look_inside]
fn num(x: i64) -> Gc<Num> {
    Gc::new(Num { v: x })
}

#[jit::interpreter(greens(pc, code), reds(r0, r1, r2, r3))]
pub fn run(
    code: &Code,
    mut r0: Gc<Num>,
    mut r1: Gc<Num>,
    mut r2: Gc<Num>,
    mut r3: Gc<Num>,
) -> Gc<Regs> {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        let mut d: u8 = 0;
        let mut x: i64 = 0;
        match code.ops[pc] {
            Ins::Add(dst, a, b) => {
                d = dst;
                x = get(a, r0, r1, r2, r3).v + get(b, r0, r1, r2, r3).v;
            }
            Ins::AddK(dst, a, k) => {
                d = dst;
                x = get(a, r0, r1, r2, r3).v + k;
            }
            Ins::PairSum(dst, a, b) => {
                let p = Gc::new(Pair {
                    a: get(a, r0, r1, r2, r3),
                    b: get(b, r0, r1, r2, r3),
                });
                d = dst;
                x = p.a.v + p.b.v;
            }
            Ins::Fold(dst, a, k) => {
                let y = get(a, r0, r1, r2, r3).v;
                d = dst;
                if y < k {
                    x = y * 2;
                } else {
                    x = y - k;
                }
            }
            Ins::LoopLt(a, b, t) => {
                if get(a, r0, r1, r2, r3).v < get(b, r0, r1, r2, r3).v {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
                pc += 1;
                continue;
            }
            Ins::Halt => return Gc::new(Regs { r0, r1, r2, r3 }),
        }
        let boxed = num(x);
        match d {
            0 => r0 = boxed,
            1 => r1 = boxed,
            2 => r2 = boxed,
            _ => r3 = boxed,
        }
        pc += 1;
    }
}

#[look_inside]
fn get(k: u8, r0: Gc<Num>, r1: Gc<Num>, r2: Gc<Num>, r3: Gc<Num>) -> Gc<Num> {
    match k {
        0 => r0,
        1 => r1,
        2 => r2,
        _ => r3,
    }
}

fn go(params: &str, ops: &[Ins], init: [i64; 4]) -> [i64; 4] {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2,keep_recorded=1,keep_optimized=1")
            .unwrap();
        d.set_params(params).unwrap();
    });
    let code = Code { ops: ops.to_vec() };
    let [a, b, c, e] = init.map(|v| Gc::new(Num { v }));
    let r = run(&code, a, b, c, e);
    [r.r0.v, r.r1.v, r.r2.v, r.r3.v]
}

fn stats() -> meta_jit::warm::Stats {
    run::with_driver(|d| d.stats())
}

/// `r1` counts to `r2`; `r0` sums `r1 + 3` boxed through a pair.
fn sum_loop() -> Vec<Ins> {
    vec![
        Ins::AddK(3, 1, 3),
        Ins::PairSum(0, 0, 3),
        Ins::AddK(1, 1, 1),
        Ins::LoopLt(1, 2, 0),
        Ins::Halt,
    ]
}

#[test]
fn boxed_loop_agrees_and_allocates_nothing() {
    let off = go("off", &sum_loop(), [0, 0, 1000, 0]);
    let on = go("on", &sum_loop(), [0, 0, 1000, 0]);
    assert_eq!(on, off);
    let s = stats();
    assert_eq!(s.loops(), 1, "{}", s.summary());
    let lp = &s.traces[0];
    let rec = lp.recorded.as_ref().unwrap().to_string();
    // The tracer recorded the allocations the interpreter made: three numbers and a pair.
    assert_eq!(rec.matches("new(descr=size_Num)").count(), 3, "{rec}");
    assert_eq!(rec.matches("new(descr=size_Pair)").count(), 1, "{rec}");
    let opt = lp.optimized().to_string();
    let body = body(&opt);
    assert_eq!(body.matches("new(").count(), 0, "{opt}");
    assert_eq!(body.matches("call").count(), 0, "{opt}");
}

/// The loop body of a peeled loop: the text after the label.
fn body(trace: &str) -> &str {
    &trace[trace.find("label(").expect("a peeled loop")..]
}

/// `r1` counts to `r2`; `r3 = r1 + 7`; `r0 = (r1 < 600 ? r1 * 2 : r1 - 600) + r3`. From
/// `r1 = 600` on, the branch of the fold goes the other way: its guard fails in the middle
/// of an iteration, while `r1` and `r3` are boxes the compiled loop never allocated.
fn flip_loop() -> Vec<Ins> {
    vec![
        Ins::AddK(1, 1, 1),
        Ins::AddK(3, 1, 7),
        Ins::Fold(0, 1, 600),
        Ins::Add(0, 0, 3),
        Ins::LoopLt(1, 2, 0),
        Ins::Halt,
    ]
}

#[test]
fn a_guard_failing_mid_loop_rebuilds_the_boxes() {
    // Bridges off: every failure of the fold's guard deoptimizes, rebuilds the boxes from the
    // resume data and finishes the iteration in the interpreter.
    let off = go("off", &flip_loop(), [0, 0, 1000, 0]);
    let on = go("max_bridges=0", &flip_loop(), [0, 0, 1000, 0]);
    assert_eq!(on, off);
    assert_eq!(off, [(1000 - 600) + 1007, 1000, 1000, 1007]);
    let s = stats();
    assert!(s.guard_failures >= 1, "{}", s.summary());
    let lp = &s.traces[0];
    let opt = lp.optimized().to_string();
    let body = body(&opt);
    assert_eq!(body.matches("new(").count(), 0, "{opt}");
    // The fold's guard in the loop body holds the new `r1` and `r3` as virtual boxes.
    let guard = body
        .lines()
        .find(|l| l.starts_with("guard_true") && l.contains("0@") && l.contains("size_Num"))
        .unwrap_or_else(|| panic!("no guard with virtuals:\n{opt}"));
    assert!(guard.matches("size_Num(").count() >= 2, "{guard}");
}

#[test]
fn a_guard_whose_resume_data_holds_virtuals_gets_a_bridge() {
    let off = go("off", &flip_loop(), [0, 0, 1000, 0]);
    let on = go("on", &flip_loop(), [0, 0, 1000, 0]);
    assert_eq!(on, off);
    let s = stats();
    assert_eq!((s.loops(), s.bridges()), (1, 1), "{}", s.summary());
    // The bridge took over after a few failures (the other 390 iterations ran in it).
    assert!(s.guard_failures <= 10, "{}", s.summary());
    // The bridge's inputs are the guard's saved values (the boxes' fields, not boxes): the
    // boxes stay virtual through its guards (one in a release build, two in a debug build,
    // whose `+` is checked for overflow), and are allocated only where it jumps back to the
    // loop's entry, which takes real objects.
    let bridge = s.traces[1].optimized().to_string();
    let inputs = bridge.lines().find(|l| l.starts_with('[')).unwrap();
    assert!(inputs.contains("i0"), "{bridge}");
    let jump_at = bridge.find("jump(").unwrap();
    let first_new = bridge.find("new(").unwrap_or(jump_at);
    assert!(
        bridge[..first_new]
            .lines()
            .filter(|l| l.starts_with("guard"))
            .count()
            >= 1,
        "{bridge}"
    );
    assert!(
        bridge[first_new..].lines().all(|l| !l.starts_with("guard")),
        "{bridge}"
    );
}

/// With the JIT on, a loop whose boxes stay virtual takes no memory however long it runs: the
/// heap grows by at most one nursery chunk (the interpreter's warm-up iterations) over
/// 1 million iterations (`METAJIT_LONG=1`: 100 million). The collector stays off here (the
/// tests below enable it), so with the JIT off every box stays allocated.
#[test]
fn a_compiled_loop_of_virtual_boxes_takes_no_memory() {
    let n: i64 = if std::env::var_os("METAJIT_LONG").is_some() {
        100_000_000
    } else {
        1_000_000
    };
    let prog = vec![
        Ins::AddK(0, 0, 3),
        Ins::AddK(1, 1, 1),
        Ins::LoopLt(1, 2, 0),
        Ins::Halt,
    ];
    let before = meta_jit::alloc::reserved_bytes();
    let r = go("on", &prog, [0, 0, n, 0]);
    let grown = meta_jit::alloc::reserved_bytes() - before;
    assert_eq!(r, [3 * n, n, n, 0]);
    assert!(grown <= 1 << 20, "{grown} bytes for {n} iterations");
    let s = stats();
    assert_eq!(s.loops(), 1, "{}", s.summary());
}

// The collector (`meta_jit::gc`): with collection enabled, the portal's safe point (its native
// `can_enter_jit!`) frees the boxes no red holds any more.

use meta_jit::gc;

/// Iterations of the bounded-memory tests: 1 million (`METAJIT_LONG=1`: 100 million).
fn long_n() -> i64 {
    if std::env::var_os("METAJIT_LONG").is_some() {
        100_000_000
    } else {
        1_000_000
    }
}

/// `go` with collection enabled at the safe points, every `threshold` bytes handed out at
/// least (0: the default); returns the registers, the collections run and the heap's growth.
fn go_collecting(
    params: &str,
    ops: &[Ins],
    init: [i64; 4],
    threshold: usize,
) -> ([i64; 4], u64, usize) {
    gc::set_collection_threshold(threshold);
    let (before, n0) = (meta_jit::alloc::reserved_bytes(), gc::stats().collections);
    // SAFETY: `go` keeps no `Gc` but the portal's reds (its initial boxes are moved into the
    // portal and never used again) and reads the result before any other safe point.
    unsafe { gc::enable_collection() };
    let r = go(params, ops, init);
    gc::disable_collection();
    gc::set_collection_threshold(0);
    let grown = meta_jit::alloc::reserved_bytes() - before;
    (r, gc::stats().collections - n0, grown)
}

/// `r0 += 3`, `r1 += 1` while `r1 < r2`: two short-lived boxes per iteration.
fn count_loop() -> Vec<Ins> {
    vec![
        Ins::AddK(0, 0, 3),
        Ins::AddK(1, 1, 1),
        Ins::LoopLt(1, 2, 0),
        Ins::Halt,
    ]
}

/// With the JIT off every iteration allocates two boxes (16 bytes); the collector keeps the
/// heap within a few MB (the 4 MiB threshold and a chunk per size class) however many
/// iterations run: 1 million here (16 MB allocated), `METAJIT_LONG=1`: 100 million (1.6 GB).
#[test]
fn memory_stays_bounded_with_the_jit_off() {
    let n = long_n();
    let (r, collections, grown) = go_collecting("off", &count_loop(), [0, 0, n, 0], 0);
    assert_eq!(r, [3 * n, n, n, 0]);
    assert!(collections >= 2, "{collections} collections");
    assert!(grown <= 8 << 20, "{grown} bytes for {n} iterations");
}

/// The same loop with the JIT on: the interpreter's warm-up and the compiled loop, whose boxes
/// stay virtual, in the same bound.
#[test]
fn memory_stays_bounded_with_the_jit_on() {
    let n = long_n();
    let (r, _, grown) = go_collecting("on", &count_loop(), [0, 0, n, 0], 0);
    assert_eq!(r, [3 * n, n, n, 0]);
    assert!(grown <= 8 << 20, "{grown} bytes for {n} iterations");
    assert_eq!(stats().loops(), 1, "{}", stats().summary());
}

/// Collecting at nearly every safe point changes no result, with the JIT off, on, and on
/// without bridges (every failure of the fold's guard rebuilds boxes from resume data, and the
/// interpreter goes on with them through collections).
#[test]
fn collecting_at_every_safe_point_changes_nothing() {
    for prog in [sum_loop(), flip_loop(), count_loop()] {
        let want = go("off", &prog, [0, 0, 1000, 0]);
        for params in ["off", "on", "max_bridges=0"] {
            let (got, collections, _) = go_collecting(params, &prog, [0, 0, 1000, 0], 1);
            assert_eq!(got, want, "{params} {prog:?}");
            assert!(collections >= 1, "{params}: no collection");
        }
    }
}

/// A red the collector cannot see into (no `Trace`): the safe point skips the collection, so
/// the box it holds survives.
#[derive(JitLayout)]
pub struct Holder {
    pub g: Gc<Num>,
}

#[jit::interpreter(greens(pc, code), reds(i, h))]
pub fn hold(code: &Code, mut i: i64, h: &Holder) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::AddK(_, _, k) => {
                let b = num(i + k);
                i = b.v;
            }
            Ins::LoopLt(_, _, t) => {
                if i < 100_000 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            _ => return h.g.v + i,
        }
        pc += 1;
    }
}

#[test]
fn a_red_without_trace_stops_the_collection() {
    let code = Code {
        ops: vec![Ins::AddK(0, 0, 1), Ins::LoopLt(0, 0, 0), Ins::Halt],
    };
    let h = Holder {
        g: Gc::new(Num { v: 7 }),
    };
    gc::set_collection_threshold(1);
    let s0 = gc::stats();
    // SAFETY: the only `Gc` used after a safe point is `h.g`, and the safe point does not
    // collect (the point of the test); were it to, this test's check would see the box freed
    // or overwritten.
    unsafe { gc::enable_collection() };
    let r = hold(&code, 0, &h);
    gc::disable_collection();
    gc::set_collection_threshold(0);
    let s = gc::stats();
    assert_eq!(r, 7 + 100_000);
    assert_eq!(s.collections, s0.collections);
    assert!(s.skipped_untraceable > s0.skipped_untraceable, "{s:?}");
}

// Objects that escape: compiled code allocates them (inline, one per iteration) and may collect
// in its allocation slow path, with the portal's greens and reds and, conservatively, its own
// stack and registers as the roots.

/// `out.last` keeps the latest sum box, `out.i` the latest counter box.
#[derive(JitLayout, Trace)]
pub struct Out {
    pub last: Gc<Num>,
    pub i: Gc<Num>,
}

/// `sum = Gc::new(sum + i); i = Gc::new(i + 1); out.last = sum; out.i = i` while `i < n`;
/// returns the sum as `out.last` holds it. The compiled loop allocates both boxes where they
/// escape, so the second allocation (and a collection in its slow path) happens while the
/// first box is only in compiled code's registers.
#[jit::interpreter(greens(pc, code), reds(i, sum, n, out))]
pub fn escape(code: &Code, mut i: Gc<Num>, mut sum: Gc<Num>, n: i64, out: &mut Out) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Add(..) => {
                sum = Gc::new(Num {
                    v: sum.v.wrapping_add(i.v),
                })
            }
            Ins::AddK(..) => i = Gc::new(Num { v: i.v + 1 }),
            Ins::PairSum(..) => {
                out.last = sum;
                out.i = i;
            }
            Ins::LoopLt(_, _, t) => {
                if i.v < n {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            _ => return out.last.v,
        }
        pc += 1;
    }
}

/// Runs `escape` for `n` iterations with collection enabled (every `threshold` bytes);
/// returns the result, the collections (all, and those in compiled code) and the heap's growth.
fn go_escape(params: &str, n: i64, threshold: usize) -> (i64, u64, u64, usize) {
    escape::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2,keep_optimized=1")
            .unwrap();
        d.set_params(params).unwrap();
    });
    let code = Code {
        ops: vec![
            Ins::Add(0, 0, 0),
            Ins::AddK(0, 0, 0),
            Ins::PairSum(0, 0, 0),
            Ins::LoopLt(0, 0, 0),
            Ins::Halt,
        ],
    };
    gc::set_collection_threshold(threshold);
    let (before, c0) = (meta_jit::alloc::reserved_bytes(), gc::stats().collections);
    let in_compiled = gc::stats().in_compiled_code;
    // SAFETY: the only `Gc`s used after a safe point are the portal's reds (`out` is one, and
    // `Out` implements `Trace`); the initial boxes are moved into the portal.
    unsafe { gc::enable_collection() };
    let mut out = Out {
        last: Gc::new(Num { v: 0 }),
        i: Gc::new(Num { v: 0 }),
    };
    let r = escape(
        &code,
        Gc::new(Num { v: 0 }),
        Gc::new(Num { v: 0 }),
        n,
        &mut out,
    );
    gc::disable_collection();
    gc::set_collection_threshold(0);
    assert_eq!((out.last.v, out.i.v), (r, n));
    let grown = meta_jit::alloc::reserved_bytes() - before;
    let s = gc::stats();
    (
        r,
        s.collections - c0,
        s.in_compiled_code - in_compiled,
        grown,
    )
}

/// With the JIT on, the compiled loop allocates the escaping boxes inline every iteration
/// and never returns to the safe point: it collects in its allocation slow path, and memory
/// stays bounded (1 million iterations, 16 MB allocated; `METAJIT_LONG=1`: 100 million,
/// 1.6 GB).
#[test]
fn escaping_objects_stay_bounded_with_the_jit_on() {
    let n = long_n();
    let want = (0..n).fold(0i64, |s, i| s.wrapping_add(i));
    let (r, _, collections, grown) = go_escape("on", n, 0);
    assert_eq!(r, want);
    let s = escape::with_driver(|d| d.stats());
    assert_eq!(s.loops(), 1, "{}", s.summary());
    let body = body(&s.traces[0].optimized().to_string()).to_string();
    assert_eq!(body.matches("new(").count(), 2, "{body}");
    assert!(
        collections >= 1,
        "{collections} collections in compiled code"
    );
    assert!(grown <= 8 << 20, "{grown} bytes for {n} iterations");
}

/// Collecting whenever compiled code takes a new region (every 8 bytes handed out at least)
/// changes no result: JIT on, with and without bridges, agrees with the interpreter.
#[test]
fn collecting_in_compiled_code_changes_nothing() {
    let n = 200_000;
    let want = (0..n).fold(0i64, |s, i| s.wrapping_add(i));
    for params in ["off", "on", "max_bridges=0"] {
        let (r, collections, in_compiled, _) = go_escape(params, n, 8);
        assert_eq!(r, want, "{params}");
        assert!(collections >= 2, "{params}: {collections} collections");
        if params != "off" {
            assert!(in_compiled >= 2, "{params}: {in_compiled} in compiled code");
        }
    }
}
