//! Float ops with SSE2 scalar doubles: arithmetic, sign manipulation by bit masks (so `-0.0`
//! and NaN payloads come out exactly as the IR defines), comparisons with `ucomisd` (NaN is
//! unordered: only `!=` holds), the conversions, and `float_mod`, a call of the function that
//! defines it ([`crate::ir::semantics::float_mod`]). `cast_float_to_int` follows Rust's `as`:
//! `cvttsd2si` gives `i64::MIN` for NaN and out-of-range values, so that one result is checked
//! and fixed up (NaN to 0, large positive to `i64::MAX`). The unsigned conversions take the
//! range above `2^63` apart: `cast_float_to_uint` subtracts `2^63` before converting and sets
//! the top bit after; `cast_uint_to_float` halves such a value (keeping its lowest bit, so that
//! rounding stays right), converts and doubles.

use super::asm::{self, Alu, Cond, Shift, Src, Sse, XSrc};
use super::int::Flag;
use super::lower::Gen;
use super::moves::parallel_move;
use super::regs::*;
use crate::ir::{Op, Opcode};

const TWO_63: f64 = 9_223_372_036_854_775_808.0;
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

impl Gen<'_> {
    /// `float_add`, `float_sub`, `float_mul`, `float_truediv`.
    pub(super) fn float_binop(&mut self, i: usize, op: &Op) {
        let sse = match op.opcode {
            Opcode::FloatAdd => Sse::Add,
            Opcode::FloatSub => Sse::Sub,
            Opcode::FloatMul => Sse::Mul,
            _ => Sse::Div,
        };
        // Never swapped, even when the op commutes: with two NaN operands x86 returns the
        // first one, and the reference interpreter computes `x op y`.
        let (x, y) = (op.args[0], op.args[1]);
        let s = self.xsrc(y);
        let d = self.def_from(i, x);
        asm::sse(&mut self.a, sse, d, s);
    }

    /// `float_neg` (flip the sign bit) and `float_abs` (clear it).
    pub(super) fn float_sign(&mut self, i: usize, op: &Op) {
        let d = self.def_from(i, op.args[0]);
        if op.opcode == Opcode::FloatNeg {
            asm::mov_imm(&mut self.a, SCRATCH, 1 << 63);
            asm::movq_xr(&mut self.a, XSCRATCH, SCRATCH);
            asm::xorpd(&mut self.a, d, XSCRATCH);
        } else {
            asm::mov_imm(&mut self.a, SCRATCH, !(1u64 << 63));
            asm::movq_xr(&mut self.a, XSCRATCH, SCRATCH);
            asm::andpd(&mut self.a, d, XSCRATCH);
        }
    }

    /// `ucomisd` for a float comparison; `a < b` is tested as `b > a` so that every ordered
    /// comparison reads CF/ZF, which an unordered result makes false.
    pub(super) fn float_compare(&mut self, op: &Op) -> Flag {
        use Opcode::*;
        let (a, b) = (op.args[0], op.args[1]);
        let (x, y, flag) = match op.opcode {
            FloatLt => (b, a, Flag::C(Cond::A)),
            FloatLe => (b, a, Flag::C(Cond::Ae)),
            FloatGt => (a, b, Flag::C(Cond::A)),
            FloatGe => (a, b, Flag::C(Cond::Ae)),
            FloatEq => (a, b, Flag::FloatEq),
            _ => (a, b, Flag::FloatNe),
        };
        let sy = self.xsrc(y);
        let rx = self.xreg(x);
        asm::sse(&mut self.a, Sse::Ucomi, rx, sy);
        flag
    }

    /// `cast_float_to_int`: truncation, saturating, NaN to 0.
    pub(super) fn float_to_int(&mut self, i: usize, op: &Op) {
        let x = op.args[0];
        let sx = self.xsrc(x);
        let d = self.def(i);
        asm::cvttsd2si(&mut self.a, d, sx);
        let (fix, nan, done) = (
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
        );
        // Only i64::MIN needs a second look: `d - 1` overflows exactly for it.
        asm::alu(&mut self.a, Alu::Cmp, d, Src::I(1));
        asm::jcc(&mut self.a, Cond::O, fix);
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, fix);
        let rx = match sx {
            XSrc::X(r) => r,
            s => {
                asm::sse(&mut self.a, Sse::Mov, XSCRATCH, s);
                XSCRATCH
            }
        };
        let zero = self.pool(0);
        asm::sse(&mut self.a, Sse::Ucomi, rx, XSrc::P(zero));
        asm::jcc(&mut self.a, Cond::P, nan);
        asm::jcc(&mut self.a, Cond::Be, done);
        asm::mov_imm(&mut self.a, d, i64::MAX as u64);
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, nan);
        asm::mov_imm(&mut self.a, d, 0);
        asm::bind(&mut self.a, done);
    }

    /// `cast_int_to_float`.
    pub(super) fn int_to_float(&mut self, i: usize, op: &Op) {
        let s = match self.src(op.args[0]) {
            Src::I(v) => {
                asm::mov_imm(&mut self.a, SCRATCH, v as i64 as u64);
                Src::R(SCRATCH)
            }
            s => s,
        };
        let d = self.def(i);
        asm::cvtsi2sd(&mut self.a, d, s);
    }

    /// `float_mod`: a call of [`crate::ir::semantics::float_mod`].
    pub(super) fn float_mod(&mut self, i: usize, op: &Op) {
        let f = crate::ir::semantics::float_mod as extern "C" fn(f64, f64) -> f64 as usize;
        self.ra.before_call(&mut self.a);
        let moves = [
            (Loc::Reg(Reg::xmm(0)), self.loc(op.args[0])),
            (Loc::Reg(Reg::xmm(1)), self.loc(op.args[1])),
            (Loc::Reg(Reg::gpr(RAX)), Loc::Const(f as u64)),
        ];
        parallel_move(&mut self.a, &moves);
        asm::call_r(&mut self.a, RAX);
        self.ra.after_call();
        self.ra.bind(i, Reg::xmm(0));
    }

    /// `cast_float_to_uint`: truncation, saturating at 0 and `u64::MAX`, NaN to 0.
    pub(super) fn float_to_uint(&mut self, i: usize, op: &Op) {
        let sx = self.xsrc(op.args[0]);
        let d = self.def(i);
        let rx = match sx {
            XSrc::X(r) => r,
            s => {
                asm::sse(&mut self.a, Sse::Mov, XSCRATCH, s);
                XSCRATCH
            }
        };
        let [big, max, zero, done] = [(); 4].map(|_| self.a.new_dynamic_label());
        let (two63, two64) = (self.pool(TWO_63.to_bits()), self.pool(TWO_64.to_bits()));
        asm::sse(&mut self.a, Sse::Ucomi, rx, XSrc::P(two63));
        asm::jcc(&mut self.a, Cond::P, zero);
        asm::jcc(&mut self.a, Cond::Ae, big);
        // Below 2^63: negative results (and -inf's i64::MIN) become 0.
        asm::cvttsd2si(&mut self.a, d, XSrc::X(rx));
        asm::mov_imm(&mut self.a, SCRATCH, 0);
        asm::alu(&mut self.a, Alu::Test, d, Src::R(d));
        asm::cmovs(&mut self.a, d, SCRATCH);
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, big);
        asm::sse(&mut self.a, Sse::Ucomi, rx, XSrc::P(two64));
        asm::jcc(&mut self.a, Cond::Ae, max);
        asm::sse(&mut self.a, Sse::Mov, XSCRATCH, XSrc::X(rx));
        asm::sse(&mut self.a, Sse::Sub, XSCRATCH, XSrc::P(two63));
        asm::cvttsd2si(&mut self.a, d, XSrc::X(XSCRATCH));
        asm::mov_imm(&mut self.a, SCRATCH, 1 << 63);
        asm::alu(&mut self.a, Alu::Xor, d, Src::R(SCRATCH));
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, max);
        asm::mov_imm(&mut self.a, d, u64::MAX);
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, zero);
        asm::mov_imm(&mut self.a, d, 0);
        asm::bind(&mut self.a, done);
    }

    /// `cast_uint_to_float`.
    pub(super) fn uint_to_float(&mut self, i: usize, op: &Op) {
        let s = self.src(op.args[0]);
        let d = self.def(i);
        asm::mov(&mut self.a, SCRATCH, s);
        let (big, even, done) = (
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
        );
        asm::alu(&mut self.a, Alu::Test, SCRATCH, Src::R(SCRATCH));
        asm::jcc(&mut self.a, Cond::S, big);
        asm::cvtsi2sd(&mut self.a, d, Src::R(SCRATCH));
        asm::jmp(&mut self.a, done);
        // At or above 2^63: (x >> 1 | x & 1) converts to half the value, rounded as x is.
        asm::bind(&mut self.a, big);
        asm::shift_imm(&mut self.a, Shift::Shr, SCRATCH, 1);
        asm::jcc(&mut self.a, Cond::Ae, even);
        asm::alu(&mut self.a, Alu::Or, SCRATCH, Src::I(1));
        asm::bind(&mut self.a, even);
        asm::cvtsi2sd(&mut self.a, d, Src::R(SCRATCH));
        asm::sse(&mut self.a, Sse::Add, d, XSrc::X(d));
        asm::bind(&mut self.a, done);
    }

    /// `float_to_bits`: the same 64 bits in a general register.
    pub(super) fn float_to_bits(&mut self, i: usize, op: &Op) {
        let s = self.xsrc(op.args[0]);
        let d = self.def(i);
        match s {
            XSrc::X(x) => asm::movq_rx(&mut self.a, d, x),
            XSrc::M(m) => asm::mov(&mut self.a, d, Src::M(m)),
            XSrc::P(l) => asm::mov(&mut self.a, d, Src::P(l)),
        }
    }

    /// `float_from_bits`.
    pub(super) fn float_from_bits(&mut self, i: usize, op: &Op) {
        let s = self.src(op.args[0]);
        let d = self.def(i);
        match s {
            Src::R(r) => asm::movq_xr(&mut self.a, d, r),
            Src::M(m) => asm::sse(&mut self.a, Sse::Mov, d, XSrc::M(m)),
            Src::P(l) => asm::sse(&mut self.a, Sse::Mov, d, XSrc::P(l)),
            Src::I(v) => {
                asm::mov_imm(&mut self.a, SCRATCH, v as i64 as u64);
                asm::movq_xr(&mut self.a, d, SCRATCH);
            }
        }
    }
}
