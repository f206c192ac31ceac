//! `Option<Gc<T>>` in traced code: one reference register that is null for `None`, in
//! registers and in memory alike.
//!
//! Rust guarantees this layout: `Gc<T>` is a `#[repr(transparent)]` non-null pointer, so
//! `Option<Gc<T>>` has the size of a pointer and `None` is the null pointer (the "null pointer
//! optimization" the language reference promises for `Option` of a non-null pointer). That is
//! why it, unlike `Option<i64>`, can be read and written in memory by traced code: an
//! interpreter's object can hold an optional link (`next: Option<Gc<Node>>`, a metatable).
//!
//! Owns: the handle [`OptGc`] and its construction (`Some(g)`, `None`), `match` on it, `?`,
//! its loads and stores. Must not know: syntax, or guest languages.

use std::marker::PhantomData;

use super::control::ConstValue;
use super::place::{CopyScrutinee, MatchTarget, PathKey, Payload, Scrutinee, VariantKey};
use super::sum::{FromResidual, OptionH, TryHandle};
use super::types::{JitType, Scalar, ShimArg, ShimRet, Stored};
use super::value::RegPlace;
use super::{Handle, Ptr, Reg};
use crate::gc::Gc;
use crate::jitcode::{Builder, Kind, Op, Register, Value};

/// An `Option<Gc<T>>` in one reference register: the object's address, or 0 for `None`.
pub struct OptGc<T> {
    /// The register.
    pub reg: Register,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for OptGc<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for OptGc<T> {}

impl<T> OptGc<T> {
    /// Wraps a reference register (0 stands for `None`).
    pub fn new(reg: Register) -> OptGc<T> {
        OptGc {
            reg,
            _t: PhantomData,
        }
    }

    /// `None`: the null constant.
    fn null(b: &mut Builder) -> OptGc<T> {
        OptGc::new(b.const_ref(0))
    }

    /// 1 when `Some`: the register compared with null.
    fn non_null(self, b: &mut Builder) -> Register {
        let null = b.const_ref(0);
        let dst = b.fresh(Kind::Int);
        b.emit(Op::RefCompare {
            eq: false,
            dst,
            a: self.reg,
            b: null,
        });
        dst
    }
}

impl<T> Handle for OptGc<T> {
    fn fresh(b: &mut Builder) -> Self {
        OptGc::new(b.fresh(Kind::Ref))
    }
    fn assign(self, b: &mut Builder, src: Self) {
        if self.reg != src.reg {
            b.emit(Op::Move {
                dst: self.reg,
                src: src.reg,
            });
        }
    }
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        vec![self.reg]
    }
    fn kinds() -> Vec<Kind> {
        vec![Kind::Ref]
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        OptGc::new(regs.next().expect("missing register"))
    }
}

impl<T: 'static> JitType for Option<Gc<T>> {
    type Handle = OptGc<T>;
    fn to_values(self, out: &mut Vec<Value>) {
        out.push(Value::Ref(self.map_or(0, |g| g.as_ptr() as usize)));
    }
    unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
        let a = vals.next().expect("missing value").addr();
        // SAFETY: by the contract, a non-zero `a` is the address of a live object of the heap.
        (a != 0).then(|| unsafe { Gc::from_addr(a) })
    }
}

impl<T: 'static> Stored for Option<Gc<T>> {
    fn load(b: &mut Builder, p: Ptr<Self>) -> OptGc<T> {
        // Stored like a reference that may be null.
        OptGc::new(<&'static T as Stored>::load(b, p.cast::<&'static T>()).base)
    }
    fn store(b: &mut Builder, p: Ptr<Self>, v: OptGc<T>) {
        <&'static T as Stored>::store(b, p.cast::<&'static T>(), Ptr::new(v.reg))
    }
}

impl<T: 'static> ConstValue for Option<Gc<T>> {
    fn constant(self, b: &mut Builder) -> OptGc<T> {
        OptGc::new(b.const_ref(self.map_or(0, |g| g.as_ptr() as usize)))
    }
}

impl<T: 'static> ShimArg for Option<Gc<T>> {
    type Abi = usize;
    const KIND: Kind = Kind::Ref;
    #[inline(always)]
    unsafe fn from_abi(v: usize) -> Self {
        // SAFETY: a non-zero `v` is the address of a live object of the heap (the contract).
        (v != 0).then(|| unsafe { Gc::from_addr(v) })
    }
    #[inline(always)]
    fn to_abi(self) -> usize {
        self.map_or(0, |g| g.as_ptr() as usize)
    }
}

impl<T: 'static> ShimRet for Option<Gc<T>> {
    type Abi = usize;
    const KIND: Option<Kind> = Some(Kind::Ref);
    #[inline(always)]
    fn to_abi(self) -> usize {
        self.map_or(0, |g| g.as_ptr() as usize)
    }
    fn abi_value(v: usize) -> Option<Value> {
        Some(Value::Ref(v))
    }
}

impl<T: 'static> MatchTarget for Option<Gc<T>> {
    type Scrutinee = OptGc<T>;
    fn scrutinee(b: &mut Builder, p: Ptr<Self>) -> OptGc<T> {
        <Self as Stored>::load(b, p)
    }
}

impl<T> Scrutinee for OptGc<T> {
    fn discriminant(self, b: &mut Builder) -> Reg<i64> {
        Reg::new(self.non_null(b))
    }
}

impl<T> CopyScrutinee for OptGc<T> {}

impl<T: 'static> VariantKey for OptGc<T> {
    type Value = Option<Gc<T>>;
    fn variant_key(&self, name: &str) -> i64 {
        match name {
            "Some" => 1,
            "None" => 0,
            other => panic!("`Option` has no variant `{other}`"),
        }
    }
}

impl<T: 'static> PathKey<Option<Gc<T>>> for OptGc<T> {
    fn path_key(&self, _name: &str, v: Option<Gc<T>>) -> i64 {
        i64::from(v.is_some())
    }
}

impl<T> Payload for OptGc<T> {
    /// `Some(g)` binds the object: the same register, now known non-null.
    type Field<F> = RegPlace<F>;
    fn payload_of<F>(self, _b: &mut Builder, _variant: &str, _field: &str) -> RegPlace<F> {
        RegPlace::new(&[self.reg])
    }
}

impl<T> TryHandle for OptGc<T> {
    type Output = Ptr<T>;
    fn is_continue(self, b: &mut Builder) -> Reg<bool> {
        Reg::new(self.non_null(b))
    }
    fn output(self) -> Ptr<T> {
        Ptr::new(self.reg)
    }
}

impl<T, U> FromResidual<OptGc<U>> for OptGc<T> {
    fn from_residual(b: &mut Builder, _r: OptGc<U>) -> Self {
        OptGc::null(b)
    }
}
impl<T, U: Scalar> FromResidual<OptionH<U>> for OptGc<T> {
    fn from_residual(b: &mut Builder, _r: OptionH<U>) -> Self {
        OptGc::null(b)
    }
}
impl<T: Scalar, U> FromResidual<OptGc<U>> for OptionH<T> {
    fn from_residual(b: &mut Builder, _r: OptGc<U>) -> Self {
        super::sum::none_scalar(b)
    }
}

/// What `Some(x)` wraps: a scalar (an [`OptionH`]) or an object (an [`OptGc`]).
#[diagnostic::on_unimplemented(
    message = "`Some(..)` in traced code wraps a scalar or a `Gc<T>`",
    label = "not a scalar or a `Gc<T>`"
)]
pub trait SomeOf: Handle {
    /// The `Option`'s handle.
    type Opt: Handle;
    /// `Some(self)`.
    fn wrap_some(self, b: &mut Builder) -> Self::Opt;
}
impl<T: Scalar> SomeOf for Reg<T> {
    type Opt = OptionH<T>;
    fn wrap_some(self, b: &mut Builder) -> OptionH<T> {
        super::sum::some_scalar(b, self)
    }
}
impl<T> SomeOf for Ptr<T> {
    type Opt = OptGc<T>;
    fn wrap_some(self, b: &mut Builder) -> OptGc<T> {
        OptGc::new(self.materialize(b))
    }
}

/// `Some(x)`.
pub fn some<H: SomeOf>(b: &mut Builder, x: H) -> H::Opt {
    x.wrap_some(b)
}

/// The handles `None` can be: an `Option` of a scalar or of a `Gc`.
#[diagnostic::on_unimplemented(
    message = "`None` in traced code is an `Option` of a scalar or of a `Gc<T>`",
    label = "this `None`"
)]
pub trait NoneOf: Handle {
    /// `None`.
    fn none(b: &mut Builder) -> Self;
}
impl<T: Scalar> NoneOf for OptionH<T> {
    fn none(b: &mut Builder) -> Self {
        super::sum::none_scalar(b)
    }
}
impl<T> NoneOf for OptGc<T> {
    fn none(b: &mut Builder) -> Self {
        OptGc::null(b)
    }
}

/// `None`: its handle is the one the place or value it goes to expects.
pub fn none<H: NoneOf>(b: &mut Builder) -> H {
    H::none(b)
}
