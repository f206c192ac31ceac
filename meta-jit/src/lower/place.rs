//! Places: field projections, indexing, loads and stores, enum tags and payloads.
//!
//! Owns: how a place expression (`a.b`, `a[i]`, `*r`, an enum's payload field) becomes a
//! [`Ptr`] with a static offset, and how reading or writing it becomes `GetField`/`SetField` or
//! `GetArrayItem`/`SetArrayItem` with descriptors built from `offset_of!`/`size_of` (the
//! `JitLayout` derive) and the `MaybeUninit` projection trick (field offsets from a closure the
//! macro writes, with the struct type inferred from the handle).
//! Must not know: syntax; guest languages.

use std::mem::{size_of, MaybeUninit};

use super::types::{JitType, Scalar, Stored};
use super::value::{FieldBase, PlaceOf};
use super::{FieldFlags, Handle, Origin, Ptr, Reg, SliceRef};
use crate::jitcode::{Builder, FieldDescr, Kind, Op};

/// A struct whose fields traced code reads and writes. Implemented by `#[derive(JitLayout)]`.
///
/// # Safety
/// `field_flags` must only claim `immutable` for fields that are never written after the value
/// is built, and `quasi_immutable` for fields whose writes go through the invalidating setter.
#[diagnostic::on_unimplemented(
    message = "traced code cannot look into `{Self}`",
    label = "field access on `{Self}`",
    note = "add `#[derive(meta_jit::hints::JitLayout)]` to `{Self}` so the JIT knows its layout"
)]
pub unsafe trait JitStruct: Sized {
    /// The flags of the field named `name`.
    fn field_flags(name: &str) -> FieldFlags;
}

/// An enum traced code matches on. Implemented by `#[derive(JitLayout)]` for `#[repr(u8)]` and
/// `#[repr(C, u8)]` enums (and the other integer reprs).
///
/// # Safety
/// The tag is stored at offset 0 with `TAG_SIZE` bytes and the values `variant_tag` gives, and
/// `payload_offset` gives the true offset of each payload field (as RFC 2195 defines).
#[diagnostic::on_unimplemented(
    message = "traced code cannot match on `{Self}`",
    label = "match on `{Self}`",
    note = "add `#[derive(meta_jit::hints::JitLayout)]` and `#[repr(u8)]` or `#[repr(C, u8)]` to `{Self}`"
)]
pub unsafe trait JitEnum: Sized {
    /// The enum's name (for descriptors).
    const NAME: &'static str;
    /// Size of the tag in bytes.
    const TAG_SIZE: u8;
    /// Whether the tag's integer type is signed.
    const TAG_SIGNED: bool;
    /// The tag value of variant `variant`.
    fn variant_tag(variant: &str) -> i64;
    /// Byte offset of field `field` (a name, or an index for tuple variants) of `variant`.
    fn payload_offset(variant: &str, field: &str) -> usize;
}

/// The type a place of `Self` auto-dereferences to for field access (`Self` for structs, the
/// pointee for references and boxes).
#[diagnostic::on_unimplemented(
    message = "traced code cannot access fields through `{Self}`",
    note = "add `#[derive(meta_jit::hints::JitLayout)]` to the struct"
)]
pub trait PlaceTarget {
    /// The struct reached.
    type Struct: JitStruct;
    /// Emits the loads that reach the struct from a place of `Self`.
    fn to_struct(b: &mut Builder, p: Ptr<Self>) -> Ptr<Self::Struct>;
}

impl<'a, T: PlaceTarget> PlaceTarget for &'a T {
    type Struct = T::Struct;
    fn to_struct(b: &mut Builder, p: Ptr<Self>) -> Ptr<T::Struct> {
        let inner = <&'a T as Stored>::load(b, p);
        T::to_struct(b, inner)
    }
}
impl<'a, T: PlaceTarget> PlaceTarget for &'a mut T {
    type Struct = T::Struct;
    fn to_struct(b: &mut Builder, p: Ptr<Self>) -> Ptr<T::Struct> {
        let inner = <&'a mut T as Stored>::load(b, p);
        T::to_struct(b, inner)
    }
}
impl<T: PlaceTarget> PlaceTarget for Box<T> {
    type Struct = T::Struct;
    fn to_struct(b: &mut Builder, p: Ptr<Self>) -> Ptr<T::Struct> {
        // A `Box<T>` (sized `T`, global allocator) is one non-null pointer.
        let inner = <&T as Stored>::load(b, p.cast::<&T>());
        T::to_struct(b, inner)
    }
}

/// The descriptor of the scalar `T` at place `p`.
pub fn scalar_descr<T: Scalar>(p: &Ptr<T>) -> FieldDescr {
    let size = size_of::<T>() as u8;
    FieldDescr {
        name: p.field.to_string(),
        offset: p.offset,
        size,
        signed: T::INT.is_some_and(|t| t.signed),
        kind: T::KIND,
        immutable: p.flags.immutable,
        quasi_immutable: p.flags.quasi_immutable,
        vable: p.flags.vable,
        length: p.flags.length,
        class: alias_class::<T>(p),
    }
}

/// The alias class of a place holding a `T` (see [`FieldDescr::class`]).
pub fn alias_class<T: ?Sized>(p: &Ptr<T>) -> String {
    alias_class_part::<T>(p, "")
}

/// The alias class of the part `suffix` (`".ptr"`, `".len"`, or `""` for all) of a place
/// holding a `T`: the wide class `T` when the place's origin is unseen, `T|PATH` when the
/// codewriter saw the path (the rule is `ir::may_alias`'s), the field's own name for a
/// place only the framework reaches.
pub fn alias_class_part<T: ?Sized>(p: &Ptr<T>, suffix: &str) -> String {
    if p.flags.private {
        return format!("{}{suffix}", p.field);
    }
    let wide = std::any::type_name::<T>();
    match p.origin.path() {
        None => format!("{wide}{suffix}"),
        Some(path) => format!("{wide}{suffix}|{path}"),
    }
}

/// `place.name`: the place of field `name`, whose address the macro-written `proj` computes
/// from a pointer to the struct (`|p| unsafe { addr_of!((*p).name) }`). The place is in memory
/// for a place `base` ([`Ptr`]), in registers for a struct value (see [`super::value`]).
pub fn field<P: PlaceTarget, B: FieldBase<P>, F>(
    b: &mut Builder,
    base: B,
    name: &'static str,
    proj: impl FnOnce(*const P::Struct) -> *const F,
) -> B::Out<F> {
    base.project(b, name, proj)
}

/// [`field`] of a place in memory.
pub fn field_of_place<P: PlaceTarget, F>(
    b: &mut Builder,
    p: Ptr<P>,
    name: &'static str,
    proj: impl FnOnce(*const P::Struct) -> *const F,
) -> Ptr<F> {
    let s = P::to_struct(b, p);
    let u = MaybeUninit::<P::Struct>::uninit();
    let base = u.as_ptr();
    let off = proj(base) as usize - base as usize;
    assert!(
        off + size_of::<F>() <= size_of::<P::Struct>(),
        "field `{name}` is not inside its struct"
    );
    let mut r = s.cast::<F>();
    r.offset += off;
    r.field = name;
    r.origin = Origin::Field(std::any::type_name::<P::Struct>(), name);
    let mut flags = <P::Struct as JitStruct>::field_flags(name);
    if s.flags.deep {
        flags.immutable = true;
        flags.deep = true;
    }
    r.flags = flags;
    r
}

/// `*r` in a place context, for a reference value `r`: the place it points to is the handle
/// itself.
pub fn deref<T>(_b: &mut Builder, r: Ptr<T>) -> Ptr<T> {
    r
}

/// `&place` / `&mut place`: a reference to a place is the place handle.
#[diagnostic::on_unimplemented(
    message = "cannot take a reference to this value in traced code",
    label = "a local variable or temporary of type `{Self}` lives in a register",
    note = "references in traced code point into memory: to fields, array elements or through other references"
)]
pub trait Addressable {
    /// The reference handle.
    type Ref: Handle;
    /// The reference.
    fn addr(self) -> Self::Ref;
}
impl<T> Addressable for Ptr<T> {
    type Ref = Ptr<T>;
    fn addr(self) -> Ptr<T> {
        self
    }
}
impl<T> Addressable for SliceRef<T> {
    type Ref = SliceRef<T>;
    fn addr(self) -> SliceRef<T> {
        self
    }
}
/// `&place`.
pub fn addr_of<A: Addressable>(_b: &mut Builder, a: A) -> A::Ref {
    a.addr()
}

/// Reads the value stored at a place (a place expression in a value context).
pub fn read<P: PlaceOf<T>, T: Stored>(b: &mut Builder, p: P) -> T::Handle {
    p.read_value(b)
}
/// Writes `v` into a place (`place = v`).
pub fn write<P: PlaceOf<T>, T: Stored>(b: &mut Builder, p: P, v: T::Handle) {
    p.write_value(b, v)
}

/// Something `[i]` applies to in traced code.
#[diagnostic::on_unimplemented(
    message = "traced code cannot index `{Self}`",
    note = "traced code indexes slices, arrays and `Vec`s with a `usize`"
)]
pub trait Indexable {
    /// The item type.
    type Item;
    /// Data pointer and length (emitting the loads needed).
    fn data_len(self, b: &mut Builder) -> (Ptr<Self::Item>, Reg<usize>);
    /// The flags of the items' places.
    fn item_flags(&self) -> FieldFlags {
        FieldFlags::default()
    }
    /// How the items were reached (see [`Origin`]): unseen unless the codewriter saw where
    /// the array lives.
    fn item_origin(&self) -> Origin {
        Origin::Unseen
    }
}

fn items_of(flags: FieldFlags) -> FieldFlags {
    let imm = flags.immutable_items || flags.deep;
    FieldFlags {
        immutable: imm,
        deep: imm,
        vable: flags.vable,
        ..FieldFlags::default()
    }
}

impl<T> Indexable for SliceRef<T> {
    type Item = T;
    fn data_len(self, _b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        (Ptr::new(self.ptr), Reg::new(self.len))
    }
}
impl<T> Indexable for Ptr<Vec<T>> {
    type Item = T;
    fn item_flags(&self) -> FieldFlags {
        items_of(self.flags)
    }
    fn item_origin(&self) -> Origin {
        // A `Vec` owns its buffer: the items of a field's `Vec` are that field's, wherever
        // its struct lies. A `Vec` reached otherwise may be any `Vec`.
        match self.origin {
            Origin::Field(s, f) | Origin::Items(s, f) => Origin::Items(s, f),
            _ => Origin::VecItems,
        }
    }
    fn data_len(self, b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        let (ptr_off, len_off) = probe_vec_layout::<T>();
        let mut pp = self.cast::<&T>();
        pp.offset += ptr_off;
        pp.field = "Vec.ptr";
        pp.flags.private = true;
        let mut lp = self.cast::<usize>();
        lp.offset += len_off;
        lp.field = "Vec.len";
        lp.flags.private = true;
        lp.flags.length = size_of::<T>() > 0;
        let data = <&T as Stored>::load(b, pp);
        let len = <usize as Stored>::load(b, lp);
        (data, len)
    }
}
impl<T, const N: usize> Indexable for Ptr<[T; N]> {
    type Item = T;
    fn item_flags(&self) -> FieldFlags {
        items_of(self.flags)
    }
    fn item_origin(&self) -> Origin {
        // An array reached through a reference of unseen origin may be any `[T; N]`, even
        // one made of a single `T` field (`std::array::from_mut`).
        match self.origin {
            Origin::Field(s, f) | Origin::Items(s, f) => Origin::Items(s, f),
            o => o,
        }
    }
    fn data_len(self, b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        let len = super::ops::konst(b, N);
        (self.cast::<T>(), len)
    }
}
impl<'a, T> Indexable for Ptr<&'a [T]> {
    type Item = T;
    fn item_flags(&self) -> FieldFlags {
        items_of(self.flags)
    }
    fn data_len(self, b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        <&'a [T] as Stored>::load(b, self).data_len(b)
    }
}
impl<'a, T> Indexable for Ptr<&'a mut [T]> {
    type Item = T;
    fn item_flags(&self) -> FieldFlags {
        items_of(self.flags)
    }
    fn data_len(self, b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        <&'a mut [T] as Stored>::load(b, self).data_len(b)
    }
}
impl<'a, T> Indexable for Ptr<&'a Vec<T>> {
    type Item = T;
    fn item_flags(&self) -> FieldFlags {
        items_of(self.flags)
    }
    fn item_origin(&self) -> Origin {
        Origin::VecItems
    }
    fn data_len(self, b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        <&'a Vec<T> as Stored>::load(b, self).data_len(b)
    }
}
impl<'a, T> Indexable for Ptr<&'a mut Vec<T>> {
    type Item = T;
    fn item_flags(&self) -> FieldFlags {
        items_of(self.flags)
    }
    fn item_origin(&self) -> Origin {
        Origin::VecItems
    }
    fn data_len(self, b: &mut Builder) -> (Ptr<T>, Reg<usize>) {
        <&'a mut Vec<T> as Stored>::load(b, self).data_len(b)
    }
}

/// `c[i]`: bounds check (panics like Rust; a guard when tracing), then the item's place.
pub fn index<C: Indexable>(b: &mut Builder, c: C, i: Reg<usize>) -> Ptr<C::Item> {
    let flags = c.item_flags();
    let origin = c.item_origin();
    let (data, len) = c.data_len(b);
    b.emit(Op::CheckIndex {
        index: i.reg,
        len: len.reg,
    });
    let base = if data.index.is_some() {
        Ptr::new(data.materialize(b))
    } else {
        data
    };
    let mut r = base.cast::<C::Item>();
    r.index = Some((i.reg, size_of::<C::Item>()));
    r.field = std::any::type_name::<C::Item>();
    r.flags = flags;
    r.origin = origin;
    r
}

/// `c.len()` on slices, arrays and `Vec`s.
pub fn len<C: Indexable>(b: &mut Builder, c: C) -> Reg<usize> {
    c.data_len(b).1
}

/// Where `Vec<T>` keeps its data pointer and length (byte offsets), found by looking at a real
/// `Vec<T>` (on every call): the standard library does not promise a field order.
pub fn probe_vec_layout<T>() -> (usize, usize) {
    assert_eq!(
        size_of::<Vec<T>>(),
        3 * size_of::<usize>(),
        "unexpected Vec layout"
    );
    let v: Vec<T> = Vec::with_capacity(4);
    let ptr = v.as_ptr() as usize;
    // SAFETY: `Vec<T>` is three initialized pointer-sized words (checked above), so reading it
    // as `[usize; 3]` reads initialized memory; `v` stays alive and is dropped normally.
    let words: [usize; 3] = unsafe { std::mem::transmute_copy(&v) };
    let p = words
        .iter()
        .position(|&w| w == ptr)
        .expect("Vec data pointer not found");
    let l = words
        .iter()
        .position(|&w| w == 0)
        .expect("Vec length not found");
    assert_ne!(p, l);
    (p * size_of::<usize>(), l * size_of::<usize>())
}

/// Where a slice reference `&[T]` keeps its data pointer and length (byte offsets).
pub fn probe_slice_layout() -> (usize, usize) {
    let a = [0u8; 3];
    let s: &[u8] = &a;
    // SAFETY: a slice reference is two initialized pointer-sized words.
    let words: [usize; 2] = unsafe { std::mem::transmute_copy(&s) };
    let p = words
        .iter()
        .position(|&w| w == a.as_ptr() as usize)
        .expect("slice data pointer not found");
    let l = words
        .iter()
        .position(|&w| w == 3)
        .expect("slice length not found");
    (p * size_of::<usize>(), l * size_of::<usize>())
}

/// What a `match` scrutinee place of `Self` becomes: the value itself for scalars, the place for
/// enums.
#[diagnostic::on_unimplemented(
    message = "traced code cannot match on `{Self}`",
    note = "traced code matches on integers, `bool`, `char`, enums with `#[derive(JitLayout)]`, tuples of \
            those, `Option<Gc<T>>`, and `Option`s and `Result`s of scalars; for an optional value of \
            another type, declare a `#[repr(C, u8)]` enum with `#[derive(JitLayout)]`"
)]
pub trait MatchTarget {
    /// The scrutinee handle.
    type Scrutinee: Scrutinee;
    /// Prepares the scrutinee from its place.
    fn scrutinee(b: &mut Builder, p: Ptr<Self>) -> Self::Scrutinee;
}

macro_rules! scalar_match {
    ($($t:ty),*) => {$(
        impl MatchTarget for $t {
            type Scrutinee = Reg<$t>;
            fn scrutinee(b: &mut Builder, p: Ptr<Self>) -> Reg<$t> {
                <$t as Stored>::load(b, p)
            }
        }
    )*};
}
scalar_match!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char);

/// A prepared `match` scrutinee: something with an integer discriminant.
pub trait Scrutinee: Copy {
    /// The integer switched on (the value, or an enum's tag).
    fn discriminant(self, b: &mut Builder) -> Reg<i64>;
}
impl<T: Scalar> Scrutinee for Reg<T> {
    fn discriminant(self, _b: &mut Builder) -> Reg<i64> {
        Reg::new(self.reg)
    }
}
impl<E: JitEnum> Scrutinee for Ptr<E> {
    fn discriminant(self, b: &mut Builder) -> Reg<i64> {
        let dst = b.fresh(Kind::Int);
        let descr = super::value::tag_descr(&self);
        match self.index {
            None => b.emit(Op::GetField {
                dst,
                base: self.base,
                descr: descr.into(),
            }),
            Some((index, item_size)) => b.emit(Op::GetArrayItem {
                dst,
                base: self.base,
                index,
                descr: crate::jitcode::ArrayDescr {
                    item_size,
                    item: descr,
                }
                .into(),
            }),
        }
        Reg::new(dst)
    }
}

/// A scrutinee given as a place (`match program[pc] { .. }`).
pub fn scrutinee_place<T: MatchTarget>(b: &mut Builder, p: Ptr<T>) -> T::Scrutinee {
    T::scrutinee(b, p)
}
/// A scrutinee given as a value: a scalar, or a reference to an enum (`match instr { .. }` with
/// `instr: &Instr`).
pub fn scrutinee_value<S: Scrutinee>(_b: &mut Builder, s: S) -> S {
    s
}

/// Scrutinees with variants: the switch key of a variant pattern (`Instr::Push(..)`, `Some(..)`).
pub trait VariantKey {
    /// The Rust type matched (the closure that checks the pattern takes it).
    type Value;
    /// The key of variant `name`.
    fn variant_key(&self, name: &str) -> i64;
}
impl<E: JitEnum> VariantKey for Ptr<E> {
    type Value = E;
    fn variant_key(&self, name: &str) -> i64 {
        E::variant_tag(name)
    }
}
/// The key of a variant pattern; `check` is never called: it makes rustc check the pattern
/// against the scrutinee's type.
pub fn variant_key<S: VariantKey>(s: &S, name: &str, _check: impl FnOnce(S::Value) -> bool) -> i64 {
    s.variant_key(name)
}

/// The switch key of a literal or constant pattern on a scalar scrutinee.
pub fn literal_key<T: Scalar>(_s: &Reg<T>, v: T) -> i64 {
    v.to_value().int()
}
/// The switch key of a unit-variant or constant path pattern (`Instr::Stop`, `MAX`): a variant's
/// tag for enums, the constant's value for scalars.
pub trait PathKey<V> {
    /// The key.
    fn path_key(&self, name: &str, v: V) -> i64;
}
impl<E: JitEnum> PathKey<E> for Ptr<E> {
    fn path_key(&self, name: &str, _v: E) -> i64 {
        E::variant_tag(name)
    }
}
impl<T: Scalar> PathKey<T> for Reg<T> {
    fn path_key(&self, _name: &str, v: T) -> i64 {
        v.to_value().int()
    }
}

/// Scrutinees with payloads.
pub trait Payload: Copy {
    /// What a payload field of type `F` is: a place for enums in memory, a register for values.
    type Field<F>;
    /// The payload field `field` of `variant`.
    fn payload_of<F>(self, b: &mut Builder, variant: &str, field: &str) -> Self::Field<F>;
}
impl<E: JitEnum> Payload for Ptr<E> {
    type Field<F> = Ptr<F>;
    fn payload_of<F>(self, _b: &mut Builder, variant: &str, field: &str) -> Ptr<F> {
        let mut r = self.cast::<F>();
        r.offset += E::payload_offset(variant, field);
        r.field = crate::ir::PAYLOAD_FIELD;
        // The payloads of one type of the enums at one place share a class,
        // `T:E.payload@WHERE`; the classes of other types there alias it, and so do those of
        // enums of unseen place (`ir::payloads_meet`): the variants overlap in memory.
        r.origin = Origin::Payload(std::any::type_name::<E>(), self.origin.within());
        r
    }
}

/// The payload field `field` of `variant`. `extract` is never called: its return type is the
/// field's type, inferred by rustc from the pattern the macro wrote.
pub fn payload<S: Payload + VariantKey, F>(
    b: &mut Builder,
    s: S,
    variant: &str,
    field: &str,
    _extract: impl FnOnce(S::Value) -> F,
) -> S::Field<F> {
    s.payload_of(b, variant, field)
}

/// A nested pattern's scrutinee: a payload place (loaded or kept as a place) or a register.
pub trait SubScrutinee {
    /// The scrutinee.
    type S: Scrutinee;
    /// Prepares it.
    fn sub_scrutinee(self, b: &mut Builder) -> Self::S;
}
impl<T: MatchTarget> SubScrutinee for Ptr<T> {
    type S = T::Scrutinee;
    fn sub_scrutinee(self, b: &mut Builder) -> T::Scrutinee {
        T::scrutinee(b, self)
    }
}
impl<T: Scalar> SubScrutinee for Reg<T> {
    type S = Reg<T>;
    fn sub_scrutinee(self, _b: &mut Builder) -> Reg<T> {
        self
    }
}
/// The scrutinee of a nested pattern.
pub fn sub_scrutinee<P: SubScrutinee>(b: &mut Builder, p: P) -> P::S {
    p.sub_scrutinee(b)
}

/// A binding in a pattern matched by value: reads the field (what Rust copies: scalars,
/// `Copy` values), or takes the payload a value in registers holds (`Some(g)` on an
/// `Option<Gc<T>>`).
pub fn bind_by_value<P: ValueBinding>(b: &mut Builder, p: P) -> P::Bound {
    p.bind(b)
}

/// What a binding in a pattern matched by value gets from a payload field (see
/// [`bind_by_value`]).
pub trait ValueBinding {
    /// The bound handle.
    type Bound: Handle;
    /// The binding's value.
    fn bind(self, b: &mut Builder) -> Self::Bound;
}
impl<T: Stored> ValueBinding for Ptr<T> {
    type Bound = T::Handle;
    fn bind(self, b: &mut Builder) -> T::Handle {
        T::load(b, self)
    }
}
/// A payload already in a register (an `Option` or `Result` of scalars loaded to be matched).
impl<T: Scalar> ValueBinding for Reg<T> {
    type Bound = Reg<T>;
    fn bind(self, _b: &mut Builder) -> Reg<T> {
        self
    }
}
impl<F: JitType> ValueBinding for super::value::RegPlace<F> {
    type Bound = F::Handle;
    fn bind(self, _b: &mut Builder) -> F::Handle {
        super::value::FieldBinding::bound(self)
    }
}

/// A scrutinee that a binding may copy (`x => ..` on a scalar matched by value).
#[diagnostic::on_unimplemented(
    message = "binding a whole `match`ed struct or enum by value copies it, which traced code does not do",
    note = "match on a reference instead (`match &place {{ x => .. }}`), or bind the payload fields"
)]
pub trait CopyScrutinee: Handle {}
impl<T: Scalar> CopyScrutinee for Reg<T> {}
/// `x => ..` binding a scrutinee matched by value.
pub fn copy_scrutinee<S: CopyScrutinee>(_b: &mut Builder, s: S) -> S {
    s
}

/// Adds a `match` switch case unless an earlier arm already claimed the key.
pub fn add_case(
    cases: &mut Vec<(i64, crate::jitcode::Label)>,
    key: i64,
    label: crate::jitcode::Label,
) {
    if !cases.iter().any(|&(k, _)| k == key) {
        cases.push((key, label));
    }
}

impl<E: JitEnum + Scalar> VariantKey for Reg<E> {
    type Value = E;
    fn variant_key(&self, name: &str) -> i64 {
        E::variant_tag(name)
    }
}
