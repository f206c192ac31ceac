//! Liveness over the linear trace: for every op, the index of its last use, with the two
//! adjustments compiled code needs. A comparison fused into the guard right after it is read by
//! that guard, so its arguments live one op longer. In a loop, a value defined before the loop
//! header and used inside the loop (a loop invariant) lives until the closing `jump`, since
//! the next iteration reads it again.
//!
//! Uses are arguments, the live ops of a guard's resume data, label arguments and jump
//! arguments. This module knows the IR, not registers.

use crate::ir::{Opcode, Trace};

/// Liveness facts of one trace.
pub(crate) struct Liveness {
    /// Index of the last op that reads each op's value (its own index when nothing does).
    pub last_use: Vec<u32>,
    /// Whether op `i` is a comparison emitted by the guard at `i + 1` instead of by itself.
    pub fused: Vec<bool>,
    /// Whether the value of op `i` lives across a call (so it prefers a callee-saved register).
    pub crosses_call: Vec<bool>,
    /// Whether the trace is a loop (ends with a `jump` without a target descriptor).
    pub is_loop: bool,
    /// The loop header's op index (the label, or `None` when the loop goes back to the start).
    pub label: Option<usize>,
    /// The values the back-edge must put back where they were at the header, with the jump
    /// argument that gives each its next value (`None` for loop invariants: themselves).
    pub header_live: Vec<(u32, Option<usize>)>,
    /// Every use of every value, in order: value `v`'s are `uses[use_start[v]..use_start[v +
    /// 1]]` (op indices; an invariant's include the closing `jump`).
    pub uses: Vec<u32>,
    /// Where each value's uses start in [`Liveness::uses`].
    pub use_start: Vec<u32>,
    /// For a loop invariant, the index of its first use after the header (where the next
    /// iteration reads it first); `u32::MAX` for other values.
    pub wrap_use: Vec<u32>,
}

/// Whether `op` is a comparison that a following `guard_true`/`guard_false` can test directly.
pub(crate) fn is_fusable_compare(op: Opcode) -> bool {
    op.is_comparison()
}

/// Computes the liveness of `t` (a verified trace).
pub(crate) fn analyze(t: &Trace) -> Liveness {
    let n = t.ops.len();
    let mut last_use: Vec<u32> = (0..n as u32).collect();
    for (i, op) in t.ops.iter().enumerate() {
        for &a in &op.args {
            if a.is_op() {
                last_use[a.index()] = i as u32;
            }
        }
        if let Some(r) = &op.resume {
            // Repeats do not matter here: no list of distinct ops is built.
            for a in r.refs().filter(|a| a.is_op()) {
                last_use[a.index()] = i as u32;
            }
        }
    }
    // Fusion: a comparison read only by the guard right after it, as its condition (not as a
    // value its exit saves).
    let mut fused = vec![false; n];
    for i in 0..n.saturating_sub(1) {
        let next = &t.ops[i + 1];
        if is_fusable_compare(t.ops[i].opcode)
            && matches!(next.opcode, Opcode::GuardTrue | Opcode::GuardFalse)
            && next.args[0].is_op()
            && next.args[0].index() == i
            && last_use[i] == i as u32 + 1
            && !next
                .resume
                .as_ref()
                .is_some_and(|r| r.refs().any(|a| a == next.args[0]))
        {
            fused[i] = true;
            for &a in &t.ops[i].args {
                if a.is_op() {
                    let l = &mut last_use[a.index()];
                    *l = (*l).max(i as u32 + 1);
                }
            }
        }
    }
    let last = t.ops.last();
    let is_loop = last.is_some_and(|op| op.opcode == Opcode::Jump && !is_target_jump(t, op));
    let label = t.label();
    let mut header_live = Vec::new();
    if is_loop {
        let end = n as u32 - 1;
        match label {
            Some(l) => {
                let args = &t.ops[l].args;
                for (k, a) in args.iter().enumerate() {
                    if last_use[a.index()] > l as u32 {
                        header_live.push((a.index() as u32, Some(k)));
                    }
                }
                let mut is_arg = vec![false; l];
                for a in args.iter().filter(|a| a.is_op() && a.index() < l) {
                    is_arg[a.index()] = true;
                }
                for (v, lu) in last_use.iter_mut().enumerate().take(l) {
                    if !is_arg[v] && *lu > l as u32 {
                        *lu = end;
                        header_live.push((v as u32, None));
                    }
                }
            }
            None => {
                for v in t.inputs() {
                    if last_use[v.index()] >= t.num_inputs() as u32 {
                        header_live.push((v.index() as u32, Some(v.index())));
                    }
                }
            }
        }
    }
    // Calls clobber the caller-saved registers.
    let mut next_call = vec![u32::MAX; n + 1];
    for i in (0..n).rev() {
        let op = t.ops[i].opcode;
        let is_call =
            op.is_call() || matches!(op, Opcode::New | Opcode::NewArray | Opcode::FloatMod);
        next_call[i] = if is_call { i as u32 } else { next_call[i + 1] };
    }
    let crosses_call = (0..n).map(|v| next_call[v + 1] < last_use[v]).collect();
    let (uses, use_start, wrap_use) = use_lists(t, &fused, &header_live, is_loop);
    Liveness {
        last_use,
        fused,
        crosses_call,
        is_loop,
        label,
        header_live,
        uses,
        use_start,
        wrap_use,
    }
}

/// The uses of every value in op order (CSR), and the wrap-around use of loop invariants.
fn use_lists(
    t: &Trace,
    fused: &[bool],
    header_live: &[(u32, Option<usize>)],
    is_loop: bool,
) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let n = t.ops.len();
    let end = n as u32 - 1;
    let invariants = || {
        header_live
            .iter()
            .filter(|h| is_loop && h.1.is_none())
            .map(|h| h.0 as usize)
    };
    let each = |f: &mut dyn FnMut(usize, u32)| {
        for (i, op) in t.ops.iter().enumerate() {
            // A fused comparison reads its operands at the guard.
            let at = if fused[i] { i as u32 + 1 } else { i as u32 };
            for &a in &op.args {
                if a.is_op() {
                    f(a.index(), at);
                }
            }
            if let Some(r) = &op.resume {
                for a in r.live_ops() {
                    f(a.index(), i as u32);
                }
            }
        }
        for v in invariants() {
            f(v, end);
        }
    };
    let mut count = vec![0u32; n + 1];
    each(&mut |v, _| count[v + 1] += 1);
    for v in 0..n {
        count[v + 1] += count[v];
    }
    let use_start = count.clone();
    let mut fill = count;
    let mut uses = vec![0u32; use_start[n] as usize];
    each(&mut |v, at| {
        uses[fill[v] as usize] = at;
        fill[v] += 1;
    });
    let header = t.label().map_or(t.num_inputs(), |l| l + 1) as u32;
    let mut wrap_use = vec![u32::MAX; n];
    for v in invariants() {
        let us = &uses[use_start[v] as usize..use_start[v + 1] as usize];
        wrap_use[v] = us.iter().copied().find(|&u| u >= header).unwrap_or(end);
    }
    (uses, use_start, wrap_use)
}

/// Whether a `jump` leaves for another trace (it has a target descriptor).
pub(crate) fn is_target_jump(t: &Trace, op: &crate::ir::Op) -> bool {
    op.descr
        .is_some_and(|d| matches!(t.get_descr(d).kind, crate::ir::DescrKind::Target(_)))
}
