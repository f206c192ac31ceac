//! The backward dead-code sweep: an op stays if it has an effect (stores, residual calls,
//! guards, `label`, `jump`, `finish`, overflow-checked arithmetic whose flag a guard reads) or
//! if a staying op uses its value (as an argument or in resume data). Pure ops, loads and
//! allocations that nothing uses go. The survivors are renumbered.

use crate::ir::{Op, OpRef, Opcode, Trace};

/// Whether an op may go when its value is unused.
fn removable(op: &Op) -> bool {
    use Opcode::*;
    op.opcode.is_pure() || op.opcode.is_load() || matches!(op.opcode, New | NewArray)
}

fn uses(op: &Op) -> impl Iterator<Item = OpRef> + '_ {
    let resume = op.resume.iter().flat_map(|r| r.refs());
    op.args.iter().copied().chain(resume).filter(|a| a.is_op())
}

/// Removes unused ops without effects (moving the survivors out of `t`).
pub fn sweep(mut t: Trace) -> Trace {
    let n = t.ops.len();
    let mut live = vec![false; n];
    for i in (0..n).rev() {
        let op = &t.ops[i];
        if live[i] || op.opcode.is_input() || !removable(op) {
            live[i] = true;
            for a in uses(op) {
                live[a.index()] = true;
            }
        }
    }
    let ops = std::mem::take(&mut t.ops);
    t.ops.reserve(live.iter().filter(|&&l| l).count());
    let mut new_index = vec![OpRef::constant(0); n];
    for (i, mut op) in ops.into_iter().enumerate() {
        if !live[i] {
            continue;
        }
        op.map_ops(|r| new_index[r.index()]);
        new_index[i] = t.push(op);
    }
    // A loop's pending stores name inputs and `jump` arguments, which stay.
    for st in t.loop_stores.iter_mut() {
        for r in st.refs_mut().filter(|r| r.is_op()) {
            *r = new_index[r.index()];
        }
    }
    t
}
