//! How the tracer records integer arithmetic, casts between integer types and between
//! integers and floats.
//!
//! Jitcode ops are typed like Rust (integer widths, Rust's overflow rules); trace IR ints are
//! 64-bit words. So a narrow op is recorded as the 64-bit op followed by the truncation and
//! extension of its type (`int_signext`, `int_and`), and an overflow check as a guard on the
//! exact result (`*_ovf` + `guard_no_overflow` for `i64`, the high half of the product for
//! `u64`, a range check otherwise). Unsigned 64-bit division and remainder have their own ops;
//! a float converts to a narrow integer type as to `i64`, clamped to the type's range (which is
//! what Rust's saturating `as` gives).
#![deny(unsafe_code)]

use super::record::Tv;
use super::Tracer;
use crate::ir::semantics::eval_ovf;
use crate::ir::{self, Opcode};
use crate::jitcode::{IntBinOp, IntTy, IntUnOp, Overflow};

impl Tracer<'_> {
    /// Truncates and extends a 64-bit result to the canonical form of `ty`.
    fn canon(&mut self, ty: IntTy, x: Tv) -> Tv {
        if ty.bits == 64 {
            x
        } else if ty.signed {
            let n = self.int(i64::from(ty.bits / 8));
            self.pure(Opcode::IntSignext, &[x, n])
        } else {
            let m = self.int((1i64 << ty.bits) - 1);
            self.pure(Opcode::IntAnd, &[x, m])
        }
    }

    /// Guards that the exact 64-bit result `raw` fits `ty` (narrow types).
    fn fits(&mut self, ty: IntTy, raw: Tv) {
        if ty.signed {
            let n = self.int(i64::from(ty.bits / 8));
            let e = self.pure(Opcode::IntSignext, &[raw, n]);
            let ok = self.pure(Opcode::IntEq, &[e, raw]);
            self.check(Opcode::GuardTrue, &[ok]);
        } else {
            let m = self.int(ty.max() as i64);
            let ok = self.pure(Opcode::UintLe, &[raw, m]);
            self.check(Opcode::GuardTrue, &[ok]);
        }
    }

    fn ovf(&mut self, opcode: Opcode, a: Tv, b: Tv) -> Tv {
        let (v, o) = eval_ovf(opcode, a.1.int(), b.1.int());
        debug_assert!(!o, "the concrete op did not overflow");
        if a.0.is_const() && b.0.is_const() {
            return self.int(v);
        }
        let r = self.trace.emit(opcode, &[a.0, b.0]);
        self.guard(Opcode::GuardNoOverflow, &[]);
        (r, ir::Value::Int(v))
    }

    pub(super) fn int_binary(
        &mut self,
        op: IntBinOp,
        ty: IntTy,
        overflow: Overflow,
        a: Tv,
        b: Tv,
    ) -> Tv {
        use IntBinOp::*;
        match op {
            Add | Sub | Mul => {
                let (plain, checked) = match op {
                    Add => (Opcode::IntAdd, Opcode::IntAddOvf),
                    Sub => (Opcode::IntSub, Opcode::IntSubOvf),
                    _ => (Opcode::IntMul, Opcode::IntMulOvf),
                };
                match (overflow, ty.bits == 64, ty.signed) {
                    (Overflow::Wrap, _, _) => {
                        let r = self.pure(plain, &[a, b]);
                        self.canon(ty, r)
                    }
                    (Overflow::Check, true, true) => self.ovf(checked, a, b),
                    (Overflow::Check, true, false) => match op {
                        Add => {
                            let r = self.pure(plain, &[a, b]);
                            let wrapped = self.pure(Opcode::UintLt, &[r, a]);
                            self.check(Opcode::GuardFalse, &[wrapped]);
                            r
                        }
                        Sub => {
                            let borrow = self.pure(Opcode::UintLt, &[a, b]);
                            self.check(Opcode::GuardFalse, &[borrow]);
                            self.pure(plain, &[a, b])
                        }
                        _ => {
                            let high = self.pure(Opcode::UintMulHigh, &[a, b]);
                            self.check(Opcode::GuardFalse, &[high]);
                            self.pure(plain, &[a, b])
                        }
                    },
                    (Overflow::Check, false, _) => {
                        let r = self.pure(plain, &[a, b]);
                        self.fits(ty, r);
                        r
                    }
                }
            }
            Div | Rem if ty.bits == 64 && !ty.signed => {
                self.check(Opcode::GuardTrue, &[b]);
                let opc = if op == Div {
                    Opcode::UintFloorDiv
                } else {
                    Opcode::UintMod
                };
                self.pure(opc, &[a, b])
            }
            Div | Rem => {
                self.check(Opcode::GuardTrue, &[b]);
                if ty.signed {
                    let min = self.int(ty.min() as i64);
                    let m1 = self.int(-1);
                    let x = self.pure(Opcode::IntEq, &[a, min]);
                    let y = self.pure(Opcode::IntEq, &[b, m1]);
                    let both = self.pure(Opcode::IntAnd, &[x, y]);
                    self.check(Opcode::GuardFalse, &[both]);
                }
                let opc = if op == Div {
                    Opcode::IntFloorDiv
                } else {
                    Opcode::IntMod
                };
                self.pure(opc, &[a, b])
            }
            And | Or | Xor => {
                let opc = match op {
                    And => Opcode::IntAnd,
                    Or => Opcode::IntOr,
                    _ => Opcode::IntXor,
                };
                self.pure(opc, &[a, b])
            }
            Shl | Shr => {
                let bits = self.int(i64::from(ty.bits));
                let amount = if overflow == Overflow::Check {
                    let ok = self.pure(Opcode::UintLt, &[b, bits]);
                    self.check(Opcode::GuardTrue, &[ok]);
                    b
                } else {
                    let m = self.int(i64::from(ty.bits) - 1);
                    self.pure(Opcode::IntAnd, &[b, m])
                };
                if op == Shl {
                    let r = self.pure(Opcode::IntLshift, &[a, amount]);
                    self.canon(ty, r)
                } else if ty.signed {
                    self.pure(Opcode::IntRshift, &[a, amount])
                } else {
                    self.pure(Opcode::UintRshift, &[a, amount])
                }
            }
        }
    }

    pub(super) fn int_unary(&mut self, op: IntUnOp, ty: IntTy, overflow: Overflow, a: Tv) -> Tv {
        match op {
            IntUnOp::Neg => match (overflow, ty.bits == 64) {
                (Overflow::Check, true) if ty.signed => {
                    let z = self.int(0);
                    self.ovf(Opcode::IntSubOvf, z, a)
                }
                (Overflow::Check, false) if ty.signed => {
                    let r = self.pure(Opcode::IntNeg, &[a]);
                    self.fits(ty, r);
                    r
                }
                // Unsigned: the runner (like the native code, which cannot negate an unsigned
                // value in Rust) wraps.
                _ => {
                    let r = self.pure(Opcode::IntNeg, &[a]);
                    self.canon(ty, r)
                }
            },
            IntUnOp::Not => {
                let r = self.pure(Opcode::IntInvert, &[a]);
                if ty.signed {
                    r
                } else {
                    self.canon(ty, r)
                }
            }
        }
    }

    pub(super) fn int_cast(&mut self, from: IntTy, to: IntTy, x: Tv) -> Tv {
        let widening = from.bits < to.bits && (from.signed == to.signed || !from.signed);
        if to.bits == 64 || widening {
            x
        } else {
            self.canon(to, x)
        }
    }

    /// `x as f64` for an integer of type `from`.
    pub(super) fn int_to_float(&mut self, from: IntTy, x: Tv) -> Tv {
        let opc = if from.bits == 64 && !from.signed {
            Opcode::CastUintToFloat
        } else {
            Opcode::CastIntToFloat
        };
        self.pure(opc, &[x])
    }

    /// `x as T` for a float `x` and an integer type `T`: saturating, NaN to 0.
    pub(super) fn float_to_int(&mut self, to: IntTy, x: Tv) -> Tv {
        match (to.bits, to.signed) {
            (64, true) => self.pure(Opcode::CastFloatToInt, &[x]),
            (64, false) => self.pure(Opcode::CastFloatToUint, &[x]),
            _ => {
                // Every narrower type's range lies inside i64's: clamp the i64 conversion.
                let wide = self.pure(Opcode::CastFloatToInt, &[x]);
                let max = self.int(to.max() as i64);
                let min = self.int(to.min() as i64);
                let r = self.pure(Opcode::IntMin, &[wide, max]);
                self.pure(Opcode::IntMax, &[r, min])
            }
        }
    }
}
