//! Virtualizable frames (RPython's virtualizables), done as store sinking: the stores into
//! fields and array items whose descriptors say `vable` (the interpreter's frame, declared
//! with `#[jit(virtualizable)]`) are not done where the trace does them, but kept *pending*
//! in registers, and done only where something could see the memory:
//!
//! - a guard does not see it: its resume data lists the pending stores
//!   ([`crate::ir::Resume::stores`]), and a failing guard does them before the interpreter
//!   (or a bridge) reads the frame;
//! - a load or a store that may touch a pending location (by its descriptor's alias class:
//!   same descriptor on another object, or an aliasing class, unless provably apart) sees it:
//!   the pending store is done just before it;
//! - a call sees the memory its effects say it may read or write (a residual call: all of
//!   it), so the pending stores there are done before it: this is how a call that may look at
//!   the frame finds it written back (the frame is *forced* before every such call; after the
//!   call the frame is read again where the trace loads it, as the heap stage decided);
//!   `finish` and a `jump` to another trace see everything;
//! - a loop keeps the pending stores across its back edge: a location of the frame that the
//!   loop body writes (at a constant index, on an object the loop does not change) gets one
//!   more label argument, which holds the value the memory would hold; the body starts with
//!   those locations pending and the `jump` passes their values instead of storing them
//!   ([`crate::ir::Trace::loop_stores`] says which). So a counting loop over a frame-held
//!   register file stores nothing into the frame in its body.
//!
//! Invariant: pending stores never alias one another (a new pending store first does every
//! pending one it may alias), so their order does not matter and an exit may do them in any
//! order.
//!
//! The pass runs last, on the optimized trace, so that the heap stage has already forwarded
//! the loads it can and dropped overwritten stores: it only moves stores, and adds a load
//! only where the loop needs a location's value that is in memory. It knows descriptors and
//! the IR, nothing of the tracer, the backend or any guest language.

use crate::ir::{
    may_alias, Access, DescrId, DescrKind, Effects, Op, OpRef, Opcode, PendingStore, Trace,
};

/// A place an op reads or writes: descriptor, object, and for an array item its index when
/// it is a constant (`None`: an item at an unknown index, or a field).
#[derive(Copy, Clone, Debug)]
struct Place {
    descr: DescrId,
    base: OpRef,
    index: Option<i64>,
}

/// A pending store: its place and the refs to write it with.
#[derive(Copy, Clone, Debug)]
struct Pending {
    place: Place,
    store: PendingStore,
}

/// Delays the stores of virtualizable fields of `t` (see the module doc). A trace without
/// such stores comes back unchanged.
pub fn sink(t: Trace) -> Trace {
    if !t.ops.iter().any(|op| eligible(&t, op).is_some()) {
        return t;
    }
    Sink::new(&t).run(&t)
}

/// The place of a store the pass may delay: a store through a `vable` descriptor (at a
/// constant index for an array).
fn eligible(t: &Trace, op: &Op) -> Option<Place> {
    let d = op.descr?;
    match (op.opcode, &t.get_descr(d).kind) {
        (Opcode::Setfield, DescrKind::Field(f)) if f.vable => Some(Place {
            descr: d,
            base: op.args[0],
            index: None,
        }),
        (Opcode::Setarrayitem, DescrKind::Array(a)) if a.vable => {
            let i = t.const_value(op.args[1])?.int();
            Some(Place {
                descr: d,
                base: op.args[0],
                index: Some(i),
            })
        }
        _ => None,
    }
}

/// The place a load or store touches (index `None` if not constant).
fn place_of(t: &Trace, op: &Op) -> Place {
    let d = op.descr.expect("memory ops have descriptors");
    let index = match t.get_descr(d).kind {
        DescrKind::Array(_) => op.args.get(1).and_then(|&i| t.const_value(i)).map(|v| v.int()),
        _ => None,
    };
    Place {
        descr: d,
        base: op.args[0],
        index,
    }
}

fn alias(k: &DescrKind) -> Option<&str> {
    match k {
        DescrKind::Field(f) => f.alias.as_deref(),
        DescrKind::Array(x) => x.alias.as_deref(),
        _ => None,
    }
}

/// Whether accesses through descriptors `a` and `b` may touch the same memory (one alias
/// class, or aliasing classes).
fn classes_meet(t: &Trace, a: DescrId, b: DescrId) -> bool {
    a == b || may_alias(alias(&t.get_descr(a).kind), alias(&t.get_descr(b).kind))
}

/// Whether a call with these effects may read or write memory through descriptor `d`.
fn call_touches(t: &Trace, e: &Effects, d: DescrId) -> bool {
    [&e.reads, &e.writes].into_iter().any(|a| match a {
        Access::Nothing => false,
        Access::Everything => true,
        Access::Descrs(ds) => ds.iter().any(|&x| classes_meet(t, x, d)),
    })
}

/// An object's address as (root, constant displacement), as the heap stage sees it
/// (`opt/heap.rs`): the address `cast_int_to_ptr(cast_ptr_to_int(r) + c)` is `r`'s root at
/// `c` more (how the tracer addresses an item of an array inside a struct), the address
/// `cast_int_to_ptr(x + c)` of an integer `x` that is no pointer's is `(x, c)` (a slot of a
/// register window, `stack + (base << 4) + 16a`), anything else is itself at 0.
fn root_of(t: &Trace, b: OpRef) -> (OpRef, i64) {
    let def = |r: OpRef| r.is_op().then(|| &t.ops[r.index()]);
    let Some(cast) = def(b).filter(|o| o.opcode == Opcode::CastIntToPtr) else {
        return (b, 0);
    };
    let x = cast.args[0];
    let konst = |r: OpRef| t.const_value(r).map(|c| c.int());
    let (y, c) = match def(x) {
        Some(add) if add.opcode == Opcode::IntAdd => match (konst(add.args[0]), konst(add.args[1])) {
            (None, Some(c)) => (add.args[0], c),
            (Some(c), None) => (add.args[1], c),
            _ => (x, 0),
        },
        Some(sub) if sub.opcode == Opcode::IntSub => match konst(sub.args[1]) {
            Some(c) if konst(sub.args[0]).is_none() => (sub.args[0], c.wrapping_neg()),
            _ => (x, 0),
        },
        _ => (x, 0),
    };
    match def(y).filter(|o| o.opcode == Opcode::CastPtrToInt) {
        Some(p) => {
            let (r, j) = root_of(t, p.args[0]);
            (r, j.wrapping_add(c))
        }
        None => (y, c),
    }
}

/// Whether `a` and `b` are the same place (the same descriptor and index, at the same address
/// as [`root_of`] sees it).
fn same(t: &Trace, a: &Place, b: &Place) -> bool {
    a.descr == b.descr && a.index == b.index && root_of(t, a.base) == root_of(t, b.base)
}

/// Whether accesses to `a` and `b` may touch the same bytes.
fn may_meet(t: &Trace, a: &Place, b: &Place) -> bool {
    let (da, db) = (t.get_descr(a.descr), t.get_descr(b.descr));
    if !classes_meet(t, a.descr, b.descr) {
        return false;
    }
    let ((ra, xa), (rb, xb)) = (root_of(t, a.base), root_of(t, b.base));
    if ra != rb {
        return true;
    }
    match (&da.kind, &db.kind) {
        (DescrKind::Array(_), DescrKind::Array(_)) if a.descr == b.descr && xa == xb => {
            match (a.index, b.index) {
                (Some(x), Some(y)) => x == y,
                _ => true,
            }
        }
        (DescrKind::Field(x), DescrKind::Field(y)) => {
            let xs = xa.wrapping_add(i64::from(x.offset));
            let ys = xb.wrapping_add(i64::from(y.offset));
            let (xe, ye) = (xs.wrapping_add(i64::from(x.size)), ys.wrapping_add(i64::from(y.size)));
            xs < ye && ys < xe
        }
        _ => true,
    }
}

struct Sink {
    /// The output trace.
    out: Trace,
    /// Input op index -> its value in the output.
    map: Vec<OpRef>,
    /// The pending stores, pairwise apart.
    pending: Vec<Pending>,
    /// For a peeled loop: the places the body keeps pending across the back edge (in the
    /// input trace's refs), in the order of the label arguments added for them.
    carried: Vec<Place>,
    /// Index of the label in the input trace, if a `jump` to it closes the loop.
    label_at: Option<usize>,
    /// Bases of carried places that the code before the label computed (not inputs, not label
    /// arguments): each also gets a label argument, which the `jump` passes back unchanged,
    /// so that [`Trace::loop_stores`] names only inputs, constants and `jump` arguments.
    bases: Vec<OpRef>,
    /// The places delayed stores went to before the label (in the output's refs).
    stored: Vec<Place>,
    /// How many label arguments this pass added (the last ones).
    added: usize,
}

impl Sink {
    fn new(t: &Trace) -> Sink {
        let label_at = t.label().filter(|_| {
            t.ops
                .last()
                .is_some_and(|op| op.opcode == Opcode::Jump && op.descr.is_none())
        });
        let mut out = Trace::with_tables_of(t);
        out.ops.reserve(t.ops.len() + 8);
        Sink {
            out,
            map: Vec::with_capacity(t.ops.len()),
            pending: Vec::new(),
            carried: label_at.map_or(Vec::new(), |l| carried_places(t, l)),
            label_at,
            bases: Vec::new(),
            stored: Vec::new(),
            added: 0,
        }
    }

    fn run(mut self, t: &Trace) -> Trace {
        for (i, op) in t.ops.iter().enumerate() {
            let mut new = op.clone();
            new.map_ops(|r| self.map[r.index()]);
            let r = if Some(i) == self.label_at {
                self.label(new)
            } else {
                self.op(t, i, new)
            };
            self.map.push(r);
        }
        let extra = self.added;
        let out = merge_twins(self.out, extra);
        debug_assert_eq!(crate::ir::verify::verify(&out), Ok(()), "vable:\n{out}");
        out
    }

    /// The place `p` of the input trace in the output (its base mapped).
    fn mapped(&self, p: Place) -> Place {
        Place {
            base: self.map_ref(p.base),
            ..p
        }
    }

    fn map_ref(&self, r: OpRef) -> OpRef {
        if r.is_op() {
            self.map[r.index()]
        } else {
            r
        }
    }

    /// Handles one op (already mapped to the output's refs); returns its value.
    fn op(&mut self, t: &Trace, i: usize, mut op: Op) -> OpRef {
        use Opcode::*;
        let opcode = op.opcode;
        if let Some(p) = eligible(t, &t.ops[i]) {
            let p = self.mapped(p);
            self.force_where(|o, q| !same(o, &q.place, &p) && may_meet(o, &q.place, &p));
            let store = PendingStore {
                descr: p.descr,
                base: p.base,
                index: if opcode == Setarrayitem {
                    Some(op.args[1])
                } else {
                    None
                },
                value: *op.args.last().expect("a store has a value"),
            };
            let out = &self.out;
            self.pending.retain(|q| !same(out, &q.place, &p));
            self.pending.push(Pending { place: p, store });
            if self.label_at.is_some_and(|l| i < l) && !self.stored.iter().any(|s| same(out, s, &p)) {
                self.stored.push(p);
            }
            return OpRef::op(self.out.ops.len());
        }
        if opcode.is_load() || matches!(opcode, Setfield | Setarrayitem) {
            let p = place_of(&self.out, &op);
            self.force_where(|o, q| may_meet(o, &q.place, &p));
        } else if opcode.is_call() {
            // What the call may read or write is written back first (a residual call that
            // may do anything sees the whole frame written back).
            let d = op.descr.expect("calls have descriptors");
            let e = match &self.out.get_descr(d).kind {
                DescrKind::Call(c) => c.effects.clone(),
                _ => Effects::anything(),
            };
            self.force_where(|o, q| call_touches(o, &e, q.place.descr));
        } else if opcode.is_guard() {
            if !self.pending.is_empty() {
                let r = op.resume.as_deref_mut().expect("guards have resume data");
                r.stores.extend(self.pending.iter().map(|q| q.store));
            }
        } else if opcode == Jump && op.descr.is_none() && self.label_at.is_some() {
            return self.jump(op);
        } else if !(opcode.is_pure()
            || opcode.is_ovf()
            || opcode.is_input()
            || matches!(
                opcode,
                New | NewArray | RecordKnownResult | RecordExactValue | QuasiimmutField | Label
            ))
        {
            // A residual call, `finish`, a `jump` elsewhere: everything is written back.
            self.force_where(|_, _| true);
        }
        self.out.push(op)
    }

    /// Does (emits) the pending stores that `which` selects, in order.
    fn force_where(&mut self, which: impl Fn(&Trace, &Pending) -> bool) {
        let (now, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|q| which(&self.out, q));
        self.pending = keep;
        for q in now {
            self.emit_store(&q.store);
        }
    }

    fn emit_store(&mut self, st: &PendingStore) {
        let op = match st.index {
            Some(i) => Op::new(Opcode::Setarrayitem, &[st.base, i, st.value]),
            None => Op::new(Opcode::Setfield, &[st.base, st.value]),
        };
        self.out.push(op.with_descr(st.descr));
    }

    /// Emits a load of a carried place (whose memory is current) and returns its value.
    fn emit_load(&mut self, p: &Place, index: Option<OpRef>) -> OpRef {
        let d = self.out.get_descr(p.descr);
        let (opcode, args) = match (&d.kind, index) {
            (DescrKind::Field(f), _) => (load_opcode(f.kind, false), vec![p.base]),
            (DescrKind::Array(a), Some(i)) => (load_opcode(a.kind, true), vec![p.base, i]),
            _ => unreachable!("carried places are fields or items at a constant index"),
        };
        self.out.push(Op::new(opcode, &args).with_descr(p.descr))
    }

    /// The values the carried places hold at the end of an iteration: a pending value, or
    /// one loaded from memory (after every other pending store is done). Clears `pending`.
    fn carried_values(&mut self, places: &[(Place, Option<OpRef>)]) -> Vec<OpRef> {
        let mut vals: Vec<Option<OpRef>> = places
            .iter()
            .map(|(p, _)| {
                let k = self.pending.iter().position(|q| same(&self.out, &q.place, p))?;
                Some(self.pending.remove(k).store.value)
            })
            .collect();
        self.force_where(|_, _| true);
        for (v, (p, index)) in vals.iter_mut().zip(places) {
            if v.is_none() {
                *v = Some(self.emit_load(p, *index));
            }
        }
        vals.into_iter().map(|v| v.expect("filled")).collect()
    }

    /// The carried places in the output's refs, with their index refs.
    fn carried_out(&mut self) -> Vec<(Place, Option<OpRef>)> {
        let places: Vec<Place> = self.carried.iter().map(|&p| self.mapped(p)).collect();
        places
            .into_iter()
            .map(|p| {
                let index = p.index.map(|i| self.out.int(i));
                (p, index)
            })
            .collect()
    }

    /// The loop's label: the carried places get one more argument each, holding what the
    /// memory would hold; the body starts with them pending.
    fn label(&mut self, mut op: Op) -> OpRef {
        // Before the label, a carried place whose base is a label argument is named by the
        // value that argument copies. A place is carried only if the code before the label
        // stored it: its value is then pending or in memory that is known to be there (a
        // load of it before the body's own guards could read out of bounds).
        let all = self.carried_out();
        let mut keep = Vec::with_capacity(all.len());
        let (mut places, mut before) = (Vec::new(), Vec::new());
        for &(p, i) in &all {
            let b = self.before_label(p);
            let stored = self.stored.iter().any(|s| same(&self.out, s, &b));
            keep.push(stored);
            if stored {
                places.push((p, i));
                before.push((b, i));
            }
        }
        let mut k = 0;
        self.carried.retain(|_| {
            k += 1;
            keep[k - 1]
        });
        let vals = self.carried_values(&before);
        for (&(p, index), v) in places.iter().zip(vals) {
            let ty = self.out.type_of(v);
            let arg = self.out.emit(same_as(ty), &[v]);
            op.args.push(arg);
            self.pending.push(Pending {
                place: p,
                store: PendingStore {
                    descr: p.descr,
                    base: p.base,
                    index,
                    value: arg,
                },
            });
        }
        for &(p, _) in &places {
            let b = p.base;
            let computed = b.is_op() && b.index() >= self.out.num_inputs();
            if computed && !op.args.contains(&b) && !self.bases.contains(&b) {
                self.bases.push(b);
            }
        }
        for k in 0..self.bases.len() {
            let arg = self.out.emit(Opcode::SameAsR, &[self.bases[k]]);
            op.args.push(arg);
        }
        self.added = places.len() + self.bases.len();
        self.out.push(op)
    }

    /// `p` (in the output's refs) as the code before the label names it: a base that is a
    /// label argument copying a value (`same_as`) is that value.
    fn before_label(&self, p: Place) -> Place {
        if p.base.is_op() {
            let def = &self.out.ops[p.base.index()];
            if matches!(def.opcode, Opcode::SameAsR) {
                return Place {
                    base: def.args[0],
                    ..p
                };
            }
        }
        p
    }

    /// The loop's closing `jump`: passes the carried places' values to the added label
    /// arguments, and records them as the loop's pending stores.
    fn jump(&mut self, mut op: Op) -> OpRef {
        let places = self.carried_out();
        let vals = self.carried_values(&places);
        let mut stores = Vec::with_capacity(places.len());
        for (&(p, index), v) in places.iter().zip(vals) {
            op.args.push(v);
            stores.push(PendingStore {
                descr: p.descr,
                base: p.base,
                index,
                value: v,
            });
        }
        op.args.extend(self.bases.iter().copied());
        self.out.loop_stores = stores;
        self.out.push(op)
    }
}

/// Drops each of the last `extra` label arguments that is a twin of an earlier one: both copy
/// the same value before the label (`same_as` of it) and the `jump` passes the same value to
/// both, so they are equal in every iteration. Its uses in the body become the earlier one's.
/// (The heap stage may carry a location's value already: without this, the loop would carry
/// it twice, in two registers.)
fn merge_twins(mut t: Trace, extra: usize) -> Trace {
    let (Some(l), Some(last)) = (t.label(), t.ops.len().checked_sub(1)) else {
        return t;
    };
    let label = t.ops[l].args.clone();
    let jump = t.ops[last].args.clone();
    if extra == 0 || label.len() != jump.len() || t.ops[last].opcode != Opcode::Jump {
        return t;
    }
    let copied = |r: OpRef| {
        let op = &t.ops[r.index()];
        matches!(op.opcode, Opcode::SameAsI | Opcode::SameAsF | Opcode::SameAsR).then(|| op.args[0])
    };
    let mut twin: Vec<Option<usize>> = vec![None; label.len()];
    for m in label.len() - extra..label.len() {
        let Some(x) = copied(label[m]) else { continue };
        twin[m] = (0..m).find(|&k| {
            twin[k].is_none() && copied(label[k]) == Some(x) && jump[k] == jump[m]
        });
    }
    if twin.iter().all(Option::is_none) {
        return t;
    }
    let subst = |r: OpRef| match label.iter().position(|&a| a == r) {
        Some(m) => twin[m].map_or(r, |k| label[k]),
        None => r,
    };
    for op in &mut t.ops[l + 1..] {
        op.map_ops(subst);
    }
    for st in t.loop_stores.iter_mut() {
        for r in st.refs_mut() {
            *r = subst(*r);
        }
    }
    let keep = |args: &[OpRef]| -> crate::ir::OpArgs {
        args.iter()
            .enumerate()
            .filter(|(m, _)| twin[*m].is_none())
            .map(|(_, &a)| a)
            .collect()
    };
    let (new_label, new_jump) = (keep(&t.ops[l].args), keep(&t.ops[last].args));
    t.ops[l].args = new_label;
    t.ops[last].args = new_jump;
    // The dropped arguments' copies are dead now.
    super::dce::sweep(t)
}

fn same_as(ty: crate::ir::Type) -> Opcode {
    match ty {
        crate::ir::Type::Int => Opcode::SameAsI,
        crate::ir::Type::Float => Opcode::SameAsF,
        _ => Opcode::SameAsR,
    }
}

fn load_opcode(ty: crate::ir::Type, item: bool) -> Opcode {
    use crate::ir::Type::*;
    match (ty, item) {
        (Int, false) => Opcode::GetfieldI,
        (Float, false) => Opcode::GetfieldF,
        (_, false) => Opcode::GetfieldR,
        (Int, true) => Opcode::GetarrayitemI,
        (Float, true) => Opcode::GetarrayitemF,
        (_, true) => Opcode::GetarrayitemR,
    }
}

/// The places a peeled loop (label at `label_at`) may keep pending across its back edge: those
/// its body stores through a `vable` descriptor at a constant index, on a base that is the
/// same in every iteration (an input, a constant, or a label argument the `jump` passes back
/// as it is), pairwise apart (of two that may meet, the first is kept).
fn carried_places(t: &Trace, label_at: usize) -> Vec<Place> {
    let label = &t.ops[label_at];
    let jump = t.ops.last().expect("a loop");
    // A value defined before the label that is not a label argument is the same in every
    // iteration; a label argument is if the `jump` passes it back.
    let invariant = |b: OpRef| {
        !b.is_op()
            || b.index() < label_at && !label.args.contains(&b)
            || label
                .args
                .iter()
                .position(|&a| a == b)
                .is_some_and(|k| jump.args.get(k) == Some(&b))
    };
    let mut out: Vec<Place> = Vec::new();
    for op in &t.ops[label_at + 1..] {
        let Some(p) = eligible(t, op) else { continue };
        if invariant(p.base) && !out.iter().any(|q| may_meet(t, q, &p)) {
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests;
