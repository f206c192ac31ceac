//! `Option` and `Result` of scalars as values in registers: construction (`Some(x)`, `None`,
//! `Ok(x)`, `Err(e)`), `match` on them, and the `?` operator (an early return of the residual).
//!
//! Owns: the handles [`OptionH`] (tag and value) and [`ResultH`] (tag, ok value, error value),
//! and the traits the lowered `?` uses ([`TryHandle`], [`FromResidual`]).
//! Must not know: syntax. These values live in registers only; an `Option` stored in memory has
//! no defined layout and is not supported (but for `Option<Gc<T>>`, a nullable reference: see
//! [`super::nullable`]).

use std::marker::PhantomData;

use super::control::ConstValue;
use super::place::{Payload, Scrutinee, VariantKey};
use super::types::{JitType, Scalar};
use super::{Handle, Reg};
use crate::jitcode::{Builder, Kind, Op, Register, Value};

fn zero(b: &mut Builder, kind: Kind) -> Register {
    match kind {
        Kind::Int => b.const_int(0),
        Kind::Float => b.const_float(0.0),
        Kind::Ref => b.const_ref(0),
    }
}

fn mov(b: &mut Builder, dst: Register, src: Register) {
    if dst != src {
        b.emit(Op::Move { dst, src });
    }
}

/// An `Option<T>` in registers: `tag` is 1 for `Some`, and `val` holds the value then.
pub struct OptionH<T> {
    /// 0 (`None`) or 1 (`Some`), an int register.
    pub tag: Register,
    /// The value when `Some`.
    pub val: Register,
    _t: PhantomData<fn() -> T>,
}
impl<T> Clone for OptionH<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for OptionH<T> {}

/// A `Result<T, E>` in registers: `tag` is 1 for `Ok`.
pub struct ResultH<T, E> {
    /// 0 (`Err`) or 1 (`Ok`), an int register.
    pub tag: Register,
    /// The value when `Ok`.
    pub ok: Register,
    /// The error when `Err`.
    pub err: Register,
    _t: PhantomData<fn() -> (T, E)>,
}
impl<T, E> Clone for ResultH<T, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, E> Copy for ResultH<T, E> {}

impl<T: Scalar> Handle for OptionH<T> {
    fn fresh(b: &mut Builder) -> Self {
        OptionH {
            tag: b.fresh(Kind::Int),
            val: b.fresh(T::KIND),
            _t: PhantomData,
        }
    }
    fn assign(self, b: &mut Builder, src: Self) {
        mov(b, self.tag, src.tag);
        mov(b, self.val, src.val);
    }
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        vec![self.tag, self.val]
    }
    fn kinds() -> Vec<Kind> {
        vec![Kind::Int, T::KIND]
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        let tag = regs.next().expect("missing register");
        OptionH {
            tag,
            val: regs.next().expect("missing register"),
            _t: PhantomData,
        }
    }
}

impl<T: Scalar, E: Scalar> Handle for ResultH<T, E> {
    fn fresh(b: &mut Builder) -> Self {
        ResultH {
            tag: b.fresh(Kind::Int),
            ok: b.fresh(T::KIND),
            err: b.fresh(E::KIND),
            _t: PhantomData,
        }
    }
    fn assign(self, b: &mut Builder, src: Self) {
        mov(b, self.tag, src.tag);
        mov(b, self.ok, src.ok);
        mov(b, self.err, src.err);
    }
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        vec![self.tag, self.ok, self.err]
    }
    fn kinds() -> Vec<Kind> {
        vec![Kind::Int, T::KIND, E::KIND]
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        let tag = regs.next().expect("missing register");
        let ok = regs.next().expect("missing register");
        ResultH {
            tag,
            ok,
            err: regs.next().expect("missing register"),
            _t: PhantomData,
        }
    }
}

/// The runner value zero of a register kind (the payload of a variant not held).
pub(super) fn zero_value(kind: Kind) -> Value {
    match kind {
        Kind::Int => Value::Int(0),
        Kind::Float => Value::Float(0.0),
        Kind::Ref => Value::Ref(0),
    }
}

impl<T: Scalar> JitType for Option<T> {
    type Handle = OptionH<T>;
    fn to_values(self, out: &mut Vec<Value>) {
        out.push(Value::Int(i64::from(self.is_some())));
        out.push(self.map_or(zero_value(T::KIND), Scalar::to_value));
    }
    unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
        let tag = vals.next().expect("missing value").int();
        let v = vals.next().expect("missing value");
        // SAFETY: when the tag says `Some`, the value is a `T` (the contract).
        (tag != 0).then(|| unsafe { T::from_value(v) })
    }
}

impl<T: Scalar, E: Scalar> JitType for Result<T, E> {
    type Handle = ResultH<T, E>;
    fn to_values(self, out: &mut Vec<Value>) {
        out.push(Value::Int(i64::from(self.is_ok())));
        match self {
            Ok(v) => {
                out.push(v.to_value());
                out.push(zero_value(E::KIND));
            }
            Err(e) => {
                out.push(zero_value(T::KIND));
                out.push(e.to_value());
            }
        }
    }
    unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
        let tag = vals.next().expect("missing value").int();
        let ok = vals.next().expect("missing value");
        let err = vals.next().expect("missing value");
        // SAFETY: the tag says which of the two values is valid (the contract).
        unsafe {
            if tag != 0 {
                Ok(T::from_value(ok))
            } else {
                Err(E::from_value(err))
            }
        }
    }
}

impl<T: Scalar> ConstValue for Option<T> {
    fn constant(self, b: &mut Builder) -> OptionH<T> {
        let tag = b.const_int(i64::from(self.is_some()));
        let val = match self {
            Some(v) => super::ops::konst(b, v).reg,
            None => zero(b, T::KIND),
        };
        OptionH {
            tag,
            val,
            _t: PhantomData,
        }
    }
}

/// `Some(x)` of a scalar (`Some(x)` in traced code calls [`super::nullable::some`]).
pub fn some_scalar<T: Scalar>(b: &mut Builder, x: Reg<T>) -> OptionH<T> {
    OptionH {
        tag: b.const_int(1),
        val: x.reg,
        _t: PhantomData,
    }
}
/// `None` of a scalar.
pub fn none_scalar<T: Scalar>(b: &mut Builder) -> OptionH<T> {
    OptionH {
        tag: b.const_int(0),
        val: zero(b, T::KIND),
        _t: PhantomData,
    }
}
/// `Some(val)` when `tag` is true, else `None` (the built-in `checked_*` methods).
pub fn option_from<T: Scalar>(tag: Reg<bool>, val: Reg<T>) -> OptionH<T> {
    OptionH {
        tag: tag.reg,
        val: val.reg,
        _t: PhantomData,
    }
}
/// `Ok(x)`.
pub fn ok<T: Scalar, E: Scalar>(b: &mut Builder, x: Reg<T>) -> ResultH<T, E> {
    ResultH {
        tag: b.const_int(1),
        ok: x.reg,
        err: zero(b, E::KIND),
        _t: PhantomData,
    }
}
/// `Err(e)`.
pub fn err<T: Scalar, E: Scalar>(b: &mut Builder, e: Reg<E>) -> ResultH<T, E> {
    ResultH {
        tag: b.const_int(0),
        ok: zero(b, T::KIND),
        err: e.reg,
        _t: PhantomData,
    }
}

impl<T: Scalar> Scrutinee for OptionH<T> {
    fn discriminant(self, _b: &mut Builder) -> Reg<i64> {
        Reg::new(self.tag)
    }
}
impl<T: Scalar, E: Scalar> Scrutinee for ResultH<T, E> {
    fn discriminant(self, _b: &mut Builder) -> Reg<i64> {
        Reg::new(self.tag)
    }
}
impl<T: Scalar> VariantKey for OptionH<T> {
    type Value = Option<T>;
    fn variant_key(&self, name: &str) -> i64 {
        match name {
            "Some" => 1,
            "None" => 0,
            other => panic!("`Option` has no variant `{other}`"),
        }
    }
}
impl<T: Scalar, E: Scalar> VariantKey for ResultH<T, E> {
    type Value = Result<T, E>;
    fn variant_key(&self, name: &str) -> i64 {
        match name {
            "Ok" => 1,
            "Err" => 0,
            other => panic!("`Result` has no variant `{other}`"),
        }
    }
}
impl<T: Scalar> Payload for OptionH<T> {
    type Field<F> = Reg<F>;
    fn payload_of<F>(self, _b: &mut Builder, _variant: &str, _field: &str) -> Reg<F> {
        Reg::new(self.val)
    }
}
impl<T: Scalar, E: Scalar> Payload for ResultH<T, E> {
    type Field<F> = Reg<F>;
    fn payload_of<F>(self, _b: &mut Builder, variant: &str, _field: &str) -> Reg<F> {
        Reg::new(if variant == "Ok" { self.ok } else { self.err })
    }
}

/// What `?` applies to.
#[diagnostic::on_unimplemented(
    message = "the `?` operator in traced code applies to `Option` and `Result` of scalars",
    label = "`?` on a value of this kind"
)]
pub trait TryHandle: Handle {
    /// The value `?` evaluates to.
    type Output: Handle;
    /// 1 if `?` continues (`Some`/`Ok`).
    fn is_continue(self, b: &mut Builder) -> Reg<bool>;
    /// The continued value.
    fn output(self) -> Self::Output;
}
impl<T: Scalar> TryHandle for OptionH<T> {
    type Output = Reg<T>;
    fn is_continue(self, _b: &mut Builder) -> Reg<bool> {
        Reg::new(self.tag)
    }
    fn output(self) -> Reg<T> {
        Reg::new(self.val)
    }
}
impl<T: Scalar, E: Scalar> TryHandle for ResultH<T, E> {
    type Output = Reg<T>;
    fn is_continue(self, _b: &mut Builder) -> Reg<bool> {
        Reg::new(self.tag)
    }
    fn output(self) -> Reg<T> {
        Reg::new(self.ok)
    }
}

/// The function's return value built from what `?` short-circuits on.
#[diagnostic::on_unimplemented(
    message = "`?` on `{R}` cannot return early from this function in traced code",
    note = "the function must return `Option` (for `?` on an `Option`) or a `Result` with the same error type"
)]
pub trait FromResidual<R> {
    /// The early return value.
    fn from_residual(b: &mut Builder, r: R) -> Self;
}
impl<T: Scalar, U: Scalar> FromResidual<OptionH<U>> for OptionH<T> {
    fn from_residual(b: &mut Builder, _r: OptionH<U>) -> Self {
        none_scalar(b)
    }
}
impl<T: Scalar, U: Scalar, E: Scalar> FromResidual<ResultH<U, E>> for ResultH<T, E> {
    fn from_residual(b: &mut Builder, r: ResultH<U, E>) -> Self {
        ResultH {
            tag: b.const_int(0),
            ok: zero(b, T::KIND),
            err: r.err,
            _t: PhantomData,
        }
    }
}

/// `?`: whether to continue.
pub fn try_continue<H: TryHandle>(b: &mut Builder, h: H) -> Reg<bool> {
    h.is_continue(b)
}
/// `?`: the continued value.
pub fn try_output<H: TryHandle>(h: H) -> H::Output {
    h.output()
}
/// `?`: the early return value.
pub fn try_residual<R: Handle, H: FromResidual<R>>(b: &mut Builder, r: R) -> H {
    H::from_residual(b, r)
}

impl<T: Scalar> super::place::PathKey<Option<T>> for OptionH<T> {
    fn path_key(&self, _name: &str, v: Option<T>) -> i64 {
        i64::from(v.is_some())
    }
}
