//! Guest calls traced through, with every guest frame a heap object: a register VM whose call
//! allocates the callee's frame (`Gc::new(Frame { .. })`, its registers `Cell`s, its caller in
//! `back: Option<Gc<Frame>>`) and continues in the same dispatch loop, as PyPy's interpreter
//! keeps frames on the heap. The frame of a function called from a compiled loop never
//! escapes the iteration, so the optimizer keeps it virtual: the loop allocates nothing and
//! calls nothing. A guard that fails three calls deep materializes the three callee frames
//! from the resume data, linked as the interpreter links them, and the interpreter goes on in
//! the innermost. The JIT-off run is the oracle.

use std::cell::{Cell, RefCell};

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::warm::{Stats, TraceKind};

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = imm`
    Li(u8, i64),
    /// `r[a] = r[b] + r[c]` (wrapping)
    Add(u8, u8, u8),
    /// `r[a] = r[b] + imm` (wrapping)
    AddI(u8, u8, i64),
    /// Calls the function at `t` with `r[arg]` as its `r0`; its result goes to `r[dst]`.
    Invoke { t: u32, arg: u8, dst: u8 },
    /// Returns `r[a]` to the caller.
    Leave(u8),
    /// `if r[a] < imm { r[c] += 1 } else { r[c] *= 3; snapshot(frame) }`
    Branch(u8, i64, u8),
    /// jump to `t` if `r[a] < r[b]` (a loop's back edge)
    Jlt(u8, u8, u32),
    /// Stop; the result is `r0`.
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// A guest frame: four registers, where the caller goes on, and the caller's frame.
#[derive(Debug, JitLayout, Trace)]
pub struct Frame {
    pub r0: Cell<i64>,
    pub r1: Cell<i64>,
    pub r2: Cell<i64>,
    pub r3: Cell<i64>,
    /// The caller's pc after the call.
    pub ret: u32,
    /// The caller's register that gets the result.
    pub dst: u8,
    pub back: Option<Gc<Frame>>,
}

#[look_inside]
fn get(f: Gc<Frame>, k: u8) -> i64 {
    match k % 4 {
        0 => f.r0.get(),
        1 => f.r1.get(),
        2 => f.r2.get(),
        _ => f.r3.get(),
    }
}

#[look_inside]
fn set(f: Gc<Frame>, k: u8, v: i64) {
    match k % 4 {
        0 => f.r0.set(v),
        1 => f.r1.set(v),
        2 => f.r2.set(v),
        _ => f.r3.set(v),
    }
}

#[look_inside]
fn frame(r0: i64, ret: u32, dst: u8, back: Option<Gc<Frame>>) -> Gc<Frame> {
    Gc::new(Frame {
        r0: Cell::new(r0),
        r1: Cell::new(0),
        r2: Cell::new(0),
        r3: Cell::new(0),
        ret,
        dst,
        back,
    })
}

/// A frame's registers, return point and depth, and the same of its callers.
#[derive(Clone, Debug, PartialEq)]
struct Seen(Vec<([i64; 4], u32, u8)>);

fn seen(mut f: Option<Gc<Frame>>) -> Seen {
    let mut out = Vec::new();
    while let Some(g) = f {
        out.push((
            [g.r0.get(), g.r1.get(), g.r2.get(), g.r3.get()],
            g.ret,
            g.dst,
        ));
        f = g.back;
    }
    Seen(out)
}

thread_local! {
    /// The guest stacks `snapshot` saw.
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

/// Records the whole guest stack (a residual call: the frames escape into it, so compiled
/// code allocates them first).
#[dont_look_inside]
pub fn snapshot(f: Gc<Frame>) {
    SEEN.with(|s| s.borrow_mut().push(seen(Some(f))));
}

#[jit::interpreter(greens(pc, code), reds(f))]
pub fn run(code: &Code, mut f: Gc<Frame>) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => set(f, a, imm),
            Ins::Add(a, b, c) => set(f, a, get(f, b).wrapping_add(get(f, c))),
            Ins::AddI(a, b, imm) => set(f, a, get(f, b).wrapping_add(imm)),
            Ins::Invoke { t, arg, dst } => {
                f = frame(get(f, arg), pc as u32 + 1, dst, Some(f));
                pc = t as usize;
                continue;
            }
            Ins::Leave(a) => {
                let v = get(f, a);
                match f.back {
                    Some(caller) => {
                        set(caller, f.dst, v);
                        pc = f.ret as usize;
                        f = caller;
                        continue;
                    }
                    None => return v,
                }
            }
            Ins::Branch(a, imm, c) => {
                if get(f, a) < imm {
                    set(f, c, get(f, c).wrapping_add(1));
                } else {
                    set(f, c, get(f, c).wrapping_mul(3));
                    snapshot(f);
                }
            }
            Ins::Jlt(a, b, t) => {
                if get(f, a) < get(f, b) {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return get(f, 0),
        }
        pc += 1;
    }
}

/// Runs `ops` with the JIT parameters `params` (after a reset): the result, the outermost
/// frame at the end, the guest stacks `snapshot` saw, and the driver's statistics.
fn go(params: &str, ops: &[Ins]) -> (i64, Seen, Vec<Seen>, Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
        d.set_params("keep_optimized=1").unwrap();
    });
    SEEN.with(|s| s.borrow_mut().clear());
    let code = Code { ops: ops.to_vec() };
    let main = frame(0, 0, 0, None);
    let r = run(&code, main);
    let snaps = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    (r, seen(Some(main)), snaps, run::with_driver(|d| d.stats()))
}

/// Runs `ops` with the JIT off and on; both must end the same and see the same stacks.
fn agree(ops: &[Ins]) -> Stats {
    let (r0, m0, s0, _) = go("off", ops);
    let (r1, m1, s1, stats) = go("on,threshold=3,trace_eagerness=1000", ops);
    assert_eq!((r1, &m1), (r0, &m0), "{}", stats.summary());
    assert_eq!(s1.len(), s0.len(), "snapshots");
    assert!(s1 == s0, "a snapshot differs");
    stats
}

/// The optimized loop body (after its label) of the only loop, as text.
fn loop_body(s: &Stats) -> String {
    let loops: Vec<_> = s
        .traces
        .iter()
        .filter(|t| t.kind == TraceKind::Loop)
        .collect();
    assert_eq!(loops.len(), 1, "{}", s.summary());
    let text = loops[0].optimized().to_string();
    let at = text.find("label(").expect("a peeled loop");
    text[at..].to_string()
}

#[test]
fn a_loop_calling_a_small_function_allocates_no_frame_and_calls_nothing() {
    // r1 counts to 1000; each turn calls `inc` (r0 + 3) and adds the result to r2.
    let ops = [
        Ins::Li(1, 0),
        Ins::Li(3, 1000),
        // loop (pc 2)
        Ins::Invoke {
            t: 7,
            arg: 1,
            dst: 0,
        },
        Ins::Add(2, 2, 0),
        Ins::AddI(1, 1, 1),
        Ins::Jlt(1, 3, 2),
        Ins::Halt,
        // inc (pc 7): r0 = r0 + 3; return r0
        Ins::AddI(0, 0, 3),
        Ins::Leave(0),
    ];
    let s = agree(&ops);
    let body = loop_body(&s);
    for op in ["call", "new("] {
        assert!(!body.contains(op), "`{op}` in the loop body:\n{body}");
    }
}

#[test]
fn a_guard_three_calls_deep_materializes_the_callee_frames() {
    // Each turn calls f1, which calls f2, which calls f3; f3's branch on its argument flips
    // after 600 turns. Its guard then fails three inlined calls deep: the three callee frames,
    // virtual in the compiled loop, are allocated from the guard's resume data and linked to
    // the caller's frame, and the interpreter goes on in f3. There the other branch records
    // the whole guest stack: the 400 records equal the JIT-off run's.
    let ops = [
        Ins::Li(1, 0),
        Ins::Li(3, 1000),
        // loop (pc 2)
        Ins::Invoke {
            t: 7,
            arg: 1,
            dst: 0,
        },
        Ins::Add(2, 2, 0),
        Ins::AddI(1, 1, 1),
        Ins::Jlt(1, 3, 2),
        Ins::Halt,
        // f1 (pc 7): r1 = f2(r0 + 1); return r1 + r0
        Ins::AddI(2, 0, 1),
        Ins::Invoke {
            t: 12,
            arg: 2,
            dst: 1,
        },
        Ins::Add(1, 1, 0),
        Ins::Leave(1),
        Ins::Halt,
        // f2 (pc 12): r2 = r0 - 1; r1 = f3(r2); return r1 + 5
        Ins::AddI(2, 0, -1),
        Ins::Invoke {
            t: 17,
            arg: 2,
            dst: 1,
        },
        Ins::AddI(1, 1, 5),
        Ins::Leave(1),
        Ins::Halt,
        // f3 (pc 17): r3 = 7; if r0 < 600 { r3 += 1 } else { r3 *= 3; snapshot }; return r3 + r0
        Ins::Li(3, 7),
        Ins::Branch(0, 600, 3),
        Ins::Add(3, 3, 0),
        Ins::Leave(3),
    ];
    let (_, _, snaps, _) = go("off", &ops);
    assert_eq!(snaps.len(), 400);
    assert!(snaps.iter().all(|s| s.0.len() == 4), "three calls deep");
    let s = agree(&ops);
    assert!(s.guard_failures >= 300, "{}", s.summary());
    assert_eq!(s.bridges(), 0, "{}", s.summary());
    // Before the flip, the compiled loop allocated none of the callee frames.
    let body = loop_body(&s);
    assert!(!body.contains("new("), "{body}");
    // With bridges: the guard's bridge starts from resume data that holds the three virtual
    // frames, and the stacks it hands to `snapshot` are still the interpreter's.
    let (r0, m0, s0, _) = go("off", &ops);
    let (r1, m1, s1, stats) = go("on,threshold=3,trace_eagerness=2", &ops);
    assert_eq!((r1, &m1), (r0, &m0), "{}", stats.summary());
    assert!(s1 == s0, "a snapshot differs");
    assert!(stats.bridges() >= 1, "{}", stats.summary());
    assert!(stats.guard_failures < 20, "{}", stats.summary());
}
