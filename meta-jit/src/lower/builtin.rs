//! Methods of standard types that traced code may call: `wrapping_*`, `abs`, `len`,
//! `is_empty`. Lowered code imports these traits, so `x.wrapping_add(y)` resolves to them by
//! ordinary method lookup on the handle.
//!
//! Owns: this list; it grows on demand. A method not found here nor in a `#[jit::methods]`
//! trait is a compile error at the call.
//! Must not know: syntax.
#![deny(unsafe_code)]

use super::ops::{self, Integer};
use super::place::{self, Indexable};
use super::types::Stored;
use super::{Ptr, Reg};
use crate::jitcode::{Builder, IntBinOp};

/// Integer methods on an integer handle or place.
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

/// Float methods.
pub trait FloatMethods {
    /// `x.abs()`.
    fn abs(self, b: &mut Builder) -> Reg<f64>;
}
impl FloatMethods for Reg<f64> {
    fn abs(self, b: &mut Builder) -> Reg<f64> {
        ops::float_abs(b, self)
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
