//! The standard scalar methods traced code may call that jitcode has no op for (`min`, `max`,
//! `checked_*`, `saturating_*`, `pow`, `count_ones`, `sqrt`, `floor`, `to_bits`, ...): each is
//! an elidable call of one of a few shims defined here, with the operation and the integer type
//! as a constant first argument, so the optimizer folds them on constants and merges repeats
//! like any elidable call, and no backend knows about them.
//!
//! Owns: the operation codes and their concrete semantics (Rust's, on canonical register
//! values; see [`IntTy::canonical`]). Built-ins never panic: `pow` and `abs` wrap on overflow
//! as release builds do, and `checked_div` by zero is `None`.
//! Must not know: syntax, guest languages.
#![deny(unsafe_code)]

use std::sync::{Arc, OnceLock};

use super::calls::{call_descr, emit_call};
use super::Reg;
use crate::jitcode::{Builder, CallDescr, Effect, IntTy, Kind, Value};

/// Declares an op enum (`repr(u8)`, numbered in order) and the table of all its values, from
/// one list (the table decodes the number an op is encoded as).
macro_rules! ops {
    ($(#[$doc:meta])* $name:ident, $table:ident: $($v:ident,)*) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        #[repr(u8)]
        #[allow(missing_docs)]
        pub enum $name {
            $($v,)*
        }

        const $table: [$name; [$($name::$v),*].len()] = [$($name::$v),*];
    };
}

ops! {
    /// Operations on one or two integers (the second may be of another type, as `pow`'s `u32`).
    IntOp, INT_OPS:
    Min,
    Max,
    AbsDiff,
    CheckedAddOk,
    CheckedAdd,
    CheckedSubOk,
    CheckedSub,
    CheckedMulOk,
    CheckedMul,
    CheckedDivOk,
    CheckedDiv,
    CheckedRemOk,
    CheckedRem,
    CheckedPowOk,
    CheckedPow,
    CheckedNegOk,
    CheckedNeg,
    CheckedAbsOk,
    CheckedAbs,
    SaturatingAdd,
    SaturatingSub,
    SaturatingMul,
    SaturatingPow,
    WrappingPow,
    WrappingNeg,
    WrappingAbs,
    CountOnes,
    CountZeros,
    LeadingZeros,
    TrailingZeros,
    Signum,
    IsPositive,
    IsNegative,
    IsPowerOfTwo,
    RotateLeft,
    RotateRight,
    SwapBytes,
}

fn int_code(op: IntOp, ty: IntTy) -> i64 {
    (op as i64) << 16 | i64::from(ty.bits) << 1 | i64::from(ty.signed)
}

fn int_decode(code: i64) -> (IntOp, IntTy) {
    let op = INT_OPS[(code >> 16) as usize];
    let ty = IntTy {
        bits: ((code >> 1) & 0xff) as u8,
        signed: code & 1 == 1,
    };
    (op, ty)
}

/// `x ** e` in `i128` with overflow detection against `ty`: `(wrapped, fits)`.
fn pow(ty: IntTy, x: i128, e: u32) -> (i64, bool) {
    let (mut acc, mut fits) = (1i128, true);
    for _ in 0..e {
        acc = ty.widen(ty.canonical(acc)) * x;
        fits &= acc >= ty.min() && acc <= ty.max();
        acc = ty.widen(ty.canonical(acc));
    }
    (ty.canonical(acc), fits)
}

/// Rust's semantics of `op` on canonical values `x` (of `ty`) and `y`.
pub fn int_op(op: IntOp, ty: IntTy, x: i64, y: i64) -> i64 {
    use IntOp::*;
    let (a, b) = (ty.widen(x), ty.widen(y));
    let bits = u32::from(ty.bits);
    let fits = |v: i128| v >= ty.min() && v <= ty.max();
    let sat = |v: i128| ty.canonical(v.clamp(ty.min(), ty.max()));
    let unsigned = (x as u64)
        & if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
    let exp = y as u32;
    let checked = |v: Option<i128>| v.filter(|&v| fits(v));
    let div = |a: i128, b: i128| (b != 0).then(|| a / b);
    // `MIN % -1` is `None` in Rust, like `MIN / -1`.
    let rem = |a: i128, b: i128| (b != 0 && fits(a / b)).then(|| a % b);
    let ok = |v: Option<i128>| i64::from(checked(v).is_some());
    let val = |v: Option<i128>| checked(v).map_or(0, |v| ty.canonical(v));
    match op {
        Min => ty.canonical(a.min(b)),
        Max => ty.canonical(a.max(b)),
        AbsDiff => ty.canonical((a - b).abs()),
        CheckedAddOk => ok(Some(a + b)),
        CheckedAdd => val(Some(a + b)),
        CheckedSubOk => ok(Some(a - b)),
        CheckedSub => val(Some(a - b)),
        CheckedMulOk => ok(Some(a * b)),
        CheckedMul => val(Some(a * b)),
        CheckedDivOk => ok(div(a, b)),
        CheckedDiv => val(div(a, b)),
        CheckedRemOk => ok(rem(a, b)),
        CheckedRem => val(rem(a, b)),
        CheckedPowOk => i64::from(pow(ty, a, exp).1),
        CheckedPow => {
            let (v, f) = pow(ty, a, exp);
            if f {
                v
            } else {
                0
            }
        }
        CheckedNegOk => ok(Some(-a)),
        CheckedNeg => val(Some(-a)),
        CheckedAbsOk => ok(Some(a.abs())),
        CheckedAbs => val(Some(a.abs())),
        SaturatingAdd => sat(a + b),
        SaturatingSub => sat(a - b),
        SaturatingMul => sat(a * b),
        SaturatingPow => {
            let (v, f) = pow(ty, a, exp);
            match (f, a < 0 && exp % 2 == 1) {
                (true, _) => v,
                (false, true) => ty.canonical(ty.min()),
                (false, false) => ty.canonical(ty.max()),
            }
        }
        WrappingPow => pow(ty, a, exp).0,
        WrappingNeg => ty.canonical(-a),
        WrappingAbs => ty.canonical(a.abs()),
        CountOnes => i64::from(unsigned.count_ones()),
        CountZeros => i64::from(bits - unsigned.count_ones()),
        LeadingZeros => i64::from(unsigned.leading_zeros() - (64 - bits)),
        TrailingZeros => i64::from(unsigned.trailing_zeros().min(bits)),
        Signum => ty.canonical(a.signum()),
        IsPositive => i64::from(a > 0),
        IsNegative => i64::from(a < 0),
        IsPowerOfTwo => i64::from(unsigned.is_power_of_two()),
        RotateLeft | RotateRight => {
            let n = if op == RotateLeft {
                exp % bits
            } else {
                (bits - exp % bits) % bits
            };
            let r = if n == 0 {
                unsigned
            } else {
                (unsigned << n) | (unsigned >> (bits - n))
            };
            ty.canonical(i128::from(r))
        }
        SwapBytes => {
            let r = unsigned.swap_bytes() >> (64 - bits.max(8));
            ty.canonical(i128::from(r))
        }
    }
}

ops! {
    /// Operations on floats, with a float or an integer result.
    FloatOp, FLOAT_OPS:
    Sqrt,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fract,
    Signum,
    Exp,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Recip,
    Min,
    Max,
    Powf,
    Powi,
    Copysign,
    Atan2,
    Hypot,
    FromBits,
    ToBits,
    IsNan,
    IsFinite,
    IsInfinite,
    IsSignNegative,
    IsSignPositive,
}

/// Rust's semantics of a float op with a float result; `y` is the second operand (`Powi`:
/// the `i32` exponent as a float).
pub fn float_op(op: FloatOp, x: f64, y: f64) -> f64 {
    use FloatOp::*;
    match op {
        Sqrt => x.sqrt(),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round(),
        Trunc => x.trunc(),
        Fract => x.fract(),
        Signum => x.signum(),
        Exp => x.exp(),
        Ln => x.ln(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Recip => x.recip(),
        Min => x.min(y),
        Max => x.max(y),
        Powf => x.powf(y),
        Powi => x.powi(y as i32),
        Copysign => x.copysign(y),
        Atan2 => x.atan2(y),
        Hypot => x.hypot(y),
        FromBits => unreachable!("bits_shim"),
        ToBits | IsNan | IsFinite | IsInfinite | IsSignNegative | IsSignPositive => {
            unreachable!("integer result")
        }
    }
}

/// Rust's semantics of a float op with an integer result.
pub fn float_int_op(op: FloatOp, x: f64) -> i64 {
    use FloatOp::*;
    match op {
        ToBits => x.to_bits() as i64,
        IsNan => i64::from(x.is_nan()),
        IsFinite => i64::from(x.is_finite()),
        IsInfinite => i64::from(x.is_infinite()),
        IsSignNegative => i64::from(x.is_sign_negative()),
        IsSignPositive => i64::from(x.is_sign_positive()),
        _ => unreachable!("float result"),
    }
}

extern "C" fn int_shim(code: i64, x: i64, y: i64) -> i64 {
    let (op, ty) = int_decode(code);
    int_op(op, ty, x, y)
}
fn int_dynamic(a: &[Value]) -> Option<Value> {
    Some(Value::Int(int_shim(a[0].int(), a[1].int(), a[2].int())))
}
extern "C" fn float_shim(code: i64, x: f64, y: f64) -> f64 {
    float_op(FLOAT_OPS[code as usize], x, y)
}
fn float_dynamic(a: &[Value]) -> Option<Value> {
    Some(Value::Float(float_shim(
        a[0].int(),
        a[1].float(),
        a[2].float(),
    )))
}
extern "C" fn float_int_shim(code: i64, x: f64) -> i64 {
    float_int_op(FLOAT_OPS[code as usize], x)
}
fn float_int_dynamic(a: &[Value]) -> Option<Value> {
    Some(Value::Int(float_int_shim(a[0].int(), a[1].float())))
}

extern "C" fn bits_shim(x: i64) -> f64 {
    f64::from_bits(x as u64)
}
fn bits_dynamic(a: &[Value]) -> Option<Value> {
    Some(Value::Float(bits_shim(a[0].int())))
}

/// Emits `f64::from_bits(x)`.
pub fn float_from_bits(b: &mut Builder, x: Reg<u64>) -> Reg<f64> {
    static D: OnceLock<Arc<CallDescr>> = OnceLock::new();
    let d = descr(
        &D,
        "meta_jit::builtin_from_bits",
        vec![Kind::Int],
        Kind::Float,
        bits_shim as extern "C" fn(i64) -> f64 as usize,
        bits_dynamic,
    );
    emit_call(b, d, vec![x.reg])
}

fn descr(
    cell: &'static OnceLock<Arc<CallDescr>>,
    name: &'static str,
    args: Vec<Kind>,
    ret: Kind,
    shim: usize,
    dynamic: fn(&[Value]) -> Option<Value>,
) -> &'static Arc<CallDescr> {
    cell.get_or_init(|| call_descr(name, args, Some(ret), Effect::Elidable, shim, dynamic))
}

/// Emits the integer built-in `op` on `x` (of type `ty`) and `y`, with a result of type `R`.
pub fn int<R>(
    b: &mut Builder,
    op: IntOp,
    ty: IntTy,
    x: Reg<impl Sized>,
    y: Reg<impl Sized>,
) -> Reg<R>
where
    Reg<R>: super::Handle,
{
    static D: OnceLock<Arc<CallDescr>> = OnceLock::new();
    let d = descr(
        &D,
        "meta_jit::builtin_int",
        vec![Kind::Int; 3],
        Kind::Int,
        int_shim as extern "C" fn(i64, i64, i64) -> i64 as usize,
        int_dynamic,
    );
    let code = b.const_int(int_code(op, ty));
    emit_call(b, d, vec![code, x.reg, y.reg])
}

/// Emits the float built-in `op` (float result) on `x` and `y` (two float registers).
pub fn float(b: &mut Builder, op: FloatOp, x: Reg<f64>, y: Reg<f64>) -> Reg<f64> {
    static D: OnceLock<Arc<CallDescr>> = OnceLock::new();
    let d = descr(
        &D,
        "meta_jit::builtin_float",
        vec![Kind::Int, Kind::Float, Kind::Float],
        Kind::Float,
        float_shim as extern "C" fn(i64, f64, f64) -> f64 as usize,
        float_dynamic,
    );
    let code = b.const_int(op as i64);
    emit_call(b, d, vec![code, x.reg, y.reg])
}

/// Emits the float built-in `op` with an integer result of type `R`.
pub fn float_int<R>(b: &mut Builder, op: FloatOp, x: Reg<f64>) -> Reg<R>
where
    Reg<R>: super::Handle,
{
    static D: OnceLock<Arc<CallDescr>> = OnceLock::new();
    let d = descr(
        &D,
        "meta_jit::builtin_float_int",
        vec![Kind::Int, Kind::Float],
        Kind::Int,
        float_int_shim as extern "C" fn(i64, f64) -> i64 as usize,
        float_int_dynamic,
    );
    let code = b.const_int(op as i64);
    emit_call(b, d, vec![code, x.reg])
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYS: [IntTy; 8] = [
        IntTy {
            bits: 8,
            signed: true,
        },
        IntTy {
            bits: 8,
            signed: false,
        },
        IntTy {
            bits: 16,
            signed: true,
        },
        IntTy {
            bits: 16,
            signed: false,
        },
        IntTy {
            bits: 32,
            signed: true,
        },
        IntTy {
            bits: 32,
            signed: false,
        },
        IntTy {
            bits: 64,
            signed: true,
        },
        IntTy {
            bits: 64,
            signed: false,
        },
    ];

    #[test]
    fn codes_round_trip() {
        for op in INT_OPS {
            for ty in TYS {
                assert_eq!(int_decode(int_code(op, ty)), (op, ty));
            }
        }
        for (i, op) in FLOAT_OPS.iter().enumerate() {
            assert_eq!(*op as usize, i);
        }
        for (i, op) in INT_OPS.iter().enumerate() {
            assert_eq!(*op as usize, i);
        }
    }

    /// Against Rust's own methods, on `i8` and `u8` exhaustively and `i64` at the edges.
    #[test]
    fn integer_ops_are_rusts() {
        use IntOp::*;
        let (i8t, u8t, i64t) = (TYS[0], TYS[1], TYS[6]);
        for x in i8::MIN..=i8::MAX {
            for y in i8::MIN..=i8::MAX {
                let f = |op| int_op(op, i8t, i64::from(x), i64::from(y));
                assert_eq!(f(Min), i64::from(x.min(y)));
                assert_eq!(f(Max), i64::from(x.max(y)));
                assert_eq!(f(AbsDiff), i64::from(x.abs_diff(y) as i8));
                assert_eq!((f(CheckedAddOk), f(CheckedAdd)), opt(x.checked_add(y)));
                assert_eq!((f(CheckedSubOk), f(CheckedSub)), opt(x.checked_sub(y)));
                assert_eq!((f(CheckedMulOk), f(CheckedMul)), opt(x.checked_mul(y)));
                assert_eq!((f(CheckedDivOk), f(CheckedDiv)), opt(x.checked_div(y)));
                assert_eq!((f(CheckedRemOk), f(CheckedRem)), opt(x.checked_rem(y)));
                assert_eq!(f(SaturatingAdd), i64::from(x.saturating_add(y)));
                assert_eq!(f(SaturatingSub), i64::from(x.saturating_sub(y)));
                assert_eq!(f(SaturatingMul), i64::from(x.saturating_mul(y)));
                let e = (y as u8 % 9) as u32;
                let g = |op| int_op(op, i8t, i64::from(x), i64::from(e));
                assert_eq!((g(CheckedPowOk), g(CheckedPow)), opt(x.checked_pow(e)));
                assert_eq!(g(SaturatingPow), i64::from(x.saturating_pow(e)));
                assert_eq!(g(WrappingPow), i64::from(x.wrapping_pow(e)));
                assert_eq!(g(RotateLeft), i64::from(x.rotate_left(e)));
                assert_eq!(g(RotateRight), i64::from(x.rotate_right(e)));
            }
            let f = |op| int_op(op, i8t, i64::from(x), 0);
            assert_eq!((f(CheckedNegOk), f(CheckedNeg)), opt(x.checked_neg()));
            assert_eq!((f(CheckedAbsOk), f(CheckedAbs)), opt(x.checked_abs()));
            assert_eq!(f(WrappingNeg), i64::from(x.wrapping_neg()));
            assert_eq!(f(WrappingAbs), i64::from(x.wrapping_abs()));
            assert_eq!(f(CountOnes), i64::from(x.count_ones()));
            assert_eq!(f(CountZeros), i64::from(x.count_zeros()));
            assert_eq!(f(LeadingZeros), i64::from(x.leading_zeros()));
            assert_eq!(f(TrailingZeros), i64::from(x.trailing_zeros()));
            assert_eq!(f(Signum), i64::from(x.signum()));
            assert_eq!(f(IsPositive), i64::from(x.is_positive()));
            assert_eq!(f(IsNegative), i64::from(x.is_negative()));
            assert_eq!(f(SwapBytes), i64::from(x.swap_bytes()));
            let u = x as u8;
            let h = |op, y: u8| int_op(op, u8t, i64::from(u), i64::from(y));
            assert_eq!(h(Min, 77), i64::from(u.min(77)));
            assert_eq!(h(Max, 200), i64::from(u.max(200)));
            assert_eq!(h(SaturatingSub, 9), i64::from(u.saturating_sub(9)));
            assert_eq!(h(LeadingZeros, 0), i64::from(u.leading_zeros()));
            assert_eq!(h(IsPowerOfTwo, 0), i64::from(u.is_power_of_two()));
        }
        for x in [i64::MIN, i64::MIN + 1, -1, 0, 1, 3, i64::MAX] {
            for y in [i64::MIN, -2, -1, 0, 1, 2, i64::MAX] {
                let f = |op| int_op(op, i64t, x, y);
                assert_eq!(f(Min), x.min(y));
                assert_eq!(f(Max), x.max(y));
                assert_eq!((f(CheckedMulOk), f(CheckedMul)), opt(x.checked_mul(y)));
                assert_eq!((f(CheckedDivOk), f(CheckedDiv)), opt(x.checked_div(y)));
                assert_eq!(f(SaturatingAdd), x.saturating_add(y));
                assert_eq!(f(SwapBytes), x.swap_bytes());
            }
            let u = x as u64;
            let f = |op, y: u64| int_op(op, TYS[7], u as i64, y as i64);
            assert_eq!(f(Max, 5), u.max(5) as i64);
            assert_eq!(f(Min, 1 << 63), u.min(1 << 63) as i64);
            assert_eq!(f(LeadingZeros, 0), i64::from(u.leading_zeros()));
            assert_eq!(f(CountOnes, 0), i64::from(u.count_ones()));
        }
    }

    fn opt<T: Into<i64>>(v: Option<T>) -> (i64, i64) {
        v.map_or((0, 0), |v| (1, v.into()))
    }

    #[test]
    fn float_ops_are_rusts() {
        use FloatOp::*;
        for x in [-2.5f64, -0.0, 0.0, 0.5, 2.0, 1e300, f64::NAN, f64::INFINITY] {
            assert_eq!(float_op(Sqrt, x, 0.0).to_bits(), x.sqrt().to_bits());
            assert_eq!(float_op(Floor, x, 0.0).to_bits(), x.floor().to_bits());
            assert_eq!(float_op(Max, x, 1.0).to_bits(), x.max(1.0).to_bits());
            assert_eq!(float_op(Powi, x, 3.0).to_bits(), x.powi(3).to_bits());
            assert_eq!(bits_shim(x.to_bits() as i64).to_bits(), x.to_bits());
            assert_eq!(float_int_op(ToBits, x), x.to_bits() as i64);
            assert_eq!(float_int_op(IsNan, x), i64::from(x.is_nan()));
        }
    }
}
