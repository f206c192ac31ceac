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
//! with object and index after `find`; an index is keyed as (base, constant offset)
//! ([`Optimizer::offset_parts`]), so that `x + 2` computed twice names one item. Aliasing follows the alias classes of [`crate::ir`]'s
//! descriptors ([`crate::ir::may_alias`]: one class, or a wide class and one of its precise
//! classes): a store forgets only what it may overwrite, which is a location of a class that
//! may alias its own, other than those provably apart from it: another field at a disjoint
//! byte range of the same object (also of an object at a known displacement from it,
//! `Cache::roots`: the tracer's address of an item of an array of structs), or another item
//! of the same array whose index differs by a known constant (`i` and `i + 1`, or two
//! different constants). A residual call forgets every location whose class its effects may
//! write, or that may alias one (immutable fields are never forgotten).
//!
//! Cost: the cache is kept per alias class, fields by object and items by (descriptor, array,
//! index base), so that a store touches only its own class and those related to it (a wide
//! class's precise ones: one per field of that type), and, inside them, drops whole groups
//! that may alias: it costs what it forgets plus one step per object (or array) of its class
//! that it keeps, which are objects the trace allocated. A call costs one step per alias
//! class. The optimizer stays linear in trace length on long traces of loads and stores.
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
use crate::ir::{Access, ClassName, Descr, DescrId, Op, OpRef, Opcode, Trace, Value};
use hashbrown::{HashMap, HashSet};
use smallvec::SmallVec;

/// A field location: descriptor and object.
pub type FieldKey = (DescrId, OpRef);
/// An item location: descriptor, array, and the index as (base, constant offset).
pub type ItemKey = (DescrId, OpRef, OpRef, i64);

/// A location the cache may know across a loop's label.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Imported {
    /// A field.
    Field(FieldKey),
    /// An array item.
    Item(ItemKey),
}

/// The items of one array and descriptor at one index base: constant offset -> (index,
/// value).
type ItemGroup = HashMap<i64, (OpRef, OpRef)>;

/// What the cache knows of the locations of one alias class.
#[derive(Default, Clone)]
struct Class {
    /// Fields, by object: (descriptor, value).
    fields: HashMap<OpRef, SmallVec<[(DescrId, OpRef); 2]>>,
    /// Items, by (descriptor, array, index base): constant offset -> (index, value).
    items: HashMap<(DescrId, OpRef, OpRef), ItemGroup>,
}

impl Class {
    fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.items.is_empty()
    }
}

/// What the optimizer knows memory holds.
#[derive(Default, Clone)]
pub struct Cache {
    /// The alias class of each descriptor (by table index): equal numbers may alias.
    classes: Vec<u32>,
    /// For each class, the other classes that may alias it ([`crate::ir::may_alias`]: a wide
    /// class's precise classes, a precise class's wide class, the items of an unseen `Vec` and
    /// those of a `Vec` field, the classes of one enum's payload).
    related: Vec<SmallVec<[u32; 2]>>,
    /// Whether each descriptor is an immutable field (a call never changes it).
    immutable: Vec<bool>,
    /// What is known, per alias class.
    mem: Vec<Class>,
    /// What was known at the label, to be checked at the loop's `jump`.
    imported: Vec<(Imported, OpRef)>,
    /// For each object a field op used: the object it lies inside and at which constant
    /// displacement, when it is an address computed from another (`cast_int_to_ptr(
    /// cast_ptr_to_int(p) + k)`, an item of an array of structs); `(itself, 0)` otherwise.
    roots: HashMap<OpRef, (OpRef, i64)>,
    /// The other way round: for an object, the objects [`Cache::roots`] found at a known
    /// displacement from it (so a load looks at those only, not at every object of its class).
    displaced: HashMap<OpRef, SmallVec<[OpRef; 2]>>,
    /// Locations whose value the loop carries in a label argument (the body changes them).
    pub carried: HashSet<Imported>,
    /// The carried locations the label got an argument for, in the label's order, with the
    /// index of an item (to load it again at the `jump`).
    carried_now: Vec<(Imported, OpRef)>,
    /// Locations not to import at the label (the body changes them to something it does not
    /// know).
    pub banned: HashSet<Imported>,
    /// Imported locations the body changed: the loop must be optimized again, carrying them
    /// (`true`: the body knows the new value) or not importing them (`false`).
    pub broken: Vec<(Imported, bool)>,
    /// Whether the label carries, without waiting for a round to show it, the locations the
    /// preamble stored a computed value into (see [`at_label`]).
    pub seed: bool,
    /// Locations not to carry on that guess (a round showed the body leaves them alone).
    pub unseeded: HashSet<Imported>,
    /// The locations carried on that guess, with their label box and the value the preamble
    /// left there.
    seeded_now: Vec<(Imported, OpRef, OpRef)>,
    /// Guessed locations the body left as they were: optimize again without the guess.
    pub unneeded: Vec<Imported>,
}

impl Cache {
    /// An empty cache for the descriptors of `t`.
    pub fn new(t: &Trace) -> Cache {
        let mut names = HashMap::<&str, u32>::new();
        let mut next = 0u32;
        let classes: Vec<u32> = t
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
        let immutable = t
            .descrs
            .iter()
            .map(|d| d.field().is_some_and(|f| f.immutable))
            .collect();
        // Two classes are related when `may_alias` says so; names are few (one per distinct
        // class of a trace), so every pair is asked.
        let mut related = vec![SmallVec::new(); classes.len()];
        let named: Vec<(ClassName, u32)> =
            names.iter().map(|(&n, &c)| (ClassName::of(n), c)).collect();
        for (a, ca) in &named {
            for (b, cb) in &named {
                if ca != cb && a.meets(b) {
                    related[*ca as usize].push(*cb);
                }
            }
        }
        for r in &mut related {
            r.sort_unstable();
            r.dedup();
        }
        Cache {
            mem: vec![Class::default(); classes.len()],
            classes,
            related,
            immutable,
            ..Cache::default()
        }
    }

    /// Forgets everything (the descriptors' classes stay).
    pub fn clear(&mut self) {
        for c in &mut self.mem {
            *c = Class::default();
        }
        self.imported.clear();
        self.carried_now.clear();
        self.roots.clear();
        self.displaced.clear();
    }

    fn class(&self, d: DescrId) -> usize {
        self.classes[d.0 as usize] as usize
    }

    fn field(&self, (d, obj): FieldKey) -> Option<OpRef> {
        let fs = self.mem[self.class(d)].fields.get(&obj)?;
        fs.iter().find(|f| f.0 == d).map(|f| f.1)
    }

    fn item(&self, (d, a, base, off): ItemKey) -> Option<(OpRef, OpRef)> {
        let group = self.mem[self.class(d)].items.get(&(d, a, base))?;
        group.get(&off).copied()
    }

    fn get(&self, k: Imported) -> Option<OpRef> {
        match k {
            Imported::Field(k) => self.field(k),
            Imported::Item(k) => self.item(k).map(|(_, v)| v),
        }
    }

    fn set_field(&mut self, (d, obj): FieldKey, v: OpRef) {
        let c = self.class(d);
        let fs = self.mem[c].fields.entry(obj).or_default();
        match fs.iter_mut().find(|f| f.0 == d) {
            Some(f) => f.1 = v,
            None => fs.push((d, v)),
        }
    }

    fn set_item(&mut self, (d, a, base, off): ItemKey, index: OpRef, v: OpRef) {
        let c = self.class(d);
        let group = self.mem[c].items.entry((d, a, base)).or_default();
        group.insert(off, (index, v));
    }
}

/// The heap stage.
pub fn optimize(o: &mut Optimizer, op: Op) -> Step {
    use Opcode::*;
    let d = op.descr;
    let known = match op.opcode {
        GetfieldI | GetfieldF | GetfieldR => o
            .heap
            .field((d.unwrap(), op.args[0]))
            .or_else(|| same_bytes(o, d.unwrap(), op.args[0])),
        GetarrayitemI | GetarrayitemF | GetarrayitemR => {
            let key = item_key(o, d.unwrap(), op.args[0], op.args[1]);
            o.heap.item(key).map(|(_, v)| v)
        }
        Setfield => {
            if o.heap.field((d.unwrap(), op.args[0])) == Some(op.args[1]) {
                return Step::Remove;
            }
            None
        }
        Setarrayitem => {
            let key = item_key(o, d.unwrap(), op.args[0], op.args[1]);
            if o.heap.item(key).map(|(_, v)| v) == Some(op.args[2]) {
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
        Some(v) => {
            let v = o.find(v);
            Step::Replace(v)
        }
        None => Step::Next(op),
    }
}

/// The object an address lies inside, and at which constant displacement: `p` and `k` for
/// `cast_int_to_ptr(cast_ptr_to_int(p) + k)` (how the tracer addresses an item of an array of
/// structs); for an address computed from an integer, `cast_int_to_ptr(x + k)`, the root of
/// `x` at `k` (an integer base, when it is no pointer's address: the fold stage writes
/// `p + ((i + c) << s)` as `(p + (i << s)) + (c << s)`, so the slots of a register window
/// share one base); `(a, 0)` for anything else. Remembered in [`Cache::roots`].
fn root_of(o: &mut Optimizer, a: OpRef) -> (OpRef, i64) {
    if let Some(&r) = o.heap.roots.get(&a) {
        return r;
    }
    let root = (|| {
        let x = match o.producer(a) {
            Some(op) if op.opcode == Opcode::CastIntToPtr => op.args[0],
            _ => return None,
        };
        let (b, k) = o.offset_parts(x);
        let ptr = match o.producer(b) {
            Some(op) if op.opcode == Opcode::CastPtrToInt => Some(op.args[0]),
            _ => None,
        };
        match ptr {
            Some(p) => {
                let p = o.find(p);
                let (r, j) = root_of(o, p);
                Some((r, j.wrapping_add(k)))
            }
            None => Some((b, k)),
        }
    })()
    .unwrap_or((a, 0));
    o.heap.roots.insert(a, root);
    if root.0 != a {
        o.heap.displaced.entry(root.0).or_default().push(a);
    }
    root
}

/// What the cache knows of the bytes field `d` of `obj` names, through another object and
/// descriptor of `d`'s class that name the same bytes the same way: the same object at a known
/// displacement ([`root_of`]), at the same absolute offset, with the same size, signedness and
/// kind. (A payload written through `&mut` to it is a field at offset 0 of `p + 8`, and read
/// as a field at offset 8 of `p`.)
fn same_bytes(o: &mut Optimizer, d: DescrId, obj: OpRef) -> Option<OpRef> {
    let c = o.heap.class(d);
    if o.heap.mem[c].fields.is_empty() {
        return None;
    }
    let (root, disp) = root_of(o, obj);
    let f = o.out.get_descr(d).field().expect("verified").clone();
    let at = disp.wrapping_add(i64::from(f.offset));
    // The objects that may name the same bytes: the root and those displaced from it.
    let objs: SmallVec<[OpRef; 4]> = std::iter::once(root)
        .chain(o.heap.displaced.get(&root).into_iter().flatten().copied())
        .filter(|other| o.heap.mem[c].fields.contains_key(other))
        .collect();
    for other in objs {
        let (r, k) = root_of(o, other);
        if r != root {
            continue;
        }
        let fs = o.heap.mem[c].fields[&other].clone();
        for (g, v) in fs {
            let gf = o.out.get_descr(g).field().expect("verified");
            let same = k.wrapping_add(i64::from(gf.offset)) == at
                && (gf.size, gf.signed, gf.kind) == (f.size, f.signed, f.kind);
            if same {
                return Some(v);
            }
        }
    }
    None
}

/// Learns from an emitted op.
pub fn emitted(o: &mut Optimizer, r: OpRef) {
    use Opcode::*;
    if matches!(
        o.out.ops[r.index()].opcode,
        GetfieldI | GetfieldF | GetfieldR | Setfield
    ) {
        root_of(o, o.out.ops[r.index()].args[0]);
    }
    let op = &o.out.ops[r.index()];
    let (opcode, d) = (op.opcode, op.descr);
    // Loads and stores take at most three arguments (calls are read through `d`).
    let arg = |k: usize| op.args.get(k).copied().unwrap_or(OpRef::constant(0));
    let args = [arg(0), arg(1), arg(2)];
    match opcode {
        GetfieldI | GetfieldF | GetfieldR => o.heap.set_field((d.unwrap(), args[0]), r),
        GetarrayitemI | GetarrayitemF | GetarrayitemR => {
            let key = item_key(o, d.unwrap(), args[0], args[1]);
            o.heap.set_item(key, args[1], r);
        }
        Setfield => {
            let d = d.unwrap();
            let obj = args[0];
            let f = o.out.get_descr(d).field().expect("verified");
            let (offset, size) = (f.offset, u32::from(f.size));
            // The displacements of the objects whose fields this store may forget.
            let c = o.heap.class(d);
            let objs: Vec<OpRef> = std::iter::once(c)
                .chain(o.heap.related[c].iter().map(|&k| k as usize))
                .flat_map(|k| o.heap.mem[k].fields.keys().copied())
                .collect();
            for other in objs {
                root_of(o, other);
            }
            let roots = std::mem::take(&mut o.heap.roots);
            let root = roots[&obj];
            let start = root.1.wrapping_add(i64::from(offset));
            forget_classes(o, d, |class, age| {
                // Another field of the same object is apart if the two do not overlap; so is
                // one at a known displacement from the same object.
                let apart = |other: OpRef, k: DescrId| {
                    let g = age.descrs[k.0 as usize].field().expect("verified");
                    let at = if other == obj {
                        (root.0, root.1.wrapping_add(i64::from(g.offset)))
                    } else {
                        match roots.get(&other) {
                            Some(&(p, disp)) => (p, disp.wrapping_add(i64::from(g.offset))),
                            None => return false,
                        }
                    };
                    let (lo, hi) = (start.min(at.1), start.max(at.1));
                    let first = if lo == start { size } else { u32::from(g.size) };
                    (other != obj || k != d)
                        && at.0 == root.0
                        && lo != hi
                        && hi.wrapping_sub(lo) as u64 >= u64::from(first)
                };
                class.fields.retain(|&other, fs| {
                    if age.distinct(obj, other) {
                        return true;
                    }
                    fs.retain(|f| apart(other, f.0));
                    !fs.is_empty()
                });
                class.items.clear();
            });
            o.heap.roots = roots;
            let f = o.out.get_descr(d).field().expect("verified");
            let v = o.narrowed(args[1], f.size, f.signed);
            o.heap.set_field((d, obj), v);
        }
        Setarrayitem => {
            let d = d.unwrap();
            let (p, i) = (args[0], args[1]);
            let key = item_key(o, d, p, i);
            let (base, off) = (key.2, key.3);
            forget_classes(o, d, |class, age| {
                class.fields.clear();
                // Items of this array at the same base and another offset are apart; so are
                // items of an array the trace allocated after the other was computed.
                class.items.retain(|&(d2, p2, b2), group| {
                    if (d2, p2, b2) == (d, p, base) {
                        group.remove(&off);
                        !group.is_empty()
                    } else {
                        age.distinct(p, p2)
                    }
                });
            });
            let a = o.out.get_descr(d).array().expect("verified");
            let v = o.narrowed(args[2], a.item_size, a.signed);
            o.heap.set_item(key, i, v);
        }
        _ if opcode.is_call() && !opcode.is_pure() => {
            let cd = o
                .out
                .get_descr(d.expect("verified"))
                .call()
                .expect("verified");
            let heap = &mut o.heap;
            let mut touched = vec![false; heap.mem.len()];
            match &cd.effects.writes {
                Access::Nothing => return,
                Access::Everything => touched.iter_mut().for_each(|t| *t = true),
                Access::Descrs(ds) => {
                    for w in ds {
                        let c = heap.classes[w.0 as usize];
                        touched[c as usize] = true;
                        for &r in &heap.related[c as usize] {
                            touched[r as usize] = true;
                        }
                    }
                }
            }
            let immutable = &heap.immutable;
            for (class, _) in heap
                .mem
                .iter_mut()
                .zip(touched)
                .filter(|(c, t)| *t && !c.is_empty())
            {
                class.items.clear();
                class.fields.retain(|_, fs| {
                    fs.retain(|f| immutable[f.0 .0 as usize]);
                    !fs.is_empty()
                });
            }
        }
        _ => {}
    }
}

/// What [`Ages::distinct`] needs of the optimizer: which output ops allocate, and which values
/// the loop carries.
struct Ages<'a> {
    ops: &'a [Op],
    descrs: &'a [Descr],
    loop_vars: &'a HashSet<OpRef>,
    label_at: usize,
}

/// Runs `forget` on the cache of `d`'s alias class and on those of the classes related to it
/// (which a store through `d` may write too), with what [`Ages::distinct`] needs.
fn forget_classes(o: &mut Optimizer, d: DescrId, mut forget: impl FnMut(&mut Class, &Ages)) {
    let c = o.heap.class(d);
    let ids: SmallVec<[u32; 3]> = std::iter::once(c as u32)
        .chain(o.heap.related[c].iter().copied())
        .collect();
    let age = Ages {
        ops: &o.out.ops,
        descrs: &o.out.descrs,
        loop_vars: &o.loop_vars,
        label_at: o.label_at,
    };
    for k in ids {
        let class = &mut o.heap.mem[k as usize];
        if !class.is_empty() {
            forget(class, &age);
        }
    }
}

impl Ages<'_> {
    /// Whether two object values are surely different objects: one is allocated by the
    /// trace (`new`, `new_array`) after the other was computed, so the other cannot be it.
    ///
    /// This must hold at every entry of the loop, not only the first. A loop-carried value is
    /// computed again at every `jump`, after everything before the label: it is older than an
    /// allocation only if that allocation is in the loop body. And a loop-carried value whose
    /// first value was a `new` before the label is not an allocation at all after the label
    /// (the `jump` may pass back any object, an older one included).
    fn distinct(&self, a: OpRef, b: OpRef) -> bool {
        if !a.is_op() || !b.is_op() || a == b {
            return false;
        }
        let (older, newer) = if a.index() < b.index() {
            (a, b)
        } else {
            (b, a)
        };
        let allocated = !self.loop_vars.contains(&newer)
            && matches!(
                self.ops[newer.index()].opcode,
                Opcode::New | Opcode::NewArray
            );
        let older_is_older = !self.loop_vars.contains(&older) || newer.index() > self.label_at;
        allocated && older_is_older
    }
}

/// The location of item `i` of array `a` with descriptor `d`.
fn item_key(o: &mut Optimizer, d: DescrId, a: OpRef, i: OpRef) -> ItemKey {
    let (base, off) = index_parts(o, i);
    (d, a, base, off)
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
///
/// A location the preamble stored a computed value into (`c = c + 1` kept in memory) is
/// carried at once when [`Cache::seed`] is set: the body, a copy of the preamble, will store
/// its own new value there, and finding that out would take a whole round. The guess is
/// checked at the `jump` ([`Cache::unneeded`]), so the rounds settle on what they would
/// have found without it.
pub fn at_label(o: &mut Optimizer, vars: &HashSet<OpRef>) -> Vec<OpRef> {
    let named = |v: &OpRef| vars.contains(v);
    let mut kept = Vec::new();
    let banned = &o.heap.banned;
    for class in &o.heap.mem {
        for (obj, fs) in &class.fields {
            for &(d, v) in fs {
                let key = Imported::Field((d, *obj));
                if !named(obj) && !named(&v) && !banned.contains(&key) {
                    kept.push((key, OpRef::constant(0), v));
                }
            }
        }
        for (&(d, a, base), group) in &class.items {
            for (&off, &(i, v)) in group {
                let key = Imported::Item((d, a, base, off));
                let names = named(&a) || named(&base) || named(&i) || named(&v);
                if !names && !banned.contains(&key) {
                    kept.push((key, i, v));
                }
            }
        }
    }
    kept.sort_unstable_by_key(|&(k, _, _)| k);
    for c in &mut o.heap.mem {
        *c = Class::default();
    }
    // A displacement known before the label may not hold after it: the object may be a
    // loop-carried value.
    o.heap.roots.clear();
    o.heap.displaced.clear();
    let mut imported = Vec::new();
    let mut boxes = Vec::new();
    o.heap.carried_now.clear();
    o.heap.seeded_now.clear();
    for (k, i, mut v) in kept {
        let guess = !o.heap.carried.contains(&k)
            && o.heap.seed
            && !o.heap.unseeded.contains(&k)
            && computed(o, v);
        if guess || o.heap.carried.contains(&k) {
            let ty = o.type_of(v);
            let first = v;
            v = o.emit_box(v, ty);
            boxes.push(v);
            o.heap.carried_now.push((k, i));
            if guess {
                o.heap.seeded_now.push((k, v, first));
            }
        } else {
            imported.push((k, v));
        }
        match k {
            Imported::Field(k) => {
                // Its displacement, as every object with a known field has one.
                root_of(o, k.1);
                o.heap.set_field(k, v)
            }
            Imported::Item(k) => o.heap.set_item(k, i, v),
        }
    }
    o.heap.imported = imported;
    boxes
}

/// At the loop's `jump`: what each carried location holds now, loaded if the cache does not
/// know (the location is one the preamble accessed, through values that do not change).
fn carried_values(o: &mut Optimizer) -> Vec<OpRef> {
    let carried = o.heap.carried_now.clone();
    let mut out = Vec::with_capacity(carried.len());
    for (k, index) in carried {
        let v = match o.heap.get(k) {
            Some(v) => o.find(v),
            None => {
                let load = match k {
                    Imported::Field((d, obj)) => {
                        let ty = o.out.get_descr(d).field().expect("verified").kind;
                        Op::new(Opcode::getfield(ty), &[obj]).with_descr(d)
                    }
                    Imported::Item((d, a, _, _)) => {
                        let ty = o.out.get_descr(d).array().expect("verified").kind;
                        Op::new(Opcode::getarrayitem(ty), &[a, index]).with_descr(d)
                    }
                };
                o.derived(load)
            }
        };
        out.push(v);
    }
    out
}

/// Whether `v` is a value the trace computed (not an input, a load or a constant).
fn computed(o: &Optimizer, v: OpRef) -> bool {
    use Opcode::*;
    if !v.is_op() {
        return false;
    }
    let op = o.out.ops[v.index()].opcode;
    !op.is_load() && !op.is_input() && !matches!(op, SameAsI | SameAsF | SameAsR)
}

/// At the loop's `jump`: every imported location must still hold what it held at the label,
/// and every location carried on a guess must hold something else than what it held at the
/// label, its box, or what the preamble left there (then importing it was right). If the
/// body does not know what it holds now, it is not imported at all, as it would not be if it
/// had been imported.
fn check_imported(o: &mut Optimizer) {
    for (k, b, first) in std::mem::take(&mut o.heap.seeded_now) {
        match o.heap.get(k).map(|now| o.find(now)) {
            Some(now) if now == b || now == o.find(first) => o.heap.unneeded.push(k),
            Some(_) => {}
            None => o.heap.broken.push((k, false)),
        }
    }
    let imported = std::mem::take(&mut o.heap.imported);
    for (k, v) in imported {
        let now = o.heap.get(k);
        if now != Some(v) {
            o.heap.broken.push((k, now.is_some()));
        }
    }
}
