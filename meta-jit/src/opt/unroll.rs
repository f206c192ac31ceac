//! Loop peeling (RPython's `unroll`): a loop trace that jumps back to its own inputs becomes
//! two copies of its body, the first iteration (the preamble) and then, after a `label`, the
//! loop proper. The optimizer then sees the loop body with everything the preamble learnt:
//! pure values of loop-invariant inputs are computed once, guards on them are checked once,
//! and the heap cache carries what memory holds across the label ([`super::heap`]), so
//! loop-invariant loads leave the loop.
//!
//! Only the inputs the `jump` changes are loop-carried: an input the `jump` passes back
//! unchanged is loop-invariant, and the loop refers to it directly. The label's arguments are
//! fresh `same_as` copies of the changed values, so that no other value of the trace is one
//! of them.
//!
//! The guards of the second copy get new resume ids: the first copy's plus
//! [`Peeled::id_offset`], so that they follow the trace's own ids without a gap (ids of later
//! traces follow those).
//!
//! Owns: the shape of a peeled trace. Must not know: what the stages do with it.

use crate::ir::{Op, OpArgs, OpRef, Opcode, Trace};

/// A peeled loop.
#[derive(Clone, Debug)]
pub struct Peeled {
    /// Inputs, preamble, `label`, loop body, `jump` to the label.
    pub trace: Trace,
    /// Which inputs are loop-carried, in the order of the label's arguments.
    pub carried: Vec<usize>,
    /// What was added to the resume id of each guard copied into the loop body.
    pub id_offset: u32,
    /// The smallest id of a copied guard (every copy's id is at least this, every original's
    /// below it).
    pub first_copy_id: u32,
}

/// Peels a trace that loops to its own inputs (no label, a `jump` without a target at the
/// end); `None` for any other trace. The inputs the `jump` passes back as they are stay
/// loop-invariant.
pub fn peel(t: &Trace) -> Option<Peeled> {
    peel_with(t, |_| false)
}

/// Whether [`peel`] would peel the trace: it loops to its own inputs (no label, and it ends
/// in a `jump` without a target that passes back one value per input).
pub fn peelable(t: &Trace) -> bool {
    let Some(last) = t.ops.last() else {
        return false;
    };
    last.opcode == Opcode::Jump
        && last.descr.is_none()
        && t.label().is_none()
        && last.args.len() == t.num_inputs()
}

/// Like [`peel`], with more inputs known to be loop-invariant: `same(k)` says that the
/// `jump` passes back input `k`'s own value, whatever the iteration started from (the
/// optimizer proved it of one iteration).
pub fn peel_with(t: &Trace, same: impl Fn(usize) -> bool) -> Option<Peeled> {
    if !peelable(t) {
        return None;
    }
    let last = t.ops.last()?;
    let n = t.num_inputs();
    let jump_at = t.ops.len() - 1;
    let jump_args = &last.args;
    // The copies' ids follow the trace's own: [min, max] becomes [max + 1, 2 max + 1 - min].
    let ids = t
        .ops
        .iter()
        .filter_map(|op| op.resume.as_ref())
        .map(|r| r.id);
    let (min, max) = ids.fold((u32::MAX, 0), |(lo, hi), id| (lo.min(id), hi.max(id)));
    let (first_copy_id, id_offset) = if min > max {
        (0, 0)
    } else {
        (max + 1, max + 1 - min)
    };
    let mut out = Trace::with_tables_of(t);
    out.ops.extend(t.ops[..jump_at].iter().cloned());
    // The loop-carried inputs and their label boxes.
    let carried: Vec<usize> = (0..n)
        .filter(|&k| jump_args[k] != OpRef::op(k) && !same(k))
        .collect();
    let mut map: Vec<OpRef> = (0..jump_at).map(OpRef::op).collect();
    let mut label_args = Vec::with_capacity(carried.len());
    for &k in &carried {
        let v = jump_args[k];
        let ty = t.type_of(v);
        let b = out.push(Op::new(Opcode::same_as(ty), &[v]));
        label_args.push(b);
        map[k] = b;
    }
    out.push(Op::new(Opcode::Label, &label_args));
    let m = |map: &[OpRef], r: OpRef| if r.is_op() { map[r.index()] } else { r };
    for j in n..jump_at {
        let mut op = t.ops[j].clone();
        op.map_ops(|r| map[r.index()]);
        if let Some(r) = op.resume.as_deref_mut() {
            r.id += id_offset;
        }
        map[j] = out.push(op);
    }
    let args: OpArgs = carried.iter().map(|&k| m(&map, jump_args[k])).collect();
    out.push(Op::new(Opcode::Jump, &args));
    Some(Peeled {
        trace: out,
        carried,
        id_offset,
        first_copy_id,
    })
}

#[cfg(test)]
mod tests {
    use super::peel;
    use crate::ir::parse::{parse_with, Env};
    use crate::ir::print::print;

    const HEADER: &str = "descr x = field(offset=0, size=8, kind=i, signed)\n";

    fn check(input: &str, expected: &str) {
        let t = parse_with(&format!("{HEADER}{input}"), &Env::new()).unwrap();
        let want = parse_with(&format!("{HEADER}{expected}"), &Env::new()).unwrap();
        let p = peel(&t).expect("a loop to peel");
        assert_eq!(crate::ir::verify::verify(&p.trace), Ok(()));
        assert_eq!(print(&p.trace), print(&want));
    }

    #[test]
    fn peels_with_carried_and_invariant_inputs() {
        check(
            "[i0, i1]\ni2 = int_add(i0, i1)\nguard_true(i2) [i0]\njump(i2, i1)",
            "[i0, i1]\ni2 = int_add(i0, i1)\nguard_true(i2) [i0]\ni3 = same_as_i(i2)\nlabel(i3)\ni4 = int_add(i3, i1)\nguard_true(i4) [i3]\njump(i4)",
        );
    }

    #[test]
    fn second_copy_guards_get_new_ids() {
        let t = parse_with(
            "[i0]\nguard_true(i0) [i0]\ni1 = int_sub(i0, 1)\njump(i1)",
            &Env::new(),
        )
        .unwrap();
        let p = peel(&t).unwrap();
        let ids: Vec<u32> = p
            .trace
            .ops
            .iter()
            .filter_map(|o| o.resume.as_ref().map(|r| r.id))
            .collect();
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[1], ids[0] + p.id_offset);
        assert_eq!(ids[1], p.first_copy_id);
        assert_eq!(p.carried, vec![0]);
    }

    #[test]
    fn a_loop_with_nothing_carried_has_an_empty_label() {
        check(
            "[p0]\ni1 = getfield_i(p0, descr=x)\nguard_true(i1) []\njump(p0)",
            "[p0]\ni1 = getfield_i(p0, descr=x)\nguard_true(i1) []\nlabel()\ni2 = getfield_i(p0, descr=x)\nguard_true(i2) []\njump()",
        );
    }

    #[test]
    fn traces_that_are_not_self_loops_are_left_alone() {
        for t in [
            "[i0]\nfinish(i0)",
            "[i0]\nlabel(i0)\ni1 = int_add(i0, 1)\njump(i1)",
        ] {
            assert!(peel(&parse_with(t, &Env::new()).unwrap()).is_none());
        }
    }
}
