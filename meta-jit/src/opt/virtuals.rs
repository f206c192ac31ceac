//! Allocation removal (RPython's `OptVirtualize`).
//!
//! A `new` (or a `new_array` of a small constant length) is not emitted: its result becomes a
//! *virtual* object, an [`OpRef::virtual_obj`] whose fields the optimizer tracks. Loads from
//! it read the tracked values (zero where nothing was stored: allocation zeroes memory;
//! narrowed as a load from memory would be, for fields under 8 bytes), stores
//! into it update them, and `ptr_eq` against anything else is false. Fields of different
//! descriptors over the same bytes (an enum's payload, as each variant's type) replace each
//! other; a load or store that overlaps another field's bytes only in part, or a load of bytes
//! another descriptor wrote, forces the object. Any other use *forces*
//! it: the allocation and its non-zero fields are emitted right there, and from then on the
//! virtual's `find` is the emitted object. Guards do not force: their resume data describes
//! the virtuals they need ([`describe`]), and resume rebuilds them only if the guard fails.
//!
//! Virtuals never live across the loop header: the label forces them all (the loop body may
//! change them on every iteration), and `jump` and `finish` force their arguments.

use super::{Optimizer, Step};
use crate::ir::{DescrId, DescrKind, Op, OpRef, Opcode, Resume, Type, Value, Virtual};

/// The virtual objects of one optimization.
#[derive(Default, Clone)]
pub struct Virtuals {
    pub(super) objs: Vec<Obj>,
    /// Virtual objects a peeled loop carries across its label ([`super::carry`]).
    pub carry: super::carry::Carry,
}

#[derive(Clone)]
pub(super) struct Obj {
    /// The size descriptor (struct) or array descriptor (array).
    pub(super) descr: DescrId,
    /// Struct: `(field descriptor, value)`; array: one `(array descriptor, item)` per item.
    pub(super) fields: Vec<(DescrId, OpRef)>,
    pub(super) is_array: bool,
    pub(super) forced: Option<OpRef>,
}

/// The longest array kept virtual.
const MAX_VIRTUAL_ARRAY: i64 = 64;

impl Virtuals {
    /// The emitted object a forced virtual became, if it was forced.
    pub fn forced(&self, v: OpRef) -> Option<OpRef> {
        self.objs[v.index()].forced
    }

    pub(super) fn add(&mut self, descr: DescrId, fields: Vec<(DescrId, OpRef)>, is_array: bool) -> OpRef {
        self.objs.push(Obj {
            descr,
            fields,
            is_array,
            forced: None,
        });
        OpRef::virtual_obj(self.objs.len() - 1)
    }
}

fn zero(o: &mut Optimizer, ty: Type) -> OpRef {
    o.out.constant(Value::from_bits(ty, 0))
}

/// The virtuals stage.
pub fn optimize(o: &mut Optimizer, mut op: Op) -> Step {
    use Opcode::*;
    let virt = |o: &mut Optimizer, k: usize| {
        let v = o.find(op.args[k]);
        v.is_virtual().then_some(v)
    };
    match op.opcode {
        New => return Step::Replace(o.virtuals.add(op.descr.unwrap(), vec![], false)),
        NewArray => {
            if let Some(Value::Int(n)) = o.const_value(op.args[0]) {
                if (0..=MAX_VIRTUAL_ARRAY).contains(&n) {
                    let d = op.descr.unwrap();
                    let kind = o.out.get_descr(d).array().expect("verified").kind;
                    let z = zero(o, kind);
                    return Step::Replace(o.virtuals.add(d, vec![(d, z); n as usize], true));
                }
            }
        }
        GetfieldI | GetfieldF | GetfieldR => {
            // A load of bytes that a field of another descriptor holds (an enum's payload
            // read as another variant's type) forces the virtual: the load reads memory.
            if let Some(v) = virt(o, 0).filter(|v| !overlapped(o, *v, op.descr.unwrap(), false)) {
                let d = op.descr.unwrap();
                let known = o.virtuals.objs[v.index()].fields.iter().find(|f| f.0 == d);
                return Step::Replace(match known.map(|f| f.1) {
                    Some(x) => {
                        let f = o.out.get_descr(d).field().expect("verified");
                        o.narrowed(x, f.size, f.signed)
                    }
                    None => zero(o, op.ty()),
                });
            }
        }
        Setfield => {
            // A store over part of another descriptor's bytes forces the virtual (a store over
            // all of them replaces that field: an enum's payload written as another type).
            if let Some(v) = virt(o, 0).filter(|v| !overlapped(o, *v, op.descr.unwrap(), true)) {
                let (d, x) = (op.descr.unwrap(), op.args[1]);
                let same = |e: DescrId| {
                    let (f, g) = (field_range(o, d), field_range(o, e));
                    e != d && f == g
                };
                let replaced: Vec<DescrId> = (o.virtuals.objs[v.index()].fields.iter())
                    .map(|f| f.0)
                    .filter(|&e| same(e))
                    .collect();
                let fields = &mut o.virtuals.objs[v.index()].fields;
                fields.retain(|f| !replaced.contains(&f.0));
                match fields.iter_mut().find(|f| f.0 == d) {
                    Some(f) => f.1 = x,
                    None => fields.push((d, x)),
                }
                return Step::Remove;
            }
        }
        GetarrayitemI | GetarrayitemF | GetarrayitemR | Setarrayitem => {
            if let (Some(v), Some(Value::Int(i))) = (virt(o, 0), o.const_value(op.args[1])) {
                let items = &mut o.virtuals.objs[v.index()].fields;
                if let Some(item) = usize::try_from(i).ok().and_then(|i| items.get_mut(i)) {
                    if op.opcode == Setarrayitem {
                        item.1 = op.args[2];
                        return Step::Remove;
                    }
                    let x = item.1;
                    let a = o
                        .out
                        .get_descr(op.descr.unwrap())
                        .array()
                        .expect("verified");
                    return Step::Replace(o.narrowed(x, a.item_size, a.signed));
                }
            }
        }
        PtrEq | PtrNe => {
            let (a, b) = (o.find(op.args[0]), o.find(op.args[1]));
            if a != b && (a.is_virtual() || b.is_virtual()) {
                // A virtual has not escaped: nothing else can point to it.
                return Step::Replace(o.out.int((op.opcode == PtrNe) as i64));
            }
        }
        GuardNonnull if virt(o, 0).is_some() => return Step::Remove,
        SameAsR if virt(o, 0).is_some() => return Step::Replace(op.args[0]),
        // A fact about a virtual is a fact about its identity; the CSE stage consumes it.
        RecordKnownResult if o.opts.pure => return Step::Next(op),
        Jump if op.descr.is_none() && o.virtuals.carry.active() => {
            super::carry::at_jump(o, &mut op);
        }
        _ => {}
    }
    for k in 0..op.args.len() {
        op.args[k] = force(o, op.args[k]);
    }
    Step::Next(op)
}

/// The byte range `(offset, end)` of field descriptor `d`.
fn field_range(o: &Optimizer, d: DescrId) -> (u32, u32) {
    let f = o.out.get_descr(d).field().expect("verified");
    (f.offset, f.offset + u32::from(f.size))
}

/// Whether virtual struct `v` holds a field of another descriptor than `d` whose bytes overlap
/// `d`'s: any overlap for a load, which cannot be answered from the fields (`store` false), or
/// a partial one for a store, which cannot replace that field (`store` true).
fn overlapped(o: &Optimizer, v: OpRef, d: DescrId, store: bool) -> bool {
    let obj = &o.virtuals.objs[v.index()];
    if obj.is_array {
        return false;
    }
    let (lo, hi) = field_range(o, d);
    obj.fields.iter().any(|&(e, _)| {
        let (elo, ehi) = field_range(o, e);
        e != d && elo < hi && lo < ehi && !(store && (elo, ehi) == (lo, hi))
    })
}

/// Forces a virtual object: emits its allocation and its non-zero fields now, and returns the
/// emitted object. Any other value is returned as it is.
pub fn force(o: &mut Optimizer, v: OpRef) -> OpRef {
    let v = o.find(v);
    if !v.is_virtual() {
        return v;
    }
    let k = v.index();
    let (descr, is_array, n) = {
        let obj = &o.virtuals.objs[k];
        (obj.descr, obj.is_array, obj.fields.len())
    };
    let alloc = if is_array {
        let len = o.out.int(n as i64);
        Op::new(Opcode::NewArray, &[len]).with_descr(descr)
    } else {
        Op::new(Opcode::New, &[]).with_descr(descr)
    };
    let p = o.emit(alloc);
    // Recorded before the fields are forced, so that cycles end here.
    o.virtuals.objs[k].forced = Some(p);
    let fields = o.virtuals.objs[k].fields.clone();
    for (i, (d, x)) in fields.into_iter().enumerate() {
        let x = force(o, x);
        if o.out.const_value(x).is_some_and(|c| c.bits() == 0) {
            continue; // memory is zeroed
        }
        let store = if is_array {
            let idx = o.out.int(i as i64);
            Op::new(Opcode::Setarrayitem, &[p, idx, x]).with_descr(d)
        } else {
            Op::new(Opcode::Setfield, &[p, x]).with_descr(d)
        };
        o.emit(store);
    }
    p
}

/// Forces every virtual that is still virtual (at the loop header).
pub fn force_all(o: &mut Optimizer) {
    for k in 0..o.virtuals.objs.len() {
        force(o, OpRef::virtual_obj(k));
    }
}

/// Turns the virtual objects of an input guard's resume data (its own numbering) into
/// virtuals of this optimization, so that all virtual references mean the same thing.
pub fn import(o: &mut Optimizer, r: &mut Resume) {
    if r.virtuals.is_empty() {
        return;
    }
    let base = o.virtuals.objs.len();
    let shift = |x: OpRef| {
        if x.is_virtual() {
            OpRef::virtual_obj(base + x.index())
        } else {
            x
        }
    };
    for v in &r.virtuals {
        let is_array = matches!(o.out.get_descr(v.descr).kind, DescrKind::Array(_));
        let fields = v.fields.iter().map(|&(d, x)| (d, shift(x))).collect();
        o.virtuals.add(v.descr, fields, is_array);
    }
    for x in r.values.iter_mut() {
        *x = shift(*x);
    }
    r.virtuals.clear();
}

/// Final resume data for an emitted guard: values found, and the virtual objects they reach
/// described (numbered for this guard, in order of first reference).
pub fn describe(o: &mut Optimizer, mut r: Resume) -> Resume {
    let mut order: Vec<usize> = Vec::new();
    let local = |o: &mut Optimizer, x: OpRef, order: &mut Vec<usize>| -> OpRef {
        let x = o.find(x);
        if !x.is_virtual() {
            return x;
        }
        let k = match order.iter().position(|&g| g == x.index()) {
            Some(k) => k,
            None => {
                order.push(x.index());
                order.len() - 1
            }
        };
        OpRef::virtual_obj(k)
    };
    for i in 0..r.values.len() {
        r.values[i] = local(o, r.values[i], &mut order);
    }
    let mut described = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let (descr, fields) = {
            let obj = &o.virtuals.objs[order[i]];
            (obj.descr, obj.fields.clone())
        };
        let fields = fields
            .into_iter()
            .map(|(d, x)| (d, local(o, x, &mut order)))
            .collect();
        described.push(Virtual { descr, fields });
        i += 1;
    }
    r.virtuals = described;
    r
}
