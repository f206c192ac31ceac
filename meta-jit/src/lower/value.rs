//! Structs and enums as values: copied between memory and registers (`regs[a] = regs[b]`,
//! `let p = *point;`, `a.pos = b.pos`), built by a variant or struct expression
//! (`Value::Int(x)`, `Op::Nil`, `Point { x, y }`) and stored (`vm.stack[ra] = Value::Int(s)`).
//!
//! Owns: the handle [`Val<T>`] (an enum's tag register, then the registers of every field of
//! every variant, or of every field of a struct), the trait [`JitValue`] that says where each
//! field's registers are (implemented by `#[derive(JitLayout)]` when every field is a value
//! traced code can hold), the field places of a value in registers ([`RegPlace`]), and the
//! helpers the derived `Stored` impls call: a load reads the tag and, under a `Switch` on it,
//! the payload fields of the variant found; a store writes the tag and the payload fields of
//! one variant (the bytes of the other variants are padding then). The tag and payload fields
//! are read and written with the same descriptors as `match` uses (see `place.rs`), so the
//! heap cache forwards a stored tag to the next tag check and drops a store of a tag it knows.
//! Only `Copy` types are copied (the derived impls say so): an assignment of a type with drop
//! glue runs it natively, which a copy of registers would not.
//! Must not know: syntax; guest languages.

use std::marker::PhantomData;

use super::place::{JitEnum, Payload, PlaceTarget};
use super::types::{JitType, Stored};
use super::{Handle, Ptr};
use crate::jitcode::{Builder, FieldDescr, Kind, Op, Register, Value};

/// The most registers a struct or enum value may take in traced code (its tag included).
pub const MAX_VALUE_REGS: usize = 24;

/// Where the fields of a struct or enum live in the registers of its [`Val`]. Implemented by
/// `#[derive(JitLayout)]` for the types whose fields are all values traced code can hold.
#[diagnostic::on_unimplemented(
    message = "traced code cannot build a value of `{Self}`",
    label = "a struct or variant expression of type `{Self}`",
    note = "add `#[derive(meta_jit::hints::JitLayout)]` to `{Self}` (an enum also needs `#[repr(u8)]` or \
            `#[repr(C, u8)]`); every field must be a value traced code holds in registers"
)]
pub trait JitValue: Sized {
    /// Whether the value starts with an enum's tag register.
    const ENUM: bool;
    /// The kinds of the payload registers (every field of every variant, in declaration order;
    /// the tag excluded).
    fn value_kinds() -> Vec<Kind>;
    /// The first payload register and the number of registers of field `field` of `variant`
    /// (the variant is ignored for a struct).
    fn value_slot(variant: &str, field: &str) -> (usize, usize);
    /// The tag of `variant`, `None` for a struct.
    fn value_tag(variant: &str) -> Option<i64>;
}

/// A struct or enum value held in registers: for an enum its tag, then the registers of each
/// field of each variant (the registers of the variants other than the one it holds hold zeros
/// or stale values).
pub struct Val<T> {
    /// The tag register (enums only).
    pub tag: Option<Register>,
    regs: [Register; MAX_VALUE_REGS],
    n: u8,
    _t: PhantomData<fn() -> T>,
}
impl<T> Clone for Val<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Val<T> {}

const NO_REG: Register = Register {
    kind: Kind::Int,
    index: 0,
};

fn zero(b: &mut Builder, kind: Kind) -> Register {
    match kind {
        Kind::Int => b.const_int(0),
        Kind::Float => b.const_float(0.0),
        Kind::Ref => b.const_ref(0),
    }
}

fn pack(regs: &[Register], what: &str) -> ([Register; MAX_VALUE_REGS], u8) {
    assert!(
        regs.len() < MAX_VALUE_REGS,
        "a value of `{what}` takes {} registers in traced code; at most {} are supported (keep \
         such a value in memory and reach it through a reference)",
        regs.len(),
        MAX_VALUE_REGS - 1
    );
    let mut a = [NO_REG; MAX_VALUE_REGS];
    a[..regs.len()].copy_from_slice(regs);
    (a, regs.len() as u8)
}

impl<T: JitValue> Val<T> {
    fn from_parts(tag: Option<Register>, regs: &[Register]) -> Val<T> {
        let (regs, n) = pack(regs, std::any::type_name::<T>());
        Val {
            tag,
            regs,
            n,
            _t: PhantomData,
        }
    }
    /// The payload registers.
    pub fn payload_regs(&self) -> &[Register] {
        &self.regs[..usize::from(self.n)]
    }
    /// The handle of field `field` of `variant` (its registers, not a copy).
    pub fn field<F: JitType>(self, variant: &str, field: &str) -> F::Handle {
        let (s, n) = T::value_slot(variant, field);
        <F::Handle as Handle>::from_regs(&mut self.regs[s..s + n].iter().copied())
    }
    /// A value of `T` whose every register is a zero constant (the tag too).
    pub fn zeroed(b: &mut Builder) -> Val<T> {
        let tag = T::ENUM.then(|| b.const_int(0));
        let regs: Vec<Register> = T::value_kinds().into_iter().map(|k| zero(b, k)).collect();
        Val::from_parts(tag, &regs)
    }
}

impl<T: JitValue> Handle for Val<T> {
    fn fresh(b: &mut Builder) -> Self {
        let tag = T::ENUM.then(|| b.fresh(Kind::Int));
        let regs: Vec<Register> = T::value_kinds().into_iter().map(|k| b.fresh(k)).collect();
        Val::from_parts(tag, &regs)
    }
    fn assign(self, b: &mut Builder, src: Self) {
        for (dst, src) in self.regs(b).into_iter().zip(src.regs(b)) {
            if dst != src {
                b.emit(Op::Move { dst, src });
            }
        }
    }
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        self.tag
            .into_iter()
            .chain(self.payload_regs().iter().copied())
            .collect()
    }
    fn kinds() -> Vec<Kind> {
        let mut k = if T::ENUM { vec![Kind::Int] } else { vec![] };
        k.extend(T::value_kinds());
        k
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        let tag = T::ENUM.then(|| regs.next().expect("missing register"));
        let payload: Vec<Register> = T::value_kinds()
            .iter()
            .map(|_| regs.next().expect("missing register"))
            .collect();
        Val::from_parts(tag, &payload)
    }
}

/// A field of a struct value held in registers (`p.x` for a variable `p` holding a struct): a
/// place whose reads and writes are register moves.
pub struct RegPlace<F> {
    regs: [Register; MAX_VALUE_REGS],
    n: u8,
    _t: PhantomData<fn() -> F>,
}
impl<F> Clone for RegPlace<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F> Copy for RegPlace<F> {}

impl<F> RegPlace<F> {
    pub(crate) fn new(regs: &[Register]) -> RegPlace<F> {
        let (regs, n) = pack(regs, std::any::type_name::<F>());
        RegPlace {
            regs,
            n,
            _t: PhantomData,
        }
    }
    fn handle(self) -> F::Handle
    where
        F: JitType,
    {
        <F::Handle as Handle>::from_regs(&mut self.regs[..usize::from(self.n)].iter().copied())
    }
}

/// What `place.name` applies to: a place in memory (a [`Ptr`]) or a struct value in registers
/// ([`Val`], [`RegPlace`]). `P` is the type the field belongs to.
pub trait FieldBase<P: PlaceTarget> {
    /// The place of a field of type `F`.
    type Out<F>;
    /// The place of field `name`, whose address `proj` computes from a pointer to the struct.
    fn project<F>(
        self,
        b: &mut Builder,
        name: &'static str,
        proj: impl FnOnce(*const P::Struct) -> *const F,
    ) -> Self::Out<F>;
}

impl<P: PlaceTarget> FieldBase<P> for Ptr<P> {
    type Out<F> = Ptr<F>;
    fn project<F>(
        self,
        b: &mut Builder,
        name: &'static str,
        proj: impl FnOnce(*const P::Struct) -> *const F,
    ) -> Ptr<F> {
        super::place::field_of_place(b, self, name, proj)
    }
}

fn sub_place<S: JitValue, F>(regs: &[Register], name: &str) -> RegPlace<F> {
    let (s, n) = S::value_slot("", name);
    RegPlace::new(&regs[s..s + n])
}

impl<S: JitValue + PlaceTarget<Struct = S>> FieldBase<S> for Val<S> {
    type Out<F> = RegPlace<F>;
    fn project<F>(
        self,
        _b: &mut Builder,
        name: &'static str,
        _proj: impl FnOnce(*const S) -> *const F,
    ) -> RegPlace<F> {
        sub_place::<S, F>(self.payload_regs(), name)
    }
}

impl<S: JitValue + PlaceTarget<Struct = S>> FieldBase<S> for RegPlace<S> {
    type Out<F> = RegPlace<F>;
    fn project<F>(
        self,
        _b: &mut Builder,
        name: &'static str,
        _proj: impl FnOnce(*const S) -> *const F,
    ) -> RegPlace<F> {
        sub_place::<S, F>(&self.regs[..usize::from(self.n)], name)
    }
}

/// A place holding a `T`: in memory ([`Ptr`]) or in registers ([`RegPlace`]). Reads and writes
/// of places go through [`super::read`] and [`super::write`].
#[diagnostic::on_unimplemented(
    message = "`{T}` cannot be copied between memory and registers by traced code",
    label = "this place has type `{T}`",
    note = "traced code loads and stores integers, `bool`, `char`, `f64`, references, slices, `Gc<T>`, \
            `Option<Gc<T>>`, tuples, `Option`s and `Result`s of scalars, and `Copy` structs and enums \
            with `#[derive(JitLayout)]` whose fields are such values (an `Option` or `Result` of anything \
            else has no layout Rust defines: declare a `#[repr(C, u8)]` enum); a type that is not `Copy` \
            is not copied, since assigning it drops the old value natively: take a reference (`&place`), \
            match on it in place, or write it in a `#[dont_look_inside]` function"
)]
pub trait PlaceOf<T: Stored> {
    /// Reads the value.
    fn read_value(self, b: &mut Builder) -> T::Handle;
    /// Writes `v`.
    fn write_value(self, b: &mut Builder, v: T::Handle);
}

impl<T: Stored> PlaceOf<T> for Ptr<T> {
    fn read_value(self, b: &mut Builder) -> T::Handle {
        T::load(b, self)
    }
    fn write_value(self, b: &mut Builder, v: T::Handle) {
        if self.flags.immutable {
            panic!("write to field `{}` marked #[jit(immutable)]", self.field);
        }
        T::store(b, self, v)
    }
}

impl<T: Stored> PlaceOf<T> for RegPlace<T> {
    fn read_value(self, _b: &mut Builder) -> T::Handle {
        self.handle()
    }
    fn write_value(self, b: &mut Builder, v: T::Handle) {
        self.handle().assign(b, v)
    }
}

/// A struct or variant expression (`Value::Int(..)`, `Op::Nil`, `Point { .. }`): a value whose
/// tag is the variant's constant and whose registers are zero constants until
/// [`ctor_field`] sets the fields. `check` is never called: it makes rustc infer `T` from the
/// expression's path.
pub fn ctor<T: JitValue>(b: &mut Builder, variant: &str, _check: impl FnOnce(T) -> bool) -> Val<T> {
    let mut v = Val::<T>::zeroed(b);
    if let Some(t) = T::value_tag(variant) {
        v.tag = Some(b.const_int(t));
    }
    v
}

/// Field `field` of a struct or variant expression: the value's registers for the field become
/// `x`'s (no move is emitted). `extract` is never called: its result type is the field's.
pub fn ctor_field<T: JitValue, F: JitType>(
    b: &mut Builder,
    mut v: Val<T>,
    variant: &str,
    field: &str,
    _extract: impl FnOnce(T) -> F,
    x: F::Handle,
) -> Val<T> {
    let (s, n) = T::value_slot(variant, field);
    let regs = x.regs(b);
    assert_eq!(regs.len(), n, "field `{field}` of `{variant}`");
    v.regs[s..s + n].copy_from_slice(&regs);
    v
}

/// The value of a constant of a struct or enum type (`Op::Nil`): one constant register per
/// register of its handle.
pub fn const_value<T: JitType>(b: &mut Builder, v: T) -> T::Handle {
    let mut vals = Vec::new();
    v.to_values(&mut vals);
    let regs: Vec<Register> = vals
        .into_iter()
        .map(|v| match v {
            Value::Int(i) => b.const_int(i),
            Value::Float(f) => b.const_float(f),
            Value::Ref(r) => b.const_ref(r),
        })
        .collect();
    <T::Handle as Handle>::from_regs(&mut regs.into_iter())
}

/// The descriptor of the tag of an enum at place `p` (the one `match` reads it with).
pub fn tag_descr<E: JitEnum>(p: &Ptr<E>) -> FieldDescr {
    FieldDescr {
        name: format!("{}.tag", E::NAME),
        offset: p.offset,
        size: E::TAG_SIZE,
        signed: E::TAG_SIGNED,
        kind: Kind::Int,
        immutable: p.flags.immutable,
        quasi_immutable: p.flags.quasi_immutable,
        vable: p.flags.vable,
        length: false,
        // Tags of enums at distinct places are apart (`E.tag|PATH`); one of unseen place may
        // be any (`E.tag`).
        class: match p.origin.path() {
            Some(path) => format!("{}.tag|{path}", E::NAME),
            None => format!("{}.tag", E::NAME),
        },
    }
}

/// Emits the store of `tag` into the tag of the enum at `p`.
pub fn store_tag<E: JitEnum>(b: &mut Builder, p: Ptr<E>, tag: Register) {
    let descr = tag_descr(&p);
    match p.index {
        None => b.emit(Op::SetField {
            base: p.base,
            src: tag,
            descr: descr.into(),
        }),
        Some((index, item_size)) => b.emit(Op::SetArrayItem {
            base: p.base,
            index,
            src: tag,
            descr: crate::jitcode::ArrayDescr {
                item_size,
                item: descr,
            }
            .into(),
        }),
    }
}

/// The place of field `field` of `variant` in the enum at `p` (as `match` reaches it).
pub fn variant_field<E: JitEnum, F>(
    b: &mut Builder,
    p: Ptr<E>,
    variant: &str,
    field: &str,
) -> Ptr<F> {
    p.payload_of::<F>(b, variant, field)
}

/// Loads field `field` of `variant` of the enum at `p` into the registers of `v` (a derived
/// `Stored::load` calls it for each field, under the switch on the tag).
pub fn load_variant_field<E: JitEnum + JitValue, F: Stored>(
    b: &mut Builder,
    p: Ptr<E>,
    v: Val<E>,
    variant: &str,
    field: &str,
) {
    let fp = variant_field::<E, F>(b, p, variant, field);
    let x = F::load(b, fp);
    v.field::<F>(variant, field).assign(b, x);
}

/// Stores field `field` of `variant` from the registers of `v` into the enum at `p`.
pub fn store_variant_field<E: JitEnum + JitValue, F: Stored>(
    b: &mut Builder,
    p: Ptr<E>,
    v: Val<E>,
    variant: &str,
    field: &str,
) {
    let fp = variant_field::<E, F>(b, p, variant, field);
    F::store(b, fp, v.field::<F>(variant, field));
}

/// A fresh enum value whose payload registers are zeroed and whose tag is loaded from `p`: the
/// start of a derived `Stored::load` (the fields of the variant found are loaded next).
pub fn load_tag<E: JitEnum + JitValue>(b: &mut Builder, p: Ptr<E>) -> Val<E> {
    let v = Val::<E>::fresh(b);
    let z = Val::<E>::zeroed(b);
    for (&d, &s) in v.payload_regs().iter().zip(z.payload_regs()) {
        b.emit(Op::Move { dst: d, src: s });
    }
    let t = super::place::Scrutinee::discriminant(p, b);
    b.emit(Op::Move {
        dst: v.tag.expect("an enum's tag"),
        src: t.reg,
    });
    v
}

/// Emits `emit(b, variant)` for the variant whose tag `tag` holds: only that one when `tag` is a
/// constant of the jitcode (a variant expression), else under a `Switch` on it, one case per
/// variant of `variants`.
pub fn per_variant<E: JitEnum>(
    b: &mut Builder,
    tag: Register,
    variants: &[&str],
    mut emit: impl FnMut(&mut Builder, &str),
) {
    if let Some(t) = b.const_int_value(tag) {
        if let Some(v) = variants.iter().find(|v| E::variant_tag(v) == t) {
            emit(b, v);
        }
        return;
    }
    let end = b.new_label();
    let labels: Vec<_> = variants.iter().map(|_| b.new_label()).collect();
    let cases = variants
        .iter()
        .zip(&labels)
        .map(|(v, &l)| (E::variant_tag(v), l))
        .collect();
    b.switch(tag, cases, end);
    for (v, &l) in variants.iter().zip(&labels) {
        b.bind(l);
        emit(b, v);
        b.goto(end);
    }
    b.bind(end);
}

/// Stores into the enum at `p` the tag of `variant` (a constant) — the first half of a derived
/// `Stored::store` for that variant; the payload fields follow.
pub fn store_variant_tag<E: JitEnum>(b: &mut Builder, p: Ptr<E>, variant: &str) {
    let t = b.const_int(E::variant_tag(variant));
    store_tag(b, p, t);
}

/// Starts the runner values of an enum value of variant tag `tag` (a derived
/// `JitType::to_values`): the tag and a zero for every payload register. Returns where they
/// start; [`put_field`] then fills in the variant's fields.
pub fn start_values<E: JitValue>(out: &mut Vec<Value>, tag: i64) -> usize {
    let at = out.len();
    out.push(Value::Int(tag));
    out.extend(E::value_kinds().into_iter().map(|k| match k {
        Kind::Int => Value::Int(0),
        Kind::Float => Value::Float(0.0),
        Kind::Ref => Value::Ref(0),
    }));
    at
}

/// Writes the runner values of field `field` of `variant` (value `x`) into an enum's values
/// that [`start_values`] began at `at`.
pub fn put_field<E: JitValue, F: JitType>(
    out: &mut [Value],
    at: usize,
    variant: &str,
    field: &str,
    x: F,
) {
    let mut vals = Vec::new();
    x.to_values(&mut vals);
    let (s, n) = E::value_slot(variant, field);
    out[at + 1 + s..at + 1 + s + n].copy_from_slice(&vals);
}

/// Rebuilds field `field` of `variant` from an enum's payload values `rest` (a derived
/// `JitType::from_values`).
///
/// # Safety
/// `rest` holds the payload values of a live value of `E` of that variant.
pub unsafe fn take_field<E: JitValue, F: JitType>(rest: &[Value], variant: &str, field: &str) -> F {
    let (s, n) = E::value_slot(variant, field);
    // SAFETY: forwarded contract.
    unsafe { F::from_values(&mut rest[s..s + n].iter().copied()) }
}

impl<E: JitEnum + JitValue> super::place::Scrutinee for Val<E> {
    fn discriminant(self, _b: &mut Builder) -> super::Reg<i64> {
        super::Reg::new(self.tag.expect("an enum's tag"))
    }
}

impl<E: JitEnum + JitValue> super::place::VariantKey for Val<E> {
    type Value = E;
    fn variant_key(&self, name: &str) -> i64 {
        E::variant_tag(name)
    }
}

impl<E: JitEnum + JitValue> super::place::PathKey<E> for Val<E> {
    fn path_key(&self, name: &str, _v: E) -> i64 {
        E::variant_tag(name)
    }
}

impl<E: JitEnum + JitValue> Payload for Val<E> {
    type Field<F> = RegPlace<F>;
    fn payload_of<F>(self, _b: &mut Builder, variant: &str, field: &str) -> RegPlace<F> {
        let (s, n) = E::value_slot(variant, field);
        RegPlace::new(&self.payload_regs()[s..s + n])
    }
}

impl<F: JitType> super::place::SubScrutinee for RegPlace<F>
where
    F::Handle: super::place::Scrutinee,
{
    type S = F::Handle;
    fn sub_scrutinee(self, _b: &mut Builder) -> F::Handle {
        self.handle()
    }
}

/// What a binding in a pattern on a value that is not a place gets: a reference to the field of
/// an enum in memory, the field's value for a value in registers.
pub trait FieldBinding {
    /// The bound handle.
    type Bound: Handle;
    /// The binding's value.
    fn bound(self) -> Self::Bound;
}
impl<F> FieldBinding for Ptr<F> {
    type Bound = Ptr<F>;
    fn bound(self) -> Ptr<F> {
        self
    }
}
impl<F: super::types::Scalar> FieldBinding for super::Reg<F> {
    type Bound = super::Reg<F>;
    fn bound(self) -> super::Reg<F> {
        self
    }
}
impl<F: JitType> FieldBinding for RegPlace<F> {
    type Bound = F::Handle;
    fn bound(self) -> F::Handle {
        self.handle()
    }
}

/// A binding of a payload field in a pattern matched through a reference or on a value.
pub fn bind_field<P: FieldBinding>(_b: &mut Builder, p: P) -> P::Bound {
    p.bound()
}
