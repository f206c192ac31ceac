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
        d.set_params("on,threshold=3,trace_eagerness=2,keep_recorded=1")
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
    let opt = lp.optimized.to_string();
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
    let opt = lp.optimized.to_string();
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
    // boxes stay virtual through it, and are allocated only where it jumps back to the
    // loop's entry, which takes real objects.
    let bridge = s.traces[1].optimized.to_string();
    let inputs = bridge.lines().find(|l| l.starts_with('[')).unwrap();
    assert!(inputs.contains("i0"), "{bridge}");
    let jump_at = bridge.find("jump(").unwrap();
    let first_new = bridge.find("new(").unwrap_or(jump_at);
    assert!(
        bridge[..first_new]
            .lines()
            .filter(|l| l.starts_with("guard"))
            .count()
            >= 2,
        "{bridge}"
    );
    assert!(
        bridge[first_new..].lines().all(|l| !l.starts_with("guard")),
        "{bridge}"
    );
}

/// With the JIT on, a loop whose boxes stay virtual takes no memory however long it runs: the
/// heap grows by at most one nursery chunk (the interpreter's warm-up iterations) over
/// 1 million iterations (`METAJIT_LONG=1`: 100 million). With the JIT off every box stays
/// allocated: there is no collector yet (see the book's chapter on objects).
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
