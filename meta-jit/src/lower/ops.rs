//! Arithmetic, comparisons, casts and constants on scalar handles: what `a + b`, `a < b`, `-a`,
//! `!a`, `x as T` and literals lower to.
//!
//! Owns: the choice of jitcode op from the operand type (`T::INT` for integers, else float) and
//! the overflow mode passed by the generated code (`cfg!(debug_assertions)` of the user's crate,
//! so jitcode and the native interpreter agree). The marker traits restrict each operator to the
//! types Rust allows it on; their `on_unimplemented` notes are the compile errors users see.
//! Must not know: syntax.
#![deny(unsafe_code)]

use super::types::Scalar;
use super::Reg;
use crate::jitcode::{
    Builder, Cmp, FloatBinOp, FloatUnOp, IntBinOp, IntTy, IntUnOp, Kind, Op, Overflow,
};

/// Types with `+ - * / %` in traced code.
#[diagnostic::on_unimplemented(
    message = "arithmetic on `{Self}` is not supported in traced code",
    label = "operands of type `{Self}`",
    note = "traced code does arithmetic on integers and `f64`"
)]
pub trait Arith: Scalar {}
/// Integer types (shifts, bit operations).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer type traced code can shift",
    note = "shifts apply to integer types"
)]
pub trait Integer: Scalar {}
/// Types with `& | ^` (integers and `bool`).
#[diagnostic::on_unimplemented(
    message = "bit operations on `{Self}` are not supported in traced code"
)]
pub trait BitOps: Scalar {}
/// Types with unary `-` (signed integers, `f64`).
#[diagnostic::on_unimplemented(message = "negation of `{Self}` is not supported in traced code")]
pub trait Negate: Scalar {}
/// Types with `== !=`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be compared with `==` in traced code",
    note = "traced code compares integers, `bool`, `char` and `f64`; compare references with `std::ptr::eq` \
            inside a `#[dont_look_inside]` helper"
)]
pub trait Equatable: Scalar {}
/// Types with `< <= > >=`.
#[diagnostic::on_unimplemented(message = "`{Self}` cannot be ordered with `<` in traced code")]
pub trait Ordered: Scalar {}

macro_rules! marks {
    ($tr:ident: $($t:ty),*) => {$( impl $tr for $t {} )*};
}
marks!(Arith: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f64);
marks!(Integer: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
marks!(BitOps: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool);
marks!(Negate: i8, i16, i32, i64, isize, f64);
marks!(Equatable: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, f64);
marks!(Ordered: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, f64);

fn overflow(checked: bool) -> Overflow {
    if checked {
        Overflow::Check
    } else {
        Overflow::Wrap
    }
}

/// A literal or other constant scalar.
pub fn konst<T: Scalar>(b: &mut Builder, v: T) -> Reg<T> {
    let reg = match v.to_value() {
        crate::jitcode::Value::Int(i) => b.const_int(i),
        crate::jitcode::Value::Float(f) => b.const_float(f),
        crate::jitcode::Value::Ref(a) => b.const_ref(a),
    };
    Reg::new(reg)
}

fn int_ty<T: Scalar>() -> IntTy {
    T::INT.expect("integer type")
}

fn int_bin<T: Scalar>(
    b: &mut Builder,
    op: IntBinOp,
    checked: bool,
    l: Reg<T>,
    r: Reg<T>,
) -> Reg<T> {
    let dst = b.fresh(Kind::Int);
    b.emit(Op::IntBinary {
        op,
        ty: int_ty::<T>(),
        overflow: overflow(checked),
        dst,
        a: l.reg,
        b: r.reg,
    });
    Reg::new(dst)
}

fn arith<T: Arith>(
    b: &mut Builder,
    iop: IntBinOp,
    fop: FloatBinOp,
    checked: bool,
    l: Reg<T>,
    r: Reg<T>,
) -> Reg<T> {
    if T::INT.is_some() {
        int_bin(b, iop, checked, l, r)
    } else {
        let dst = b.fresh(Kind::Float);
        b.emit(Op::FloatBinary {
            op: fop,
            dst,
            a: l.reg,
            b: r.reg,
        });
        Reg::new(dst)
    }
}

/// `l + r` (`checked`: Rust's overflow checks are on).
pub fn add<T: Arith>(b: &mut Builder, l: Reg<T>, r: Reg<T>, checked: bool) -> Reg<T> {
    arith(b, IntBinOp::Add, FloatBinOp::Add, checked, l, r)
}
/// `l - r`.
pub fn sub<T: Arith>(b: &mut Builder, l: Reg<T>, r: Reg<T>, checked: bool) -> Reg<T> {
    arith(b, IntBinOp::Sub, FloatBinOp::Sub, checked, l, r)
}
/// `l * r`.
pub fn mul<T: Arith>(b: &mut Builder, l: Reg<T>, r: Reg<T>, checked: bool) -> Reg<T> {
    arith(b, IntBinOp::Mul, FloatBinOp::Mul, checked, l, r)
}
/// `l / r` (integers: truncating; always checks zero and `MIN / -1`).
pub fn div<T: Arith>(b: &mut Builder, l: Reg<T>, r: Reg<T>, checked: bool) -> Reg<T> {
    arith(b, IntBinOp::Div, FloatBinOp::Div, checked, l, r)
}
/// `l % r`.
pub fn rem<T: Arith>(b: &mut Builder, l: Reg<T>, r: Reg<T>, checked: bool) -> Reg<T> {
    arith(b, IntBinOp::Rem, FloatBinOp::Rem, checked, l, r)
}
/// `l.wrapping_add(r)` and friends: arithmetic that always wraps.
pub fn wrapping<T: Integer>(b: &mut Builder, op: IntBinOp, l: Reg<T>, r: Reg<T>) -> Reg<T> {
    int_bin(b, op, false, l, r)
}
/// `l & r`.
pub fn bitand<T: BitOps>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<T> {
    int_bin(b, IntBinOp::And, false, l, r)
}
/// `l | r`.
pub fn bitor<T: BitOps>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<T> {
    int_bin(b, IntBinOp::Or, false, l, r)
}
/// `l ^ r`.
pub fn bitxor<T: BitOps>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<T> {
    int_bin(b, IntBinOp::Xor, false, l, r)
}

fn shift<T: Integer, U: Integer>(
    b: &mut Builder,
    op: IntBinOp,
    l: Reg<T>,
    r: Reg<U>,
    checked: bool,
) -> Reg<T> {
    // The amount is brought to `i64` first so the op sees a canonical non-negative count whenever
    // Rust would (a negative signed amount stays negative and overflows, as in Rust).
    let amount = if U::INT == Some(IntTy::I64) {
        r.reg
    } else {
        cast::<U, i64>(b, r).reg
    };
    let dst = b.fresh(Kind::Int);
    b.emit(Op::IntBinary {
        op,
        ty: int_ty::<T>(),
        overflow: overflow(checked),
        dst,
        a: l.reg,
        b: amount,
    });
    Reg::new(dst)
}
/// `l << r`.
pub fn shl<T: Integer, U: Integer>(b: &mut Builder, l: Reg<T>, r: Reg<U>, checked: bool) -> Reg<T> {
    shift(b, IntBinOp::Shl, l, r, checked)
}
/// `l >> r`.
pub fn shr<T: Integer, U: Integer>(b: &mut Builder, l: Reg<T>, r: Reg<U>, checked: bool) -> Reg<T> {
    shift(b, IntBinOp::Shr, l, r, checked)
}

/// `-x`.
pub fn neg<T: Negate>(b: &mut Builder, x: Reg<T>, checked: bool) -> Reg<T> {
    match T::INT {
        Some(ty) => {
            let dst = b.fresh(Kind::Int);
            b.emit(Op::IntUnary {
                op: IntUnOp::Neg,
                ty,
                overflow: overflow(checked),
                dst,
                a: x.reg,
            });
            Reg::new(dst)
        }
        None => {
            let dst = b.fresh(Kind::Float);
            b.emit(Op::FloatUnary {
                op: FloatUnOp::Neg,
                dst,
                a: x.reg,
            });
            Reg::new(dst)
        }
    }
}
/// `!x` (bitwise for integers, logical for `bool`).
pub fn not<T: BitOps>(b: &mut Builder, x: Reg<T>) -> Reg<T> {
    let dst = b.fresh(Kind::Int);
    b.emit(Op::IntUnary {
        op: IntUnOp::Not,
        ty: int_ty::<T>(),
        overflow: Overflow::Wrap,
        dst,
        a: x.reg,
    });
    Reg::new(dst)
}
/// `x.abs()` on `f64`.
pub fn float_abs(b: &mut Builder, x: Reg<f64>) -> Reg<f64> {
    let dst = b.fresh(Kind::Float);
    b.emit(Op::FloatUnary {
        op: FloatUnOp::Abs,
        dst,
        a: x.reg,
    });
    Reg::new(dst)
}

fn compare<T: Scalar>(b: &mut Builder, cmp: Cmp, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    let dst = b.fresh(Kind::Int);
    match T::INT {
        Some(ty) => b.emit(Op::IntCompare {
            cmp,
            signed: ty.signed,
            dst,
            a: l.reg,
            b: r.reg,
        }),
        None => b.emit(Op::FloatCompare {
            cmp,
            dst,
            a: l.reg,
            b: r.reg,
        }),
    }
    Reg::new(dst)
}
/// `l == r`.
pub fn eq<T: Equatable>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    compare(b, Cmp::Eq, l, r)
}
/// `l != r`.
pub fn ne<T: Equatable>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    compare(b, Cmp::Ne, l, r)
}
/// `l < r`.
pub fn lt<T: Ordered>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    compare(b, Cmp::Lt, l, r)
}
/// `l <= r`.
pub fn le<T: Ordered>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    compare(b, Cmp::Le, l, r)
}
/// `l > r`.
pub fn gt<T: Ordered>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    compare(b, Cmp::Gt, l, r)
}
/// `l >= r`.
pub fn ge<T: Ordered>(b: &mut Builder, l: Reg<T>, r: Reg<T>) -> Reg<bool> {
    compare(b, Cmp::Ge, l, r)
}

/// `x as U` between scalars (rustc has already checked that the native cast is allowed).
pub fn cast<T: Scalar, U: Scalar>(b: &mut Builder, x: Reg<T>) -> Reg<U> {
    match (T::INT, U::INT) {
        (Some(from), Some(to)) => {
            if from == to {
                return Reg::new(x.reg);
            }
            let dst = b.fresh(Kind::Int);
            b.emit(Op::IntCast {
                from,
                to,
                dst,
                src: x.reg,
            });
            Reg::new(dst)
        }
        (Some(from), None) => {
            let dst = b.fresh(Kind::Float);
            b.emit(Op::IntToFloat {
                from,
                dst,
                src: x.reg,
            });
            Reg::new(dst)
        }
        (None, Some(to)) => {
            let dst = b.fresh(Kind::Int);
            b.emit(Op::FloatToInt {
                to,
                dst,
                src: x.reg,
            });
            Reg::new(dst)
        }
        (None, None) => Reg::new(x.reg),
    }
}
