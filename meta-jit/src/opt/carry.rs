//! Virtual objects across a peeled loop's label (RPython's virtual state).
//!
//! Without this, the label forces every virtual (see [`super::virtuals`]): a loop whose
//! iteration builds a new object and hands it to the next (a boxed counter) allocates once per
//! iteration. With it, a loop-carried value that is a virtual object at the label is carried
//! as its fields' values: the label takes the fields (nested virtuals flattened, depth first)
//! instead of the object, the loop body starts from a virtual of the same shape built from
//! those label arguments, and the `jump` passes the fields of the virtual the body built. If
//! the body's value at the `jump` is not a virtual of the same shape (it escaped, or it has a
//! field the shape lacks), the carried input is recorded in [`Carry::broken`] and the trace is
//! optimized again without carrying it virtually.
//!
//! A field that holds the same constant at the label and at the `jump` (a frame's return
//! point, a register the loop never changes) is part of the shape, not a label argument: the
//! loop body knows it, so the guards on it fold and it costs no register. If the `jump` passes
//! another value there, the carried input is recorded in [`Carry::const_broken`] and the
//! trace is optimized again with that input's fields all label arguments.
//!
//! Only for a peeled loop ([`super::unroll`]), whose body refers to nothing of the preamble
//! but the trace's inputs: there a preamble virtual that no label argument reaches is dead at
//! the label, and one that exactly one label argument reaches (once) has no other name, so
//! the loop body may have a fresh virtual in its place.
//!
//! Owns: the label's layout of carried virtuals. Must not know: the other stages.

use hashbrown::{HashMap, HashSet};

use super::virtuals::force;
use super::Optimizer;
use crate::ir::{DescrId, Op, OpArgs, OpRef};

/// The shape of a carried virtual object: its descriptor and what each field is.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    descr: DescrId,
    is_array: bool,
    fields: Vec<(DescrId, Member)>,
}

/// A field of a carried virtual.
#[derive(Clone, Debug, PartialEq)]
enum Member {
    /// A label argument.
    Arg,
    /// This constant, the same at the label and at the `jump`.
    Const(OpRef),
    /// A nested virtual.
    Nested(Shape),
}

/// One carried value at the label: a plain argument, or a virtual object's fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Slot {
    /// One label argument.
    Plain,
    /// As many label arguments as the shape has leaves.
    Virtual(Shape),
}

/// The state of one optimization.
#[derive(Default, Clone)]
pub struct Carry {
    /// Whether the trace is a peeled loop (set by the driver of the optimization).
    pub peeled: bool,
    /// Carried inputs (by their position among the label's first arguments) never to carry
    /// virtually (a previous round found them broken).
    pub banned: HashSet<usize>,
    /// Carried inputs whose value at the `jump` did not have the label's shape.
    pub broken: Vec<usize>,
    /// Carried inputs whose fields are never constants of the shape (a previous round found
    /// the `jump` passing another value for one).
    pub unconst: HashSet<usize>,
    /// Carried inputs whose value at the `jump` had another value where the shape has a
    /// constant.
    pub const_broken: Vec<usize>,
    /// The label's slots, once it is processed.
    slots: Vec<Slot>,
}

impl Carry {
    /// Whether the label carried at least one virtual.
    pub fn active(&self) -> bool {
        self.slots.iter().any(|s| matches!(s, Slot::Virtual(_)))
    }

    /// Per label slot: `None` for a plain argument, or how many label arguments (leaves)
    /// carry a virtual's fields.
    pub fn virtual_slots(&self) -> Vec<Option<usize>> {
        self.slots
            .iter()
            .map(|s| match s {
                Slot::Plain => None,
                Slot::Virtual(shape) => Some(count_leaves(shape)),
            })
            .collect()
    }
}

/// How many times each unforced virtual is named by `roots` and by the fields of the virtuals
/// they reach.
fn reference_counts(o: &mut Optimizer, roots: &[OpRef]) -> HashMap<usize, u32> {
    let mut counts = HashMap::new();
    let mut todo: Vec<OpRef> = roots.to_vec();
    let mut seen = HashSet::new();
    while let Some(x) = todo.pop() {
        let x = o.find(x);
        if !x.is_virtual() {
            continue;
        }
        *counts.entry(x.index()).or_insert(0) += 1;
        if seen.insert(x.index()) {
            todo.extend(o.virtuals.objs[x.index()].fields.iter().map(|f| f.1));
        }
    }
    counts
}

fn shape_of(
    o: &mut Optimizer,
    v: OpRef,
    counts: &HashMap<usize, u32>,
    consts: bool,
    leaves: &mut Vec<OpRef>,
    taken: &mut HashSet<usize>,
) -> Shape {
    taken.insert(v.index());
    let (descr, is_array, fields) = {
        let obj = &o.virtuals.objs[v.index()];
        (obj.descr, obj.is_array, obj.fields.clone())
    };
    let mut out = Vec::with_capacity(fields.len());
    for (d, x) in fields {
        let x = o.find(x);
        if x.is_virtual() && counts.get(&x.index()) == Some(&1) {
            out.push((d, Member::Nested(shape_of(o, x, counts, consts, leaves, taken))));
        } else if consts && x.is_const() {
            out.push((d, Member::Const(x)));
        } else {
            leaves.push(x);
            out.push((d, Member::Arg));
        }
    }
    Shape {
        descr,
        is_array,
        fields: out,
    }
}

/// At the label of a peeled loop, before its arguments are boxed: replaces each carried
/// virtual among `args` by its leaves, forces every other virtual the label reaches (and
/// drops those it does not reach: they are dead), and returns the slots.
pub fn at_label(o: &mut Optimizer, args: &mut OpArgs) -> Vec<Slot> {
    let roots: Vec<OpRef> = args.iter().map(|&a| o.find(a)).collect();
    let counts = reference_counts(o, &roots);
    let mut flat = Vec::with_capacity(args.len());
    let mut slots = Vec::with_capacity(args.len());
    let mut taken = HashSet::new();
    for (k, &v) in roots.iter().enumerate() {
        let whole =
            v.is_virtual() && counts.get(&v.index()) == Some(&1) && !o.virtuals.carry.banned.contains(&k);
        if whole {
            let consts = !o.virtuals.carry.unconst.contains(&k);
            let shape = shape_of(o, v, &counts, consts, &mut flat, &mut taken);
            slots.push(Slot::Virtual(shape));
        } else {
            flat.push(v);
            slots.push(Slot::Plain);
        }
    }
    // The leaves and plain arguments that are (or reach) other virtuals escape: force them.
    for x in flat.iter_mut() {
        *x = force(o, *x);
    }
    // Virtuals the label does not reach are dead; those it reaches through a carried shape
    // live on in the loop body. Mark both as forced into nothing the body can name: the body
    // never refers to preamble values (the trace is peeled).
    *args = flat.into_iter().collect();
    o.virtuals.carry.slots = slots.clone();
    slots
}

/// Builds, after the label, the virtual of `shape` whose leaves are the next `boxes`.
pub fn rebuild(o: &mut Optimizer, shape: &Shape, boxes: &mut impl Iterator<Item = OpRef>) -> OpRef {
    let fields = shape
        .fields
        .iter()
        .map(|(d, leaf)| {
            let x = match leaf {
                Member::Nested(s) => rebuild(o, s, boxes),
                Member::Const(c) => *c,
                Member::Arg => boxes.next().expect("a box per leaf"),
            };
            (*d, x)
        })
        .collect();
    o.virtuals.add(shape.descr, fields, shape.is_array)
}

/// Why a value at the `jump` does not fit its slot's shape.
enum Misfit {
    /// It is not a virtual of that shape.
    Shape,
    /// It is, but a field the shape has as a constant holds another value.
    Const,
}

/// The leaves of `v` if it is a virtual of `shape`, in the label's order.
fn leaves_of(o: &mut Optimizer, v: OpRef, shape: &Shape, out: &mut Vec<OpRef>) -> Result<(), Misfit> {
    let v = o.find(v);
    if !v.is_virtual() {
        return Err(Misfit::Shape);
    }
    let (descr, is_array, fields) = {
        let obj = &o.virtuals.objs[v.index()];
        (obj.descr, obj.is_array, obj.fields.clone())
    };
    if descr != shape.descr || is_array != shape.is_array {
        return Err(Misfit::Shape);
    }
    if is_array && fields.len() != shape.fields.len() {
        return Err(Misfit::Shape);
    }
    // Every field the virtual has must be one of the shape's.
    if !is_array && fields.iter().any(|f| !shape.fields.iter().any(|s| s.0 == f.0)) {
        return Err(Misfit::Shape);
    }
    let mut misfit = None;
    for (i, (d, leaf)) in shape.fields.iter().enumerate() {
        let x = if is_array {
            Some(fields[i].1)
        } else {
            fields.iter().find(|f| f.0 == *d).map(|f| f.1)
        };
        let x = match x {
            Some(x) => x,
            None => {
                let ty = o.out.get_descr(*d).field().expect("a field").kind;
                o.out.constant(crate::ir::Value::from_bits(ty, 0))
            }
        };
        match leaf {
            Member::Nested(s) => match leaves_of(o, x, s, out) {
                Ok(()) => {}
                Err(Misfit::Shape) => return Err(Misfit::Shape),
                Err(Misfit::Const) => misfit = Some(Misfit::Const),
            },
            Member::Const(c) => {
                let (now, want) = (o.const_value(x), o.const_value(*c));
                if now.is_none() || now != want {
                    misfit = Some(Misfit::Const);
                }
            }
            Member::Arg => out.push(x),
        }
    }
    misfit.map_or(Ok(()), Err)
}

/// How many label arguments carry `s`'s fields.
fn count_leaves(s: &Shape) -> usize {
    s.fields
        .iter()
        .map(|(_, leaf)| match leaf {
            Member::Arg => 1,
            Member::Const(_) => 0,
            Member::Nested(n) => count_leaves(n),
        })
        .sum()
}

/// At the loop's `jump`: the carried virtuals' leaves in place of the objects. A value that is
/// not a virtual of its slot's shape, or that has another value where the shape has a
/// constant, breaks the optimization (see the module doc); its slot gets zeros so that the
/// trace stays well formed until it is optimized again.
pub fn at_jump(o: &mut Optimizer, op: &mut Op) {
    let slots = o.virtuals.carry.slots.clone();
    let mut args = Vec::with_capacity(op.args.len());
    for (k, slot) in slots.iter().enumerate() {
        let v = op.args[k];
        match slot {
            Slot::Plain => args.push(v),
            Slot::Virtual(shape) => {
                let mut leaves = Vec::new();
                match leaves_of(o, v, shape, &mut leaves) {
                    Ok(()) => args.extend(leaves),
                    Err(why) => {
                        match why {
                            Misfit::Shape => o.virtuals.carry.broken.push(k),
                            Misfit::Const => o.virtuals.carry.const_broken.push(k),
                        }
                        let zero = o.out.int(0);
                        args.extend(std::iter::repeat_n(zero, count_leaves(shape)));
                    }
                }
            }
        }
    }
    // The heap stage appends its own carried values after these.
    args.extend(op.args[slots.len()..].iter().copied());
    op.args = args.into_iter().collect();
}
