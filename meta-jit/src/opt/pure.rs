//! CSE of pure operations and elidable calls, and the `record_known_result` facts that feed
//! the same table (RPython's `OptPure`).
//!
//! The table maps an operation's key (opcode, arguments after `find`, in order for a
//! commutative op, descriptor) to the value that computed it first. An elidable call's key is its function and arguments, whatever its
//! call descriptor; `record_known_result(res, f, args...)` inserts the key of `f(args...)` with
//! `res` and leaves the trace, so a later call of `f` on those arguments becomes `res` (and,
//! for an inverse like `neg(neg(x))`, the first call then dies in the dead-code sweep).
//! A `#[loop_invariant]` call (a residual call whose descriptor says `loop_invariant`) enters
//! the same table: a later call of the function on the same arguments becomes the first one's
//! result, so in a peeled loop the preamble's call serves every iteration of the body.

use super::{Optimizer, Step};
use crate::ir::{DescrId, Op, OpArgs, OpRef, Opcode};
use hashbrown::HashMap;

/// The CSE table.
#[derive(Default, Clone)]
pub struct Table {
    seen: HashMap<Key, OpRef>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    opcode: Opcode,
    args: OpArgs,
    descr: Option<DescrId>,
}

fn key(op: &Op) -> Key {
    if op.opcode.is_call() {
        // Calls are keyed by function and arguments (the descriptor only describes them).
        Key {
            opcode: Opcode::CallPureI,
            args: op.args.clone(),
            descr: None,
        }
    } else {
        let mut args = op.args.clone();
        // `a + b` and `b + a` are one value: a commutative op's key has its arguments in
        // order.
        if op.opcode.flags().has(crate::ir::Flags::COMMUTATIVE) && args[0] > args[1] {
            args.swap(0, 1);
        }
        Key {
            opcode: op.opcode,
            args,
            descr: op.descr,
        }
    }
}

/// The CSE stage.
pub fn optimize(o: &mut Optimizer, op: Op) -> Step {
    if op.opcode == Opcode::RecordKnownResult {
        let res = op.args[0];
        let call = Op::new(Opcode::CallPureI, &op.args[1..]);
        o.pure.seen.entry(key(&call)).or_insert(res);
        return Step::Remove;
    }
    if loop_invariant_call(o, &op) {
        if let Some(&v) = o.pure.seen.get(&key(&op)) {
            return Step::Replace(v);
        }
        return Step::Next(op);
    }
    if !op.opcode.is_pure() {
        return Step::Next(op);
    }
    if let Some(&v) = o.pure.seen.get(&key(&op)) {
        return Step::Replace(v);
    }
    // A comparison whose negation is known (a guard decided it): `a < b` after `a >= b`
    // was found false.
    if let Some(neg) = op.opcode.negated() {
        let k = Key {
            opcode: neg,
            args: op.args.clone(),
            descr: None,
        };
        if let Some(&v) = o.pure.seen.get(&k) {
            if let Some(crate::ir::Value::Int(c)) = o.const_value(v) {
                return Step::Replace(o.out.int(i64::from(c == 0)));
            }
        }
    }
    Step::Next(op)
}

/// Records an emitted pure op.
pub fn emitted(o: &mut Optimizer, r: OpRef) {
    let op = &o.out.ops[r.index()];
    if op.opcode.is_pure() || loop_invariant_call(o, op) {
        let k = key(op);
        o.pure.seen.entry(k).or_insert(r);
    }
}

/// Whether `op` calls a `#[loop_invariant]` function (with a result).
fn loop_invariant_call(o: &Optimizer, op: &Op) -> bool {
    op.opcode.is_call()
        && op.opcode.result() != crate::ir::Type::Void
        && op.descr.is_some_and(|d| {
            o.out
                .get_descr(d)
                .call()
                .is_some_and(|c| c.effects.loop_invariant)
        })
}

/// Forgets every entry that mentions one of `values` (the loop-carried values at the label).
pub fn forget(o: &mut Optimizer, values: &hashbrown::HashSet<OpRef>) {
    o.pure
        .seen
        .retain(|k, v| !values.contains(v) && !k.args.iter().any(|a| values.contains(a)));
}
