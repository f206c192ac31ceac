//! The tracer's cache of what the trace already computed (RPython's `heapcache.py`, plus the
//! pure-op and guard sharing RPython's tracer does through its boxes): while recording, a field
//! or array item load the trace loaded before, a pure op on the same arguments as an earlier
//! one, or a guard on a condition an earlier guard already checked record nothing, and the
//! earlier op stands for the new one. A guard on a comparison also settles that comparison and
//! its negation: after `guard_false(uint_ge(i, n))`, `uint_lt(i, n)` is the constant 1, and a
//! branch on it records no guard.
//!
//! The optimizer would remove all of these too; the tracer does it because an interpreter
//! re-reads the same fields at every step (a `Vec`'s buffer and length at every cell access),
//! and each op not recorded is one the tracer and then every optimizer stage need not handle.
//!
//! A load is only shared while nothing may have changed what it read: every store the
//! tracer records forgets the fields and array items of the alias classes it may alias (the
//! optimizer's aliasing rule, [`crate::ir::may_alias`], through an [`AliasMemo`]), and every call that is not elidable
//! and not declared to write nothing forgets all of them. Each entry also keeps the concrete
//! value the load returned; a later load
//! that reads another value means a write went unseen, a bug [`HeapCache::field`] asserts
//! against in debug builds and never acts on (the load is then recorded).
//!
//! Owns: the four tables, and what it learned of which descriptors alias. Must not know: the optimizer, the guest language, how jitcode ops
//! map to trace ops (its caller, [`super::record`], decides what is a load, a store or a call).

use crate::ir::{AliasMemo, DescrId, OpRef, Opcode, Trace, Value};
use hashbrown::{HashMap, HashSet};

/// The loads through one descriptor: by location (an object, or an array and an index), the
/// load and the value it returned.
type Loads<K> = HashMap<K, (OpRef, Value)>;

/// What the trace recorded so far that a repeat can reuse.
#[derive(Default)]
pub(super) struct HeapCache {
    /// Field loads since the last write that may have changed them: by descriptor, then
    /// object, the load and the value it returned. Keyed by descriptor first so that a store
    /// forgets whole descriptors: a trace has tens of them, and hundreds of loads.
    fields: HashMap<DescrId, Loads<OpRef>>,
    /// Array item loads, the same way: by descriptor, then (array, index).
    items: HashMap<DescrId, Loads<(OpRef, OpRef)>>,
    /// Which descriptors may alias, as asked so far.
    related: AliasMemo,
    /// Pure ops of one or two arguments.
    pure: HashMap<(Opcode, OpRef, Option<OpRef>), OpRef>,
    /// Guards recorded on one condition (or a value and the constant it must equal).
    guarded: HashSet<(Opcode, OpRef, Option<OpRef>)>,
}

fn pair(args: &[OpRef]) -> Option<(OpRef, Option<OpRef>)> {
    match *args {
        [a] => Some((a, None)),
        [a, b] => Some((a, Some(b))),
        _ => None,
    }
}

impl HeapCache {
    /// The earlier load of field `d` of `obj`, if nothing may have written it since. `now` is
    /// what the load returns now (see the module doc).
    pub fn field(&self, d: DescrId, obj: OpRef, now: Value) -> Option<OpRef> {
        let &(r, was) = self.fields.get(&d)?.get(&obj)?;
        debug_assert!(
            was == now,
            "the tracer's heap cache missed a write of field {d:?}: it held {was:?}, memory holds {now:?}"
        );
        (was == now).then_some(r)
    }

    /// Remembers that load `r` of field `d` of `obj` returned `v`.
    pub fn loaded(&mut self, d: DescrId, obj: OpRef, r: OpRef, v: Value) {
        self.fields.entry(d).or_default().insert(obj, (r, v));
    }

    /// The earlier load of item `index` of `array` through array descriptor `d`, if nothing
    /// may have written it since. `now` is what the load returns now.
    pub fn item(&self, d: DescrId, array: OpRef, index: OpRef, now: Value) -> Option<OpRef> {
        let &(r, was) = self.items.get(&d)?.get(&(array, index))?;
        debug_assert!(
            was == now,
            "the tracer's heap cache missed a write of an item of {d:?}: it held {was:?}, memory holds {now:?}"
        );
        (was == now).then_some(r)
    }

    /// Remembers that load `r` of item `index` of `array` returned `v`.
    pub fn loaded_item(&mut self, d: DescrId, array: OpRef, index: OpRef, r: OpRef, v: Value) {
        self.items.entry(d).or_default().insert((array, index), (r, v));
    }

    /// A store through descriptor `d` (a field or an array item) ran: forgets every field and
    /// item it may have written.
    pub fn stored(&mut self, t: &Trace, d: DescrId) {
        let related = &mut self.related;
        let mut kept = |k: DescrId| !related.meet(t, d, k);
        self.fields.retain(|&k, _| kept(k));
        self.items.retain(|&k, _| kept(k));
    }

    /// A call that may write anything ran. (Items go too, although today an array's base
    /// after a call is always a new load of a field, which makes every item key new: an
    /// array reached another way would otherwise keep what the call may have changed.)
    pub fn called(&mut self) {
        self.fields.clear();
        self.items.clear();
    }

    /// The earlier pure op `opcode(args)`.
    pub fn pure(&self, opcode: Opcode, args: &[OpRef]) -> Option<OpRef> {
        let (a, b) = pair(args)?;
        self.pure.get(&(opcode, a, b)).copied()
    }

    /// Remembers that `r` is the pure op `opcode(args)`.
    pub fn computed(&mut self, opcode: Opcode, args: &[OpRef], r: OpRef) {
        if let Some((a, b)) = pair(args) {
            self.pure.insert((opcode, a, b), r);
        }
    }

    /// A guard just recorded that `cond` is `holds`: when `cond` is a recorded comparison, that
    /// comparison on the same arguments is now the constant `holds`, and its negation the
    /// other one.
    pub fn settled(&mut self, t: &mut Trace, cond: OpRef, holds: bool) {
        if cond.is_const() {
            return;
        }
        let op = t.op(cond);
        let (Some(neg), Some((a, b))) = (op.opcode.negated(), pair(&op.args)) else {
            return;
        };
        let opcode = op.opcode;
        let (yes, no) = (t.int(i64::from(holds)), t.int(i64::from(!holds)));
        self.pure.insert((opcode, a, b), yes);
        self.pure.insert((neg, a, b), no);
    }

    /// Whether a guard `opcode(args)` is new; it is remembered as recorded. Only guards whose
    /// outcome depends on their arguments alone are shared.
    pub fn new_guard(&mut self, opcode: Opcode, args: &[OpRef]) -> bool {
        use Opcode::*;
        let shared = matches!(opcode, GuardTrue | GuardFalse | GuardValue);
        match pair(args) {
            Some((a, b)) if shared => self.guarded.insert((opcode, a, b)),
            _ => true,
        }
    }
}
