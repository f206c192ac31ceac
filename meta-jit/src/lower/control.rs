//! Control flow and hints in lowered code: conditions, merge points, `promote!`,
//! `record_exact_value!`, and constants of the program (`const`s, `static`s).
//!
//! Owns: the small typed wrappers over the builder's labels and jumps that the generated code
//! uses (`if`, `while`, `match` and friends are laid out by the macro with these).
//! Must not know: syntax.
#![deny(unsafe_code)]

use super::types::{JitType, Scalar};
use super::{Handle, Ptr, Reg};
use crate::jitcode::{Builder, HintSite, Label, Op, Register};

/// `if !cond goto label`; `cond` must be a `bool` (rustc reports anything else at the user's
/// condition).
pub fn branch_if_not(b: &mut Builder, cond: Reg<bool>, label: Label) {
    b.goto_if_not(cond.reg, label);
}

/// A variable or the result of an `if`/`match`/`loop` that several paths assign: fresh registers
/// on first assignment.
pub fn join<H: Handle>(b: &mut Builder, slot: &mut Option<H>, value: H) {
    match slot {
        Some(h) => h.assign(b, value),
        None => {
            let h = H::fresh(b);
            h.assign(b, value);
            *slot = Some(h);
        }
    }
}

/// `jit_merge_point!()` with the registers of the portal's greens and reds.
pub fn merge_point(
    b: &mut Builder,
    greens: Vec<crate::jitcode::Register>,
    reds: Vec<crate::jitcode::Register>,
) {
    b.emit(Op::JitMergePoint { greens, reds });
}
/// `jit_merge_point!()` written at `site`.
pub fn merge_point_at(
    b: &mut Builder,
    greens: Vec<crate::jitcode::Register>,
    reds: Vec<crate::jitcode::Register>,
    site: &'static HintSite,
) {
    b.set_merge_point_site(site);
    merge_point(b, greens, reds);
}
/// `can_enter_jit!()`.
pub fn can_enter_jit(
    b: &mut Builder,
    greens: Vec<crate::jitcode::Register>,
    reds: Vec<crate::jitcode::Register>,
) {
    b.emit(Op::CanEnterJit { greens, reds });
}
/// The registers of a variable (greens, reds).
pub fn regs_of<H: Handle>(b: &mut Builder, h: H) -> Vec<crate::jitcode::Register> {
    h.regs(b)
}

/// `promote!(x)`: the tracer guards on the value and treats `x` as a constant afterwards.
#[diagnostic::on_unimplemented(
    message = "`promote!` needs a scalar or reference, not `{Self}`",
    note = "promote integers, `bool`, `char`, `f64` or references"
)]
pub trait Promotable: Handle {
    /// The register promoted.
    fn promote_reg(self, b: &mut Builder) -> crate::jitcode::Register;
}
impl<T: Scalar> Promotable for Reg<T> {
    fn promote_reg(self, _b: &mut Builder) -> crate::jitcode::Register {
        self.reg
    }
}
impl<T> Promotable for Ptr<T> {
    fn promote_reg(self, b: &mut Builder) -> crate::jitcode::Register {
        self.materialize(b)
    }
}
/// `promote!(x)`; returns `x`.
pub fn promote<H: Promotable>(b: &mut Builder, x: H) -> H {
    let reg = x.promote_reg(b);
    b.emit(Op::Promote { reg });
    x
}

/// `record_exact_value!(x, c)` at `site`: a scalar `x` and its claimed constant, or a
/// reference and the `&'static` reference it is claimed to be (identity).
pub fn record_exact_value<H: ExactValue<C>, C>(
    b: &mut Builder,
    x: H,
    c: C,
    site: &'static HintSite,
) {
    let (reg, value) = x.exact_regs(b, c);
    b.emit(Op::RecordExactValue { reg, value, site });
}

/// What `record_exact_value!` accepts: a scalar with a constant of its type, or a reference
/// with a `&'static` reference of its type.
#[diagnostic::on_unimplemented(
    message = "`record_exact_value!` cannot claim that a `{Self}` is a `{C}`",
    note = "the value is a scalar and the constant one of its type, or the value is a reference and the constant a `&'static` reference to the same type"
)]
pub trait ExactValue<C> {
    /// The value's register and a constant register with `c`.
    fn exact_regs(self, b: &mut Builder, c: C) -> (Register, Register);
}
impl<T: Scalar> ExactValue<T> for Reg<T> {
    fn exact_regs(self, b: &mut Builder, c: T) -> (Register, Register) {
        (self.reg, super::ops::konst(b, c).reg)
    }
}
impl<T> ExactValue<&'static T> for Ptr<T> {
    fn exact_regs(self, b: &mut Builder, c: &'static T) -> (Register, Register) {
        let reg = self.materialize(b);
        (reg, b.const_ref(c as *const T as usize))
    }
}

/// A constant of the program used in traced code (`MAX`, `i64::MIN`, a `static`'s address): a
/// constant register.
pub fn constant<T: ConstValue>(b: &mut Builder, v: T) -> T::Handle {
    v.constant(b)
}

/// Values that can be jitcode constants.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a constant in traced code",
    note = "constants in traced code are scalars or `&'static` references"
)]
pub trait ConstValue: JitType {
    /// Emits the constant.
    fn constant(self, b: &mut Builder) -> Self::Handle;
}
macro_rules! const_scalar {
    ($($t:ty),*) => {$(
        impl ConstValue for $t {
            fn constant(self, b: &mut Builder) -> Reg<$t> {
                super::ops::konst(b, self)
            }
        }
    )*};
}
const_scalar!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, f64);
impl<T> ConstValue for &'static T {
    fn constant(self, b: &mut Builder) -> Ptr<T> {
        Ptr::new(b.const_ref(self as *const T as usize))
    }
}

/// `panic!(...)`, `unreachable!()` and friends in traced code.
pub fn panic(b: &mut Builder, message: &str) {
    b.emit(Op::Panic {
        message: message.to_string(),
    });
}
