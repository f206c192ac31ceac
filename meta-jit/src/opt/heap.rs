//! The heap cache: forwards a load from an earlier load or store of the same location, drops a
//! store of the value the location already holds, and forgets what a write or a call may have
//! changed (RPython's `OptHeap`, without lazy stores).
//!
//! The cache holds what a *load* would return: after a store to a location narrower than 8
//! bytes, the stored value truncated and extended as the descriptor says (an `int_signext` or
//! `int_and` is emitted for it, and dies if unused). So a store is redundant exactly when the
//! cache already holds the value stored.
//!
//! The cache holds what a *load* would return: after a store to a location narrower than 8
//! bytes, the stored value truncated and extended as the descriptor says (an `int_signext` or
//! `int_and` is emitted for it, and dies if unused). So a store is redundant exactly when the
//! cache already holds the value stored.
//!
//! A location is (descriptor, object) for fields and (descriptor, array, index) for items,
//! with object and index after `find`. Aliasing follows the descriptor contract of
//! [`crate::ir`]: different descriptors never alias; the same descriptor on two objects may,
//! unless the objects are the same value. A store to an array item with a constant index keeps
//! what is known of other constant indices of the same array. A residual call forgets every
//! location whose descriptor its effects may write (immutable fields are never forgotten).

use super::{Optimizer, Step};
use crate::ir::{DescrId, Op, OpRef, Opcode};
use hashbrown::HashMap;

/// What the optimizer knows memory holds.
#[derive(Default)]
pub struct Cache {
    fields: HashMap<(DescrId, OpRef), OpRef>,
    items: HashMap<(DescrId, OpRef, OpRef), OpRef>,
}

/// The heap stage.
pub fn optimize(o: &mut Optimizer, op: Op) -> Step {
    use Opcode::*;
    let d = op.descr;
    let known = match op.opcode {
        GetfieldI | GetfieldF | GetfieldR => o.heap.fields.get(&(d.unwrap(), op.args[0])),
        GetarrayitemI | GetarrayitemF | GetarrayitemR => {
            o.heap.items.get(&(d.unwrap(), op.args[0], op.args[1]))
        }
        Setfield => {
            if o.heap.fields.get(&(d.unwrap(), op.args[0])) == Some(&op.args[1]) {
                return Step::Remove;
            }
            None
        }
        Setarrayitem => {
            if o.heap.items.get(&(d.unwrap(), op.args[0], op.args[1])) == Some(&op.args[2]) {
                return Step::Remove;
            }
            None
        }
        _ => None,
    };
    match known {
        Some(&v) => {
            let v = o.find(v);
            Step::Replace(v)
        }
        None => Step::Next(op),
    }
}

/// Learns from an emitted op.
pub fn emitted(o: &mut Optimizer, r: OpRef) {
    use Opcode::*;
    let op = &o.out.ops[r.index()];
    let (opcode, args, d) = (op.opcode, op.args.clone(), op.descr);
    match opcode {
        GetfieldI | GetfieldF | GetfieldR => {
            o.heap.fields.insert((d.unwrap(), args[0]), r);
        }
        GetarrayitemI | GetarrayitemF | GetarrayitemR => {
            o.heap.items.insert((d.unwrap(), args[0], args[1]), r);
        }
        Setfield => {
            let d = d.unwrap();
            o.heap.fields.retain(|k, _| k.0 != d);
            let f = o.out.get_descr(d).field().expect("verified");
            let v = o.narrowed(args[1], f.size, f.signed);
            o.heap.fields.insert((d, args[0]), v);
        }
        Setarrayitem => {
            let d = d.unwrap();
            let (p, i) = (args[0], args[1]);
            o.heap.items.retain(|k, _| {
                k.0 != d || (k.1 == p && k.2.is_const() && i.is_const() && k.2 != i)
            });
            let a = o.out.get_descr(d).array().expect("verified");
            let v = o.narrowed(args[2], a.item_size, a.signed);
            o.heap.items.insert((d, p, i), v);
        }
        _ if opcode.is_call() && !opcode.is_pure() => {
            let cd = o
                .out
                .get_descr(d.expect("verified"))
                .call()
                .expect("verified");
            let writes = cd.effects.writes.clone();
            let descrs = &o.out.descrs;
            let immutable = |d: DescrId| descrs[d.0 as usize].field().is_some_and(|f| f.immutable);
            o.heap
                .fields
                .retain(|k, _| immutable(k.0) || !writes.may_touch(k.0));
            o.heap.items.retain(|k, _| !writes.may_touch(k.0));
        }
        _ => {}
    }
}
