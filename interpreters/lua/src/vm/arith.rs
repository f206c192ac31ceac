//! Number arithmetic with Lua 5.4's rules: integer wrap-around, float `/` and `^`, floored
//! `//` and `%`, bitwise operators on integers and integral floats, string coercion. No
//! metamethods here.

use crate::value::{float_to_int, str_to_number, Value};

/// The arithmetic and bitwise operators, in metamethod order (`__add` ... `__bnot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ArOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    IDiv,
    BAnd,
    BOr,
    BXor,
    Shl,
    Shr,
    Unm,
    BNot,
}

impl ArOp {
    /// True for the bitwise operators.
    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            ArOp::BAnd | ArOp::BOr | ArOp::BXor | ArOp::Shl | ArOp::Shr | ArOp::BNot
        )
    }
}

/// Floored integer modulo; `b != 0`.
#[inline]
pub fn imod(a: i64, b: i64) -> i64 {
    let m = a.wrapping_rem(b);
    if m != 0 && (m ^ b) < 0 {
        m + b
    } else {
        m
    }
}

/// Floored integer division; `b != 0`.
#[inline]
pub fn idiv(a: i64, b: i64) -> i64 {
    let q = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && (a ^ b) < 0 {
        q - 1
    } else {
        q
    }
}

/// Lua's float modulo.
#[inline]
pub fn fmod(a: f64, b: f64) -> f64 {
    let m = a % b;
    // PUC Lua's luai_nummod.
    if (m > 0.0 && b < 0.0) || (m < 0.0 && b != m && b > 0.0) {
        m + b
    } else {
        m
    }
}

/// `x << y` with Lua's rules (negative shifts go right, 64 and more give 0).
#[inline]
pub fn shl(x: i64, y: i64) -> i64 {
    if y <= -64 || y >= 64 {
        0
    } else if y >= 0 {
        ((x as u64) << y) as i64
    } else {
        ((x as u64) >> (-y)) as i64
    }
}

/// A value as a number for arithmetic: numbers, and strings that convert.
pub fn tonum(v: &Value) -> Option<Value> {
    match v {
        Value::Int(_) | Value::Num(_) => Some(*v),
        Value::Str(s) => str_to_number(&s.bytes),
        _ => None,
    }
}

/// Why numeric arithmetic failed.
pub enum ArithErr {
    /// An operand is not a number (nor a convertible string): try metamethods.
    NotNumber,
    /// A bitwise operand has no integer representation.
    NoInteger,
    /// A runtime error with this message (division by zero).
    Msg(&'static str),
}

fn toint(v: &Value) -> Result<i64, ArithErr> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Num(f) => float_to_int(*f).ok_or(ArithErr::NoInteger),
        _ => Err(ArithErr::NotNumber),
    }
}

/// `a op b` on numbers (strings converted); for unary ops `b` is ignored.
pub fn arith(op: ArOp, a: &Value, b: &Value) -> Result<Value, ArithErr> {
    if op.is_bitwise() && (matches!(a, Value::Str(_)) || matches!(b, Value::Str(_))) {
        return Err(ArithErr::NotNumber);
    }
    let x = tonum(a).ok_or(ArithErr::NotNumber)?;
    let y = if matches!(op, ArOp::Unm | ArOp::BNot) {
        x
    } else {
        tonum(b).ok_or(ArithErr::NotNumber)?
    };
    if op.is_bitwise() {
        let i = toint(&x)?;
        let j = toint(&y)?;
        return Ok(Value::Int(match op {
            ArOp::BAnd => i & j,
            ArOp::BOr => i | j,
            ArOp::BXor => i ^ j,
            ArOp::Shl => shl(i, j),
            ArOp::Shr => shl(i, j.wrapping_neg()),
            _ => !i,
        }));
    }
    if let (Value::Int(i), Value::Int(j)) = (&x, &y) {
        let (i, j) = (*i, *j);
        match op {
            ArOp::Add => return Ok(Value::Int(i.wrapping_add(j))),
            ArOp::Sub => return Ok(Value::Int(i.wrapping_sub(j))),
            ArOp::Mul => return Ok(Value::Int(i.wrapping_mul(j))),
            ArOp::Mod => {
                if j == 0 {
                    return Err(ArithErr::Msg("attempt to perform 'n%0'"));
                }
                return Ok(Value::Int(imod(i, j)));
            }
            ArOp::IDiv => {
                if j == 0 {
                    return Err(ArithErr::Msg("attempt to divide by zero"));
                }
                return Ok(Value::Int(idiv(i, j)));
            }
            ArOp::Unm => return Ok(Value::Int(i.wrapping_neg())),
            _ => {}
        }
    }
    let f = x.as_f64().unwrap();
    let g = y.as_f64().unwrap();
    Ok(Value::Num(match op {
        ArOp::Add => f + g,
        ArOp::Sub => f - g,
        ArOp::Mul => f * g,
        ArOp::Div => f / g,
        ArOp::Mod => fmod(f, g),
        ArOp::Pow => {
            if g == 2.0 {
                f * f
            } else {
                f.powf(g)
            }
        }
        ArOp::IDiv => (f / g).floor(),
        ArOp::Unm => -f,
        _ => unreachable!(),
    }))
}
