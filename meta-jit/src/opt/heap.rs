//! The heap cache: forwards a load from an earlier load or store of the same location, drops a
//! store of the value the location already holds, and forgets what a write or a call may have
//! changed (RPython's `OptHeap`, without lazy stores).
//!
//! The cache holds what a *load* would return: after a store to a location narrower than 8
//! bytes, the stored value truncated and extended as the descriptor says (an `int_signext` or
//! `int_and` is emitted for it, and dies if unused). So a store is redundant exactly when the
//! cache already holds the value stored.
//!
//! A location is (descriptor, object) for fields and (descriptor, array, index) for items,
//! with object and index after `find`. Aliasing follows the alias classes of [`crate::ir`]'s
//! descriptors: a store forgets only what it may overwrite, which is a location of its class
//! other than those provably apart from it: another field at a disjoint offset of the same
//! object, or another item of the same array whose index differs by a known constant (`i` and
//! `i + 1`, or two different constants). A residual call forgets every location whose class its
//! effects may write (immutable fields are never forgotten).
//!
//! Loops: at the label, the cache keeps what it knows of locations that the loop's carried
//! values do not name (RPython imports the preamble's heap state). That is only true on the
//! next iteration if the body leaves those locations as they were, which is known at the
//! `jump`. If the body changed one, the optimizer runs again ([`Cache::broken`]). If the body
//! knows the new value (it stored it), this time the loop *carries* that location's value
//! ([`Cache::carried`]): the label gets one more argument holding it, and the `jump` passes
//! what the location holds at the end of the body (the value the cache knows, or a load
//! emitted just before the `jump` if a later round lost it). So a value stored in one
//! iteration and loaded in the next stays in a register. If the body does not know the new
//! value (a call or an aliasing store changed it), the location is not imported
//! ([`Cache::banned`]).

use super::{Optimizer, Step};
use crate::ir::{Access, DescrId, Op, OpRef, Opcode, Trace, Value};
use hashbrown::HashMap;

/// A field location: descriptor and object.
pub type FieldKey = (DescrId, OpRef);
/// An item location: descriptor, array and index.
pub type ItemKey = (DescrId, OpRef, OpRef);

/// A location the cache may know across a loop's label.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Imported {
    /// A field.
    Field(FieldKey),
    /// An array item.
    Item(ItemKey),
}

/// What the optimizer knows memory holds.
#[derive(Default)]
pub struct Cache {
    fields: HashMap<FieldKey, OpRef>,
    items: HashMap<ItemKey, OpRef>,
    /// The alias class of each descriptor (by table index): equal numbers may alias.
    classes: Vec<u32>,
    /// The first index op seen for each (base, constant offset): items are keyed by it, so
    /// that `x + 2` computed twice (say once with an overflow check) names one item.
    canon: HashMap<(OpRef, i64), OpRef>,
    /// What was known at the label, to be checked at the loop's `jump`.
    imported: Vec<(Imported, OpRef)>,
    /// Locations whose value the loop carries in a label argument (the body changes them).
    pub carried: Vec<Imported>,
    /// The carried locations the label got an argument for, in the label's order.
    carried_now: Vec<Imported>,
    /// Locations not to import at the label (the body changes them to something it does not
    /// know).
    pub banned: Vec<Imported>,
    /// Imported locations the body changed: the loop must be optimized again, carrying them
    /// (`true`: the body knows the new value) or not importing them (`false`).
    pub broken: Vec<(Imported, bool)>,
}

impl Cache {
    /// An empty cache for the descriptors of `t`.
    pub fn new(t: &Trace) -> Cache {
        let mut names = HashMap::<&str, u32>::new();
        let mut next = 0u32;
        let classes = t
            .descrs
            .iter()
            .map(|d| {
                let own = next;
                next += 1;
                match d.alias_class() {
                    Some(n) => *names.entry(n).or_insert(own),
                    None => own,
                }
            })
            .collect();
        Cache {
            classes,
            ..Cache::default()
        }
    }

    /// Forgets everything (the descriptors' classes stay).
    pub fn clear(&mut self) {
        self.fields.clear();
        self.items.clear();
        self.imported.clear();
        self.carried_now.clear();
        self.canon.clear();
    }

    fn class(&self, d: DescrId) -> u32 {
        self.classes[d.0 as usize]
    }
}

/// The heap stage.
pub fn optimize(o: &mut Optimizer, op: Op) -> Step {
    use Opcode::*;
    let d = op.descr;
    let known = match op.opcode {
        GetfieldI | GetfieldF | GetfieldR => o.heap.fields.get(&(d.unwrap(), op.args[0])),
        GetarrayitemI | GetarrayitemF | GetarrayitemR => {
            let i = canon_index(o, op.args[1]);
            o.heap.items.get(&(d.unwrap(), op.args[0], i))
        }
        Setfield => {
            if o.heap.fields.get(&(d.unwrap(), op.args[0])) == Some(&op.args[1]) {
                return Step::Remove;
            }
            None
        }
        Setarrayitem => {
            let i = canon_index(o, op.args[1]);
            if o.heap.items.get(&(d.unwrap(), op.args[0], i)) == Some(&op.args[2]) {
                return Step::Remove;
            }
            None
        }
        Jump if d.is_none() => {
            check_imported(o);
            let mut op = op;
            op.args.extend(carried_values(o));
            return Step::Next(op);
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
    let (opcode, d) = (op.opcode, op.descr);
    // Loads and stores take at most three arguments (calls are read through `d`).
    let arg = |k: usize| op.args.get(k).copied().unwrap_or(OpRef::constant(0));
    let args = [arg(0), arg(1), arg(2)];
    match opcode {
        GetfieldI | GetfieldF | GetfieldR => {
            o.heap.fields.insert((d.unwrap(), args[0]), r);
        }
        GetarrayitemI | GetarrayitemF | GetarrayitemR => {
            let i = canon_index(o, args[1]);
            o.heap.items.insert((d.unwrap(), args[0], i), r);
        }
        Setfield => {
            let d = d.unwrap();
            let obj = args[0];
            let class = o.heap.class(d);
            let descrs = &o.out.descrs;
            let apart = |k: &FieldKey| {
                let (a, b) = (
                    descrs[d.0 as usize].field(),
                    descrs[k.0 .0 as usize].field(),
                );
                let (a, b) = (a.expect("verified"), b.expect("verified"));
                let size = u32::from(a.size.max(b.size));
                k.1 == obj && k.0 != d && a.offset.abs_diff(b.offset) >= size
            };
            let overwritten: Vec<FieldKey> = o
                .heap
                .fields
                .keys()
                .filter(|k| o.heap.class(k.0) == class && !apart(k) && !distinct(o, obj, k.1))
                .copied()
                .collect();
            for k in overwritten {
                o.heap.fields.remove(&k);
            }
            let classes = &o.heap.classes;
            o.heap
                .items
                .retain(|k, _| classes[k.0 .0 as usize] != class);
            let f = o.out.get_descr(d).field().expect("verified");
            let v = o.narrowed(args[1], f.size, f.signed);
            o.heap.fields.insert((d, obj), v);
        }
        Setarrayitem => {
            let d = d.unwrap();
            let p = args[0];
            let i = canon_index(o, args[1]);
            let class = o.heap.class(d);
            let at = index_parts(o, i);
            let keys: Vec<ItemKey> = o
                .heap
                .items
                .keys()
                .filter(|k| o.heap.class(k.0) == class)
                .copied()
                .collect();
            for k in keys {
                let apart = distinct(o, p, k.1)
                    || k.0 == d && k.1 == p && {
                        let other = index_parts(o, k.2);
                        other.0 == at.0 && other.1 != at.1
                    };
                if !apart {
                    o.heap.items.remove(&k);
                }
            }
            let classes = &o.heap.classes;
            o.heap
                .fields
                .retain(|k, _| classes[k.0 .0 as usize] != class);
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
            let classes = &o.heap.classes;
            let touched = |d: DescrId| match &writes {
                Access::Nothing => false,
                Access::Everything => true,
                Access::Descrs(ds) => ds
                    .iter()
                    .any(|w| classes[w.0 as usize] == classes[d.0 as usize]),
            };
            let immutable = |d: DescrId| descrs[d.0 as usize].field().is_some_and(|f| f.immutable);
            o.heap.fields.retain(|k, _| immutable(k.0) || !touched(k.0));
            o.heap.items.retain(|k, _| !touched(k.0));
        }
        _ => {}
    }
}

/// Whether two object values are surely different objects: one is allocated by the trace
/// (`new`, `new_array`) after the other was computed, so the other cannot be it.
///
/// This must hold at every entry of the loop, not only the first. A loop-carried value is
/// computed again at every `jump`, after everything before the label: it is older than an
/// allocation only if that allocation is in the loop body. And a loop-carried value whose
/// first value was a `new` before the label is not an allocation at all after the label
/// (the `jump` may pass back any object, an older one included).
fn distinct(o: &Optimizer, a: OpRef, b: OpRef) -> bool {
    if !a.is_op() || !b.is_op() || a == b {
        return false;
    }
    let (older, newer) = if a.index() < b.index() {
        (a, b)
    } else {
        (b, a)
    };
    let allocated = !o.loop_vars.contains(&newer)
        && matches!(
            o.out.ops[newer.index()].opcode,
            Opcode::New | Opcode::NewArray
        );
    let older_is_older = !o.loop_vars.contains(&older) || newer.index() > o.label_at;
    allocated && older_is_older
}

/// The op that keys items at index `i`: the first seen with `i`'s (base, constant offset).
fn canon_index(o: &mut Optimizer, i: OpRef) -> OpRef {
    let parts = index_parts(o, i);
    if parts == (o.find(i), 0) {
        return i;
    }
    *o.heap.canon.entry(parts).or_insert(i)
}

/// An index as (base, constant offset) ([`Optimizer::offset_parts`]), with every constant
/// on one base, so that two different constants are apart too.
fn index_parts(o: &mut Optimizer, i: OpRef) -> (OpRef, i64) {
    if let Some(Value::Int(c)) = o.const_value(i) {
        return (OpRef::constant(0), c);
    }
    o.offset_parts(i)
}

/// At a loop's label, before it is emitted: keeps what is known of locations the
/// loop-carried values `vars` do not name, and forgets the rest. Returns the label's extra
/// arguments: a fresh box for each carried location, which the cache then says it holds.
pub fn at_label(o: &mut Optimizer, vars: &[OpRef]) -> Vec<OpRef> {
    let named = |v: &OpRef| vars.contains(v);
    let mut kept = Vec::new();
    let banned = &o.heap.banned;
    for (&k, &v) in &o.heap.fields {
        let key = Imported::Field(k);
        if !named(&k.1) && !named(&v) && !banned.contains(&key) {
            kept.push((key, v));
        }
    }
    for (&k, &v) in &o.heap.items {
        let key = Imported::Item(k);
        if !named(&k.1) && !named(&k.2) && !named(&v) && !banned.contains(&key) {
            kept.push((key, v));
        }
    }
    kept.sort_by_key(|&(k, _)| match k {
        Imported::Field((d, a)) => (d, a, OpRef::constant(0)),
        Imported::Item((d, a, i)) => (d, a, i),
    });
    o.heap.fields.clear();
    o.heap.items.clear();
    o.heap
        .canon
        .retain(|(base, _), v| !named(base) && !named(v));
    let mut imported = Vec::new();
    let mut boxes = Vec::new();
    o.heap.carried_now.clear();
    for (k, mut v) in kept {
        if o.heap.carried.contains(&k) {
            let ty = o.type_of(v);
            v = o.emit_box(v, ty);
            boxes.push(v);
            o.heap.carried_now.push(k);
        } else {
            imported.push((k, v));
        }
        match k {
            Imported::Field(k) => o.heap.fields.insert(k, v),
            Imported::Item(k) => o.heap.items.insert(k, v),
        };
    }
    o.heap.imported = imported;
    boxes
}

/// At the loop's `jump`: what each carried location holds now, loaded if the cache does not
/// know (the location is one the preamble accessed, through values that do not change).
fn carried_values(o: &mut Optimizer) -> Vec<OpRef> {
    let carried = o.heap.carried_now.clone();
    let mut out = Vec::with_capacity(carried.len());
    for k in carried {
        let known = match k {
            Imported::Field(k) => o.heap.fields.get(&k),
            Imported::Item(k) => o.heap.items.get(&k),
        };
        let v = match known {
            Some(&v) => o.find(v),
            None => {
                let load = match k {
                    Imported::Field((d, obj)) => {
                        let ty = o.out.get_descr(d).field().expect("verified").kind;
                        Op::new(Opcode::getfield(ty), &[obj]).with_descr(d)
                    }
                    Imported::Item((d, a, i)) => {
                        let ty = o.out.get_descr(d).array().expect("verified").kind;
                        Op::new(Opcode::getarrayitem(ty), &[a, i]).with_descr(d)
                    }
                };
                o.derived(load)
            }
        };
        out.push(v);
    }
    out
}

/// At the loop's `jump`: every imported location must still hold what it held at the label.
fn check_imported(o: &mut Optimizer) {
    let imported = std::mem::take(&mut o.heap.imported);
    for (k, v) in imported {
        let now = match k {
            Imported::Field(k) => o.heap.fields.get(&k),
            Imported::Item(k) => o.heap.items.get(&k),
        };
        if now != Some(&v) {
            o.heap.broken.push((k, now.is_some()));
        }
    }
}
