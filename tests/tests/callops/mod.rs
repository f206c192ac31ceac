//! The instruction set of the two register VMs whose guest calls continue in the dispatch loop
//! (`jit_frames.rs`, frames in a virtualizable machine; `heapvm`, frames on the heap), and the
//! programs both run.

// The `heapfib_speedup` example includes this module for the instruction set only.
#![allow(dead_code)]

use meta_jit::hints::*;
use meta_jit::warm::{Stats, TraceKind};

#[derive(Clone, Copy, Debug, PartialEq, JitLayout, Trace)]
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

#[derive(JitLayout, Trace)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// The caller both programs share: r1 counts to 1000; each turn calls the function at pc 7
/// with r1 and adds its result to r2.
fn caller() -> Vec<Ins> {
    vec![
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
    ]
}

/// r1 counts to 1000; each turn calls `inc` (r0 + 3) and adds the result to r2.
pub fn call_in_loop() -> Vec<Ins> {
    let mut ops = caller();
    // inc (pc 7): r0 = r0 + 3; return r0
    ops.extend([Ins::AddI(0, 0, 3), Ins::Leave(0)]);
    ops
}

/// Each turn calls f1, which calls f2, which calls f3; f3's branch on its argument flips after
/// 600 turns (its guard then fails three inlined calls deep) and takes a snapshot of the guest
/// stack on the other side.
pub fn three_deep() -> Vec<Ins> {
    let mut ops = caller();
    ops.extend([
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
    ]);
    ops
}

/// The optimized loop body (after its label) of the only loop, as text.
pub fn loop_body(s: &Stats) -> String {
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
