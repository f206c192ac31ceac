//! Dead stores: a store that a later store to the same location overwrites before anything
//! could observe it is removed (run after the other stages, on the optimized trace).
//!
//! A location is (descriptor, object) for `setfield` and (descriptor, array, index) for
//! `setarrayitem`, by the very same values, so that two stores to one location write the same
//! bytes. Between the two, nothing may observe memory:
//! - a load whose alias class may alias the store's ([`crate::ir::may_alias`], or the same
//!   descriptor) observes it: the store stays;
//! - a guard observes all of memory (on a failure the interpreter reads it as the unoptimized
//!   trace would have left it), and so do calls, `label`, `jump`, `finish`, allocations (a
//!   collector may look at memory there) and every op not listed as harmless below;
//! - pure ops (but calls), overflow-checked arithmetic and other stores observe nothing.
//!
//! This is the conservative half of RPython's lazy stores: a store is not moved past a guard
//! (which would need the guard's resume data to carry it as a pending store), so only stores
//! with no guard between them and their overwriting store go.
//!
//! Owns: the sweep. Must not know: the other stages, guest languages.

use crate::ir::{AliasMemo, DescrId, Op, OpRef, Opcode, Trace};
use hashbrown::HashMap;

/// A stored location: descriptor, object or array, and the index for items.
type Loc = (DescrId, OpRef, Option<OpRef>);

/// Whether an op other than a load or a store may observe memory (see the module doc).
fn observes_all(op: &Op) -> bool {
    let harmless = (op.opcode.is_pure() && !op.opcode.is_call())
        || op.opcode.is_ovf()
        || op.opcode.is_input();
    !harmless
}

/// Removes the stores that a later store to the same location overwrites before anything may
/// observe them. Returns the trace and how many stores went.
pub fn sweep(mut t: Trace) -> (Trace, usize) {
    use Opcode::*;
    let n = t.ops.len();
    let mut dead = vec![false; n];
    // The stores not observed yet, by location.
    let mut pending: HashMap<Loc, usize> = HashMap::new();
    let mut related = AliasMemo::default();
    for (i, op) in t.ops.iter().enumerate() {
        let loc = match op.opcode {
            Setfield => Some((op.descr.expect("verified"), op.args[0], None)),
            Setarrayitem => Some((op.descr.expect("verified"), op.args[0], Some(op.args[1]))),
            _ => None,
        };
        if let Some(loc) = loc {
            if let Some(earlier) = pending.insert(loc, i) {
                dead[earlier] = true;
            }
            continue;
        }
        match op.opcode {
            GetfieldI | GetfieldF | GetfieldR | GetarrayitemI | GetarrayitemF | GetarrayitemR => {
                let d = op.descr.expect("verified");
                pending.retain(|&(k, _, _), _| !related.meet(&t, d, k));
            }
            _ if observes_all(op) => pending.clear(),
            _ => {}
        }
    }
    let removed = dead.iter().filter(|&&d| d).count();
    if removed == 0 {
        return (t, 0);
    }
    let ops = std::mem::take(&mut t.ops);
    t.ops.reserve(n - removed);
    let mut new_index = vec![OpRef::constant(0); n];
    for (i, mut op) in ops.into_iter().enumerate() {
        if dead[i] {
            continue;
        }
        op.map_ops(|r| new_index[r.index()]);
        new_index[i] = t.push(op);
    }
    (t, removed)
}
