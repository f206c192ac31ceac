//! The meaning of every pure, non-call op on concrete values. The reference interpreter
//! executes with it and constant folding folds with it, so the two can never disagree.
//! The backend must match it bit for bit (its tests compare against the interpreter).

use super::{Opcode, Value};

/// Evaluates a pure op (not a call) on concrete arguments. Returns `None` for an opcode that
/// is not pure or is a call.
pub fn eval_pure(op: Opcode, a: &[Value]) -> Option<Value> {
    use Opcode::*;
    let i = |k: usize| a[k].int();
    let f = |k: usize| a[k].float();
    let b = |c: bool| Value::Int(c as i64);
    Some(match op {
        IntAdd => Value::Int(i(0).wrapping_add(i(1))),
        IntSub => Value::Int(i(0).wrapping_sub(i(1))),
        IntMul => Value::Int(i(0).wrapping_mul(i(1))),
        IntFloorDiv => Value::Int(if i(1) == 0 {
            0
        } else {
            i(0).wrapping_div(i(1))
        }),
        IntMod => Value::Int(if i(1) == 0 {
            0
        } else {
            i(0).wrapping_rem(i(1))
        }),
        UintFloorDiv => Value::Int(match i(1) {
            0 => 0,
            d => ((i(0) as u64) / d as u64) as i64,
        }),
        UintMod => Value::Int(match i(1) {
            0 => 0,
            d => ((i(0) as u64) % d as u64) as i64,
        }),
        UintMulHigh => {
            Value::Int(((u128::from(i(0) as u64) * u128::from(i(1) as u64)) >> 64) as i64)
        }
        IntMin => Value::Int(i(0).min(i(1))),
        IntMax => Value::Int(i(0).max(i(1))),
        IntAnd => Value::Int(i(0) & i(1)),
        IntOr => Value::Int(i(0) | i(1)),
        IntXor => Value::Int(i(0) ^ i(1)),
        IntLshift => Value::Int(i(0).wrapping_shl(i(1) as u32 & 63)),
        IntRshift => Value::Int(i(0).wrapping_shr(i(1) as u32 & 63)),
        UintRshift => Value::Int((i(0) as u64).wrapping_shr(i(1) as u32 & 63) as i64),
        IntNeg => Value::Int(i(0).wrapping_neg()),
        IntInvert => Value::Int(!i(0)),
        IntSignext => Value::Int(signext(i(0), i(1))),
        IntIsZero => b(i(0) == 0),
        IntIsTrue => b(i(0) != 0),
        IntLt => b(i(0) < i(1)),
        IntLe => b(i(0) <= i(1)),
        IntEq => b(i(0) == i(1)),
        IntNe => b(i(0) != i(1)),
        IntGt => b(i(0) > i(1)),
        IntGe => b(i(0) >= i(1)),
        UintLt => b((i(0) as u64) < i(1) as u64),
        UintLe => b((i(0) as u64) <= i(1) as u64),
        UintGt => b((i(0) as u64) > i(1) as u64),
        UintGe => b((i(0) as u64) >= i(1) as u64),
        FloatAdd => Value::Float(float_arith(f(0), f(1), |x, y| x + y)),
        FloatSub => Value::Float(float_arith(f(0), f(1), |x, y| x - y)),
        FloatMul => Value::Float(float_arith(f(0), f(1), |x, y| x * y)),
        FloatTrueDiv => Value::Float(float_arith(f(0), f(1), |x, y| x / y)),
        FloatMod => Value::Float(float_mod(f(0), f(1))),
        FloatNeg => Value::Float(f64::from_bits(f(0).to_bits() ^ (1 << 63))),
        FloatAbs => Value::Float(f64::from_bits(f(0).to_bits() & !(1 << 63))),
        FloatLt => b(f(0) < f(1)),
        FloatLe => b(f(0) <= f(1)),
        FloatEq => b(f(0) == f(1)),
        FloatNe => b(f(0) != f(1)),
        FloatGt => b(f(0) > f(1)),
        FloatGe => b(f(0) >= f(1)),
        CastFloatToInt => Value::Int(f(0) as i64),
        CastIntToFloat => Value::Float(i(0) as f64),
        CastFloatToUint => Value::Int(f(0) as u64 as i64),
        CastUintToFloat => Value::Float(i(0) as u64 as f64),
        FloatToBits => Value::Int(f(0).to_bits() as i64),
        FloatFromBits => Value::Float(f64::from_bits(i(0) as u64)),
        PtrEq => b(a[0].addr() == a[1].addr()),
        PtrNe => b(a[0].addr() != a[1].addr()),
        CastPtrToInt => Value::Int(a[0].addr() as i64),
        CastIntToPtr => Value::Ref(i(0) as usize),
        SameAsI | SameAsF | SameAsR => a[0],
        _ => return None,
    })
}

/// Float arithmetic with a defined NaN result. Rust leaves the payload of a NaN result
/// unspecified (the compiler may swap the operands of `*` and `+`), so it is fixed here the
/// way x86-64 SSE2 computes it: when an operand is NaN, the result is the first NaN operand,
/// quieted. (A NaN made from non-NaN operands, like `0.0 / 0.0`, is the hardware's.)
pub fn float_arith(x: f64, y: f64, op: fn(f64, f64) -> f64) -> f64 {
    let quiet = |n: f64| f64::from_bits(n.to_bits() | 1 << 51);
    if x.is_nan() {
        quiet(x)
    } else if y.is_nan() {
        quiet(y)
    } else {
        op(x, y)
    }
}

/// `float_mod`: Rust's `x % y` with [`float_arith`]'s NaN rule. Compiled code calls this very
/// function (x86-64 has no instruction for it).
pub extern "C" fn float_mod(x: f64, y: f64) -> f64 {
    float_arith(x, y, |x, y| x % y)
}

/// Evaluates an overflow-checked op: the wrapped result and whether it overflowed.
pub fn eval_ovf(op: Opcode, x: i64, y: i64) -> (i64, bool) {
    match op {
        Opcode::IntAddOvf => x.overflowing_add(y),
        Opcode::IntSubOvf => x.overflowing_sub(y),
        Opcode::IntMulOvf => x.overflowing_mul(y),
        _ => panic!("{} is not an overflow-checked op", op.name()),
    }
}

/// Sign-extends the low `bytes` bytes of `x` (other byte counts leave `x` as it is).
pub fn signext(x: i64, bytes: i64) -> i64 {
    match bytes {
        1 => x as i8 as i64,
        2 => x as i16 as i64,
        4 => x as i32 as i64,
        _ => x,
    }
}
