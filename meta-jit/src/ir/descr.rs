//! Descriptors: what an op needs to know about memory and calls that its arguments do not say.
//! A trace owns a table of them, and ops name one by [`DescrId`].
//!
//! Aliasing: every field and array descriptor belongs to an *alias class*. Accesses through
//! descriptors of different classes never touch the same memory. A descriptor without an
//! `alias` name is a class of its own (one per field of a type and one per array item type, as
//! RPython makes them); descriptors that share an `alias` name are one class, and accesses
//! through them may touch the same memory, unless they are provably apart (the heap cache,
//! [`crate::opt::heap`], decides that).
//!
//! A class name is either *wide*, `T` (any location holding a `T`), or *precise*, `T:PATH` (the
//! locations holding a `T` that are reached by the access path `PATH`, such as the field `f` of
//! struct `S`, `i64:S.f`, or the items of `Vec`s, `i64:Vec.items`). Precise classes of one wide type
//! are disjoint from each other, and each may alias its wide class ([`may_alias`]). The precise
//! classes of an enum's payload alias each other whatever their types: the payload is one path
//! (`E.payload`) that holds an `i64` in one variant and an `f64` in another, and a store of one
//! must forget what was known of the other (a loop that stored an integer and then a float
//! into one register of an interpreter kept the float's store out of its body, as if the
//! integer's could not have changed it). The
//! codewriter gives a precise class to every access whose path it saw (a field projection, an
//! item of a `Vec` or of an array field) and the wide class, the stored Rust type, to an access
//! through a reference whose origin it cannot see: safe Rust may reach one `i64` both as the
//! field of a struct and through a `&mut i64` to it.

use super::Type;

/// Index of a descriptor in its trace's table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DescrId(pub u32);

/// A descriptor, as the table holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Descr {
    /// The name used in the text form.
    pub name: String,
    /// What it describes.
    pub kind: DescrKind,
}

/// The kinds of descriptor.
#[derive(Clone, Debug, PartialEq)]
pub enum DescrKind {
    /// A field of a struct.
    Field(FieldDescr),
    /// The items of an array.
    Array(ArrayDescr),
    /// The size of a struct, for `new`.
    Size(SizeDescr),
    /// A call signature with its effects.
    Call(CallDescr),
    /// Another trace's entry, for a `jump` that leaves this trace (a bridge into a loop).
    Target(u32),
}

/// A field: where it is and how to load it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDescr {
    /// Byte offset from the object's address.
    pub offset: u32,
    /// Size in bytes: 1, 2, 4 or 8 (8 for floats and references).
    pub size: u8,
    /// Whether a load sign-extends (otherwise it zero-extends).
    pub signed: bool,
    /// The kind of value stored: `Int`, `Float` or `Ref`.
    pub kind: Type,
    /// The field never changes after the object is built: loads of it from a constant object
    /// fold, and loads of it are never invalidated by writes.
    pub immutable: bool,
    /// The field rarely changes: compiled code may fold it, and a write invalidates that code.
    pub quasi_immutable: bool,
    /// The field belongs to a virtualizable frame (`#[jit(virtualizable)]`): the optimizer may
    /// keep its stores in registers until the trace exits ([`crate::opt::vable`]).
    pub vable: bool,
    /// The field holds the length of a Rust `Vec` or slice whose items are not zero-sized: a
    /// load of it lies in `[0, LENGTH_MAX]` ([`LENGTH_MAX`]), which the bounds stage uses.
    pub length: bool,
    /// The alias class shared with other descriptors, if any (see the module doc).
    pub alias: Option<String>,
}

/// The largest value of a [`FieldDescr::length`] field: 2^57. The items of a `Vec` or slice of
/// items that are not zero-sized lie in the address space, and x86-64's user address space
/// (with 5-level paging) is below 2^57; a bound this far from `i64::MAX` lets the bounds stage
/// add offsets to an index below a length without overflow.
pub const LENGTH_MAX: i64 = 1 << 57;

/// Array items: where the first is and how to load one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayDescr {
    /// Byte offset of item 0 from the array's address.
    pub base: u32,
    /// Size of one item in bytes: 1, 2, 4 or 8.
    pub item_size: u8,
    /// Whether a load sign-extends.
    pub signed: bool,
    /// The kind of value stored.
    pub kind: Type,
    /// The items belong to a virtualizable frame's array (`#[jit(virtualizable)]` on the
    /// array's field): the optimizer may keep their stores in registers until the trace exits
    /// ([`crate::opt::vable`]).
    pub vable: bool,
    /// The alias class shared with other descriptors, if any (see the module doc).
    pub alias: Option<String>,
}

/// A struct's size and alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeDescr {
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes (a power of two).
    pub align: u32,
}

/// A function's signature and effects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallDescr {
    /// Argument kinds, in order (the function itself is not listed).
    pub args: Vec<Type>,
    /// Result kind (`Void` for none).
    pub ret: Type,
    /// What the function may do.
    pub effects: Effects,
}

/// What a call may read and write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effects {
    /// The result depends only on the arguments and the call has no visible effect.
    pub elidable: bool,
    /// Memory it may read.
    pub reads: Access,
    /// Memory it may write.
    pub writes: Access,
    /// It may write a quasi-immutable field (and so invalidate compiled code).
    pub can_invalidate: bool,
    /// `#[loop_invariant]`: the result is the same all through one run of a compiled loop, so
    /// the optimizer reuses the first call's result for the same function and arguments (the
    /// preamble's call serves the whole peeled loop body). The call itself may have effects.
    pub loop_invariant: bool,
}

impl Effects {
    /// A function that may do anything.
    pub fn anything() -> Effects {
        Effects {
            elidable: false,
            reads: Access::Everything,
            writes: Access::Everything,
            can_invalidate: true,
            loop_invariant: false,
        }
    }

    /// A `#[loop_invariant]` function: may do anything, but its result is the same for the
    /// whole loop.
    pub fn loop_invariant() -> Effects {
        Effects {
            loop_invariant: true,
            ..Effects::anything()
        }
    }

    /// An elidable function.
    pub fn elidable() -> Effects {
        Effects {
            elidable: true,
            reads: Access::Everything,
            writes: Access::Nothing,
            can_invalidate: false,
            loop_invariant: false,
        }
    }
}

/// A set of memory locations, by descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// No memory.
    Nothing,
    /// The locations of these field and array descriptors.
    Descrs(Vec<DescrId>),
    /// Any memory.
    Everything,
}

/// Whether accesses through descriptors of alias classes `a` and `b` (names as
/// [`Descr::alias_class`] gives them) may touch the same memory:
/// - the same class;
/// - a wide class `T` and a precise class `T:PATH` of it;
/// - two precise classes of one type whose paths meet ([`paths_meet`]: the items of any `Vec`
///   and the items of the `Vec` a field owns);
/// - two precise classes of one enum's payload, whatever their types ([`payloads_meet`]): the
///   payload holds each variant's type in turn (see the module doc).
///
/// Descriptors without a class alias only themselves, which this function cannot see: it says
/// `false` for them.
pub fn may_alias(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b || ClassName::of(a).meets(&ClassName::of(b)),
        _ => false,
    }
}

/// An alias class name taken apart once, for asking [`may_alias`] of many pairs (the
/// optimizer's heap cache relates every pair of a trace's classes).
#[derive(Clone, Copy, Debug)]
pub struct ClassName<'a> {
    name: &'a str,
    /// The stored type: the whole name for a wide class.
    wide: &'a str,
    /// The access path of a precise class.
    path: Option<&'a str>,
    /// For a path into an enum's payload ([`overlaps_across_types`]): the enum's part
    /// (`E.payload`) and where the enum lies, if the codewriter saw it.
    payload: Option<(&'a str, Option<&'a str>)>,
}

impl<'a> ClassName<'a> {
    /// Takes `name` apart.
    pub fn of(name: &'a str) -> ClassName<'a> {
        let (wide, path) = match name.split_once(':') {
            Some((w, p)) => (w, Some(p)),
            None => (name, None),
        };
        let payload = path.and_then(payload_of);
        ClassName {
            name,
            wide,
            path,
            payload,
        }
    }

    /// [`may_alias`] of the two names.
    pub fn meets(&self, other: &ClassName<'_>) -> bool {
        if self.name == other.name {
            return true;
        }
        match (self.path, other.path) {
            (None, Some(_)) => other.wide == self.name,
            (Some(_), None) => self.wide == other.name,
            (Some(pa), Some(pb)) => match (self.payload, other.payload) {
                (Some(a), Some(b)) => payload_parts_meet(a, b),
                (None, None) => self.wide == other.wide && paths_meet(pa, pb),
                _ => false,
            },
            (None, None) => false,
        }
    }
}

/// The answers of [`may_alias`] for the descriptors of one trace, kept as they are asked.
/// `may_alias` compares class names; the tracer's heap cache and dead-store elimination ask
/// it of the same few descriptor pairs at every store or load (deltablue's tracer asked it
/// for 16% of the program's instructions before the answers were kept).
#[derive(Default, Clone, Debug)]
pub struct AliasMemo {
    known: hashbrown::HashMap<(DescrId, DescrId), bool>,
}

impl AliasMemo {
    /// Whether accesses through descriptors `a` and `b` of trace `t` may touch the same memory:
    /// the same descriptor, or classes [`may_alias`] relates. A memo serves one trace: its
    /// answers are by descriptor number.
    pub fn meet(&mut self, t: &super::Trace, a: DescrId, b: DescrId) -> bool {
        a == b
            || *self.known.entry((a.min(b), a.max(b))).or_insert_with(|| {
                may_alias(t.get_descr(a).alias_class(), t.get_descr(b).alias_class())
            })
    }
}

/// The path of the items of a `Vec` whose owner the codewriter did not see (reached through a
/// reference to the `Vec`): they may be the items of any `Vec` of their type.
pub const ANY_VEC_ITEMS: &str = "Vec.items";

/// Whether two access paths of one stored type may reach the same location: equal paths, or
/// the items of an unseen `Vec` ([`ANY_VEC_ITEMS`]) and the items of any array or `Vec`
/// (`S.f.items`). Paths of distinct fields, or of the items of distinct fields, never meet: a
/// `Vec` owns its buffer, and an array field lies inside its struct.
pub fn paths_meet(a: &str, b: &str) -> bool {
    let items = |p: &str| p.ends_with(".items");
    a == b || (a == ANY_VEC_ITEMS && items(b)) || (b == ANY_VEC_ITEMS && items(a))
}

/// Whether two paths into enum payloads (`E.payload`, or `E.payload@WHERE` when the codewriter
/// saw where the enum lies, `WHERE` a path as [`paths_meet`] takes them) may reach the same
/// bytes: the same enum's payload, where both say where it lies and those places meet, or
/// where one does not say.
pub fn payloads_meet(a: &str, b: &str) -> bool {
    match (payload_of(a), payload_of(b)) {
        (Some(a), Some(b)) => payload_parts_meet(a, b),
        _ => false,
    }
}

/// A path into an enum's payload ([`overlaps_across_types`]) as the enum's part (`E.payload`)
/// and where the enum lies, if the codewriter saw it; `None` for another path.
fn payload_of(path: &str) -> Option<(&str, Option<&str>)> {
    overlaps_across_types(path).then(|| match path.split_once('@') {
        Some((e, w)) => (e, Some(w)),
        None => (path, None),
    })
}

/// [`payloads_meet`] of two paths taken apart by [`payload_of`].
fn payload_parts_meet(a: (&str, Option<&str>), b: (&str, Option<&str>)) -> bool {
    a.0 == b.0
        && match (a.1, b.1) {
            (Some(wa), Some(wb)) => paths_meet(wa, wb),
            _ => true,
        }
}

/// Whether the locations of access path `path` hold values of several types: an enum's payload,
/// `E.payload` or `E.payload@WHERE` (the codewriter's names, `lower/place.rs`). Every other
/// path holds one type (a struct's field), or one type per buffer (the items of `Vec`s,
/// `T:Vec.items`: a `Vec<i64>`'s buffer is never a `Vec<u8>`'s). A wide class `T` still
/// aliases only `T:E.payload`: safe Rust writes through a `&mut T` into a payload only while
/// its variant holds a `T`, and the store that made it so forgot what was known of the other
/// types.
pub fn overlaps_across_types(path: &str) -> bool {
    let enum_part = path.split_once('@').map_or(path, |(e, _)| e);
    enum_part
        .strip_suffix(PAYLOAD_FIELD)
        .is_some_and(|p| p.ends_with('.'))
}

/// The field name the codewriter gives an enum's payload place (its class path is
/// `E.payload`), which [`overlaps_across_types`] recognizes.
pub const PAYLOAD_FIELD: &str = "payload";

impl Descr {
    /// The field descriptor, if it is one.
    pub fn field(&self) -> Option<&FieldDescr> {
        match &self.kind {
            DescrKind::Field(f) => Some(f),
            _ => None,
        }
    }

    /// The array descriptor, if it is one.
    pub fn array(&self) -> Option<&ArrayDescr> {
        match &self.kind {
            DescrKind::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The alias class name of a field or array descriptor, if it shares one (see the module
    /// doc). Descriptors without one alias only themselves.
    pub fn alias_class(&self) -> Option<&str> {
        match &self.kind {
            DescrKind::Field(f) => f.alias.as_deref(),
            DescrKind::Array(a) => a.alias.as_deref(),
            _ => None,
        }
    }

    /// The size descriptor, if it is one.
    pub fn size(&self) -> Option<&SizeDescr> {
        match &self.kind {
            DescrKind::Size(s) => Some(s),
            _ => None,
        }
    }

    /// The call descriptor, if it is one.
    pub fn call(&self) -> Option<&CallDescr> {
        match &self.kind {
            DescrKind::Call(c) => Some(c),
            _ => None,
        }
    }
}
