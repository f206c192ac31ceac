//! Float ops with SSE2 scalar doubles: arithmetic, sign manipulation by bit masks (so `-0.0`
//! and NaN payloads come out exactly as the IR defines), comparisons with `ucomisd` (NaN is
//! unordered: only `!=` holds), and the conversions. `cast_float_to_int` follows Rust's `as`:
//! `cvttsd2si` gives `i64::MIN` for NaN and out-of-range values, so that one result is checked
//! and fixed up (NaN to 0, large positive to `i64::MAX`).

use super::asm::{self, Alu, Cond, Src, Sse, XSrc};
use super::int::Flag;
use super::lower::Gen;
use super::regs::*;
use crate::ir::{Op, Opcode};

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
