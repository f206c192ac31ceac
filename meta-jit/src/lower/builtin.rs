//! Methods of standard types that traced code may call: on integers `min`, `max`, `abs`,
//! `checked_*`, `wrapping_*`, `saturating_*`, `pow`, `count_ones`, `leading_zeros` and their
//! kin; on `f64` `sqrt`, `floor`, `min`, `max`, `to_bits`, `is_nan` and their kin (and
//! `f64::from_bits` as a path call, see [`prims`]); `len` and `is_empty` on anything indexable;
//! `get`, `set` and `replace` on a `Cell` (see [`super::cell`], re-exported here); `is_some`
//! and `is_none` on an `Option` of a scalar or a `Gc`, `is_ok` and `is_err` on a `Result`.
//! Lowered code imports these traits, so `x.wrapping_add(y)` resolves to them by ordinary method
//! lookup on the handle. Those jitcode has no op for are elidable calls of the shims of
//! [`super::builtin_ops`].
//!
//! Owns: this list; it grows on demand. A method not found here nor in a `#[jit::methods]`
//! trait is a compile error at the call.
//! Must not know: syntax.
#![deny(unsafe_code)]

use super::builtin_ops::{self as bo, FloatOp, IntOp};
use super::ops::{self, Integer};
use super::place::{self, Indexable};
use super::sum::{option_from, OptionH, TryHandle};
use super::types::Stored;
use super::{Ptr, Reg};
use crate::jitcode::{Builder, IntBinOp};

pub use super::cell::CellMethods;

/// Integer methods on an integer handle or place (by value: handles are `Copy`, and the
/// names are Rust's).
#[allow(clippy::wrong_self_convention)]
pub trait IntMethods<T: Integer> {
    /// The value.
    fn value(self, b: &mut Builder) -> Reg<T>;
    /// `x.wrapping_add(y)`.
    fn wrapping_add(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        let x = self.value(b);
        ops::wrapping(b, IntBinOp::Add, x, y)
    }
    /// `x.wrapping_sub(y)`.
    fn wrapping_sub(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        let x = self.value(b);
        ops::wrapping(b, IntBinOp::Sub, x, y)
    }
    /// `x.wrapping_mul(y)`.
    fn wrapping_mul(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        let x = self.value(b);
        ops::wrapping(b, IntBinOp::Mul, x, y)
    }
    /// `x.min(y)`.
    fn min(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::Min, y)
    }
    /// `x.max(y)`.
    fn max(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::Max, y)
    }
    /// `x.abs_diff(y)` (same type: the unsigned counterpart's values are the same bits).
    fn abs_diff(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::AbsDiff, y)
    }
    /// `x.abs()` (wraps at the minimum, as release builds do).
    fn abs(self, b: &mut Builder) -> Reg<T>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::WrappingAbs)
    }
    /// `x.wrapping_abs()`.
    fn wrapping_abs(self, b: &mut Builder) -> Reg<T>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::WrappingAbs)
    }
    /// `x.wrapping_neg()`.
    fn wrapping_neg(self, b: &mut Builder) -> Reg<T>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::WrappingNeg)
    }
    /// `x.signum()`.
    fn signum(self, b: &mut Builder) -> Reg<T>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::Signum)
    }
    /// `x.swap_bytes()`.
    fn swap_bytes(self, b: &mut Builder) -> Reg<T>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::SwapBytes)
    }
    /// `x.is_positive()`.
    fn is_positive(self, b: &mut Builder) -> Reg<bool>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::IsPositive)
    }
    /// `x.is_negative()`.
    fn is_negative(self, b: &mut Builder) -> Reg<bool>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::IsNegative)
    }
    /// `x.is_power_of_two()`.
    fn is_power_of_two(self, b: &mut Builder) -> Reg<bool>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::IsPowerOfTwo)
    }
    /// `x.count_ones()`.
    fn count_ones(self, b: &mut Builder) -> Reg<u32>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::CountOnes)
    }
    /// `x.count_zeros()`.
    fn count_zeros(self, b: &mut Builder) -> Reg<u32>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::CountZeros)
    }
    /// `x.leading_zeros()`.
    fn leading_zeros(self, b: &mut Builder) -> Reg<u32>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::LeadingZeros)
    }
    /// `x.trailing_zeros()`.
    fn trailing_zeros(self, b: &mut Builder) -> Reg<u32>
    where
        Self: Sized,
    {
        int1(self, b, IntOp::TrailingZeros)
    }
    /// `x.pow(e)` (wraps on overflow, as release builds do).
    fn pow(self, b: &mut Builder, e: Reg<u32>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::WrappingPow, e)
    }
    /// `x.wrapping_pow(e)`.
    fn wrapping_pow(self, b: &mut Builder, e: Reg<u32>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::WrappingPow, e)
    }
    /// `x.saturating_pow(e)`.
    fn saturating_pow(self, b: &mut Builder, e: Reg<u32>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::SaturatingPow, e)
    }
    /// `x.rotate_left(n)`.
    fn rotate_left(self, b: &mut Builder, n: Reg<u32>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::RotateLeft, n)
    }
    /// `x.rotate_right(n)`.
    fn rotate_right(self, b: &mut Builder, n: Reg<u32>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::RotateRight, n)
    }
    /// `x.saturating_add(y)`.
    fn saturating_add(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::SaturatingAdd, y)
    }
    /// `x.saturating_sub(y)`.
    fn saturating_sub(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::SaturatingSub, y)
    }
    /// `x.saturating_mul(y)`.
    fn saturating_mul(self, b: &mut Builder, y: Reg<T>) -> Reg<T>
    where
        Self: Sized,
    {
        int2(self, b, IntOp::SaturatingMul, y)
    }
    /// `x.checked_add(y)`.
    fn checked_add(self, b: &mut Builder, y: Reg<T>) -> OptionH<T>
    where
        Self: Sized,
    {
        checked(self, b, IntOp::CheckedAddOk, IntOp::CheckedAdd, y)
    }
    /// `x.checked_sub(y)`.
    fn checked_sub(self, b: &mut Builder, y: Reg<T>) -> OptionH<T>
    where
        Self: Sized,
    {
        checked(self, b, IntOp::CheckedSubOk, IntOp::CheckedSub, y)
    }
    /// `x.checked_mul(y)`.
    fn checked_mul(self, b: &mut Builder, y: Reg<T>) -> OptionH<T>
    where
        Self: Sized,
    {
        checked(self, b, IntOp::CheckedMulOk, IntOp::CheckedMul, y)
    }
    /// `x.checked_div(y)`.
    fn checked_div(self, b: &mut Builder, y: Reg<T>) -> OptionH<T>
    where
        Self: Sized,
    {
        checked(self, b, IntOp::CheckedDivOk, IntOp::CheckedDiv, y)
    }
    /// `x.checked_rem(y)`.
    fn checked_rem(self, b: &mut Builder, y: Reg<T>) -> OptionH<T>
    where
        Self: Sized,
    {
        checked(self, b, IntOp::CheckedRemOk, IntOp::CheckedRem, y)
    }
    /// `x.checked_pow(e)`.
    fn checked_pow(self, b: &mut Builder, e: Reg<u32>) -> OptionH<T>
    where
        Self: Sized,
    {
        checked(self, b, IntOp::CheckedPowOk, IntOp::CheckedPow, e)
    }
    /// `x.checked_neg()`.
    fn checked_neg(self, b: &mut Builder) -> OptionH<T>
    where
        Self: Sized,
    {
        let z = ops::konst(b, 0i64);
        checked(self, b, IntOp::CheckedNegOk, IntOp::CheckedNeg, z)
    }
    /// `x.checked_abs()`.
    fn checked_abs(self, b: &mut Builder) -> OptionH<T>
    where
        Self: Sized,
    {
        let z = ops::konst(b, 0i64);
        checked(self, b, IntOp::CheckedAbsOk, IntOp::CheckedAbs, z)
    }
}

fn int_ty<T: Integer>() -> crate::jitcode::IntTy {
    T::INT.expect("an integer type")
}

fn int1<T: Integer, R, M: IntMethods<T>>(m: M, b: &mut Builder, op: IntOp) -> Reg<R>
where
    Reg<R>: super::Handle,
{
    let x = m.value(b);
    bo::int(b, op, int_ty::<T>(), x, x)
}

fn int2<T: Integer, U, M: IntMethods<T>>(m: M, b: &mut Builder, op: IntOp, y: Reg<U>) -> Reg<T> {
    let x = m.value(b);
    bo::int(b, op, int_ty::<T>(), x, y)
}

fn checked<T: Integer, U, M: IntMethods<T>>(
    m: M,
    b: &mut Builder,
    ok: IntOp,
    val: IntOp,
    y: Reg<U>,
) -> OptionH<T> {
    let x = m.value(b);
    let tag: Reg<bool> = bo::int(b, ok, int_ty::<T>(), x, y);
    let v: Reg<T> = bo::int(b, val, int_ty::<T>(), x, y);
    option_from(tag, v)
}
impl<T: Integer> IntMethods<T> for Reg<T> {
    fn value(self, _b: &mut Builder) -> Reg<T> {
        self
    }
}
impl<T: Integer + Stored<Handle = Reg<T>>> IntMethods<T> for Ptr<T> {
    fn value(self, b: &mut Builder) -> Reg<T> {
        place::read(b, self)
    }
}

/// Float methods on an `f64` handle or place.
#[allow(clippy::wrong_self_convention)]
pub trait FloatMethods: Sized {
    /// The value.
    fn value(self, b: &mut Builder) -> Reg<f64>;
    /// `x.abs()`.
    fn abs(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        ops::float_abs(b, x)
    }
    /// `x.sqrt()`.
    fn sqrt(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Sqrt, x, x)
    }
    /// `x.floor()`.
    fn floor(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Floor, x, x)
    }
    /// `x.ceil()`.
    fn ceil(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Ceil, x, x)
    }
    /// `x.round()`.
    fn round(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Round, x, x)
    }
    /// `x.trunc()`.
    fn trunc(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Trunc, x, x)
    }
    /// `x.fract()`.
    fn fract(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Fract, x, x)
    }
    /// `x.signum()`.
    fn signum(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Signum, x, x)
    }
    /// `x.exp()`.
    fn exp(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Exp, x, x)
    }
    /// `x.ln()`.
    fn ln(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Ln, x, x)
    }
    /// `x.log2()`.
    fn log2(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Log2, x, x)
    }
    /// `x.log10()`.
    fn log10(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Log10, x, x)
    }
    /// `x.sin()`.
    fn sin(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Sin, x, x)
    }
    /// `x.cos()`.
    fn cos(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Cos, x, x)
    }
    /// `x.tan()`.
    fn tan(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Tan, x, x)
    }
    /// `x.recip()`.
    fn recip(self, b: &mut Builder) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Recip, x, x)
    }
    /// `x.min(y)`.
    fn min(self, b: &mut Builder, y: Reg<f64>) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Min, x, y)
    }
    /// `x.max(y)`.
    fn max(self, b: &mut Builder, y: Reg<f64>) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Max, x, y)
    }
    /// `x.powf(y)`.
    fn powf(self, b: &mut Builder, y: Reg<f64>) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Powf, x, y)
    }
    /// `x.copysign(y)`.
    fn copysign(self, b: &mut Builder, y: Reg<f64>) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Copysign, x, y)
    }
    /// `x.atan2(y)`.
    fn atan2(self, b: &mut Builder, y: Reg<f64>) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Atan2, x, y)
    }
    /// `x.hypot(y)`.
    fn hypot(self, b: &mut Builder, y: Reg<f64>) -> Reg<f64> {
        let x = self.value(b);
        bo::float(b, FloatOp::Hypot, x, y)
    }
    /// `x.powi(n)`.
    fn powi(self, b: &mut Builder, n: Reg<i32>) -> Reg<f64> {
        let x = self.value(b);
        let n: Reg<f64> = ops::cast(b, n);
        bo::float(b, FloatOp::Powi, x, n)
    }
    /// `x.to_bits()`.
    fn to_bits(self, b: &mut Builder) -> Reg<u64> {
        let x = self.value(b);
        bo::float_int(b, FloatOp::ToBits, x)
    }
    /// `x.is_nan()`.
    fn is_nan(self, b: &mut Builder) -> Reg<bool> {
        let x = self.value(b);
        bo::float_int(b, FloatOp::IsNan, x)
    }
    /// `x.is_finite()`.
    fn is_finite(self, b: &mut Builder) -> Reg<bool> {
        let x = self.value(b);
        bo::float_int(b, FloatOp::IsFinite, x)
    }
    /// `x.is_infinite()`.
    fn is_infinite(self, b: &mut Builder) -> Reg<bool> {
        let x = self.value(b);
        bo::float_int(b, FloatOp::IsInfinite, x)
    }
    /// `x.is_sign_negative()`.
    fn is_sign_negative(self, b: &mut Builder) -> Reg<bool> {
        let x = self.value(b);
        bo::float_int(b, FloatOp::IsSignNegative, x)
    }
    /// `x.is_sign_positive()`.
    fn is_sign_positive(self, b: &mut Builder) -> Reg<bool> {
        let x = self.value(b);
        bo::float_int(b, FloatOp::IsSignPositive, x)
    }
}
impl FloatMethods for Reg<f64> {
    fn value(self, _b: &mut Builder) -> Reg<f64> {
        self
    }
}
impl FloatMethods for Ptr<f64> {
    fn value(self, b: &mut Builder) -> Reg<f64> {
        place::read(b, self)
    }
}

/// Associated functions of primitive types called as paths in traced code
/// (`f64::from_bits(x)`): the lowering rewrites `f64::from_bits` to
/// `prims::f64::from_bits`, whose `__jit_call` it calls like any function's companion.
pub mod prims {
    /// `f64::...`.
    pub mod f64 {
        /// `f64::from_bits(x)`.
        pub mod from_bits {
            use crate::jitcode::Builder;
            use crate::lower::Reg;
            /// The lowered call.
            pub fn __jit_call(b: &mut Builder, x: Reg<u64>) -> Reg<f64> {
                crate::lower::builtin_ops::float_from_bits(b, x)
            }
        }
    }
}

/// Length methods on anything indexable.
#[allow(clippy::wrong_self_convention, clippy::len_without_is_empty)]
pub trait LenMethods {
    /// `c.len()`.
    fn len(self, b: &mut Builder) -> Reg<usize>;
    /// `c.is_empty()`.
    fn is_empty(self, b: &mut Builder) -> Reg<bool>;
}
impl<C: Indexable> LenMethods for C {
    fn len(self, b: &mut Builder) -> Reg<usize> {
        place::len(b, self)
    }
    fn is_empty(self, b: &mut Builder) -> Reg<bool> {
        let n = place::len(b, self);
        let z = ops::konst(b, 0usize);
        ops::eq(b, n, z)
    }
}

/// `is_some` and `is_none` on an `Option` (of a scalar, or a `Gc`), in registers or in a place:
/// the test `?` makes ([`TryHandle::is_continue`]), and its negation.
#[allow(clippy::wrong_self_convention)]
pub trait OptionMethods {
    /// `o.is_some()`.
    fn is_some(self, b: &mut Builder) -> Reg<bool>;
    /// `o.is_none()`.
    fn is_none(self, b: &mut Builder) -> Reg<bool>;
}
impl<H: TryHandle> OptionMethods for H {
    fn is_some(self, b: &mut Builder) -> Reg<bool> {
        self.is_continue(b)
    }
    fn is_none(self, b: &mut Builder) -> Reg<bool> {
        let some = self.is_continue(b);
        ops::not(b, some)
    }
}
/// On a place holding one: loaded, then asked.
impl<O: Stored> OptionMethods for Ptr<O>
where
    O::Handle: TryHandle,
{
    fn is_some(self, b: &mut Builder) -> Reg<bool> {
        O::load(b, self).is_some(b)
    }
    fn is_none(self, b: &mut Builder) -> Reg<bool> {
        O::load(b, self).is_none(b)
    }
}

/// `is_ok` and `is_err` on a `Result` of scalars, in registers or in a place (as
/// [`OptionMethods`]).
#[allow(clippy::wrong_self_convention)]
pub trait ResultMethods {
    /// `r.is_ok()`.
    fn is_ok(self, b: &mut Builder) -> Reg<bool>;
    /// `r.is_err()`.
    fn is_err(self, b: &mut Builder) -> Reg<bool>;
}
impl<H: OptionMethods> ResultMethods for H {
    fn is_ok(self, b: &mut Builder) -> Reg<bool> {
        self.is_some(b)
    }
    fn is_err(self, b: &mut Builder) -> Reg<bool> {
        self.is_none(b)
    }
}
