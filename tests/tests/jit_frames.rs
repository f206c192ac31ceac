//! Guest calls traced through, with the guest's frames in a virtualizable machine: a register
//! VM whose calls save the caller's return point in a frame stack and continue in the same
//! dispatch loop (a register window of 8 registers per frame). Its register file and its frame
//! stack are `#[jit(virtualizable)]`, and the frame base and depth are promoted where calls
//! and returns use them. A loop that calls a small function then compiles to a trace without
//! a call and without a frame in memory; a guard that fails three calls deep resumes with the
//! guest stack the interpreter has there. The JIT-off run is the oracle.

use std::cell::RefCell;

mod callops;

use callops::{Code, Ins};

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::warm::Stats;

/// A caller's return point.
#[derive(Clone, Copy, Debug, PartialEq, Default, JitLayout)]
#[repr(C)]
pub struct Saved {
    pub pc: u32,
    pub dst: u8,
}

/// Frames of the guest stack.
pub const DEPTH: usize = 8;
/// Registers per frame.
pub const WINDOW: usize = 8;

#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Machine {
    /// The register windows of every frame, frame `k` at `k * WINDOW`.
    #[jit(virtualizable)]
    pub regs: [i64; DEPTH * WINDOW],
    /// The return points of the frames below the top one.
    #[jit(virtualizable)]
    pub stack: [Saved; DEPTH],
    /// How many frames are below the top one.
    #[jit(virtualizable)]
    pub depth: u64,
}

impl Machine {
    fn new() -> Machine {
        Machine {
            regs: [0; DEPTH * WINDOW],
            stack: [Saved::default(); DEPTH],
            depth: 0,
        }
    }
}

thread_local! {
    /// The machines `snapshot` saw.
    static SEEN: RefCell<Vec<Machine>> = const { RefCell::new(Vec::new()) };
}

/// Records the whole machine (a residual call: compiled code writes the frames back first).
#[dont_look_inside]
pub fn snapshot(m: &Machine) {
    SEEN.with(|s| s.borrow_mut().push(m.clone()));
}

#[jit::interpreter(greens(pc, code), reds(m))]
pub fn run(code: &Code, m: &mut Machine) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        let base = (promote!(m.depth) as usize % DEPTH) * WINDOW;
        match code.ops[pc] {
            Ins::Li(a, imm) => m.regs[base + a as usize % WINDOW] = imm,
            Ins::Add(a, b, c) => {
                m.regs[base + a as usize % WINDOW] = m.regs[base + b as usize % WINDOW]
                    .wrapping_add(m.regs[base + c as usize % WINDOW])
            }
            Ins::AddI(a, b, imm) => {
                m.regs[base + a as usize % WINDOW] =
                    m.regs[base + b as usize % WINDOW].wrapping_add(imm)
            }
            Ins::Invoke { t, arg, dst } => {
                let d = m.depth as usize;
                if d + 1 < DEPTH {
                    let v = m.regs[base + arg as usize % WINDOW];
                    m.stack[d] = Saved {
                        pc: pc as u32 + 1,
                        dst,
                    };
                    m.depth = (d + 1) as u64;
                    m.regs[base + WINDOW] = v;
                    pc = t as usize;
                    continue;
                }
            }
            Ins::Leave(a) => {
                let v = m.regs[base + a as usize % WINDOW];
                let d = m.depth as usize;
                if d == 0 {
                    return v;
                }
                let s = m.stack[d - 1];
                m.depth = (d - 1) as u64;
                m.regs[base - WINDOW + s.dst as usize % WINDOW] = v;
                pc = s.pc as usize;
                continue;
            }
            Ins::Branch(a, imm, c) => {
                let i = base + c as usize % WINDOW;
                if m.regs[base + a as usize % WINDOW] < imm {
                    m.regs[i] = m.regs[i].wrapping_add(1);
                } else {
                    m.regs[i] = m.regs[i].wrapping_mul(3);
                    snapshot(m);
                }
            }
            Ins::Jlt(a, b, t) => {
                if m.regs[base + a as usize % WINDOW] < m.regs[base + b as usize % WINDOW] {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return m.regs[base],
        }
        pc += 1;
    }
}

/// Runs `ops` with the JIT parameters `params` (after a reset): the result, the machine at the
/// end, the machines `snapshot` saw, and the driver's statistics.
fn go(params: &str, ops: &[Ins]) -> (i64, Machine, Vec<Machine>, Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
        d.set_params("keep_optimized=1").unwrap();
    });
    SEEN.with(|s| s.borrow_mut().clear());
    let code = Code { ops: ops.to_vec() };
    let mut m = Machine::new();
    let r = run(&code, &mut m);
    let seen = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    (r, m, seen, run::with_driver(|d| d.stats()))
}

/// Runs `ops` with the JIT off and on; both must end the same and see the same snapshots.
fn agree(ops: &[Ins]) -> Stats {
    let (r0, m0, s0, _) = go("off", ops);
    let (r1, m1, s1, stats) = go("on,threshold=3,trace_eagerness=1000", ops);
    assert_eq!((r1, &m1), (r0, &m0), "{}", stats.summary());
    assert_eq!(s1.len(), s0.len(), "snapshots");
    assert!(s1 == s0, "a snapshot differs");
    stats
}

#[test]
fn a_loop_calling_a_small_function_keeps_no_frame_in_memory_and_no_call() {
    // r1 counts to 1000; each turn calls `inc` (r0 + 3) and adds the result to r2.
    let ops = callops::call_in_loop();
    let s = agree(&ops);
    let body = callops::loop_body(&s);
    for op in [
        "call",
        "new",
        "getfield",
        "setfield",
        "getarrayitem",
        "setarrayitem",
    ] {
        assert!(!body.contains(op), "`{op}` in the loop body:\n{body}");
    }
}

#[test]
fn a_guard_three_calls_deep_resumes_with_the_interpreters_guest_stack() {
    // Each turn calls f1, which calls f2, which calls f3; f3's branch on its argument flips
    // after 600 turns. Its guard then fails three inlined calls deep: the frames' registers,
    // return points and depth, kept in registers by the compiled loop, are written back from
    // the guard's resume data, and the interpreter goes on in f3. There the other branch
    // takes a snapshot of the whole machine: the 400 snapshots equal the JIT-off run's.
    let ops = callops::three_deep();
    let (_, _, snaps, _) = go("off", &ops);
    assert_eq!(snaps.len(), 400);
    assert!(snaps.iter().all(|m| m.depth == 3), "three calls deep");
    let s = agree(&ops);
    assert!(s.guard_failures >= 300, "{}", s.summary());
    assert_eq!(s.bridges(), 0, "{}", s.summary());
}
