//! Integer ops: arithmetic (with the overflow flag for the `*_ovf` ops, which the guard right
//! after tests), division and remainder, signed and unsigned, with the IR's rules for 0 and
//! `MIN / -1`, the high half of an unsigned product, `min` and `max` with `cmov`, shifts
//! (x86 masks the count by 63 exactly as the IR does), and comparisons, either as a 0/1 value
//! or as flags for the guard they are fused with.

use super::asm::{self, Alu, Cond, Shift, Src};
use super::lower::Gen;
use super::regs::*;
use crate::ir::{Op, OpRef, Opcode};

/// How a comparison's outcome is read from the flags.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Flag {
    /// The condition code holds.
    C(Cond),
    /// Ordered and equal (`ucomisd`: ZF = 1 and PF = 0).
    FloatEq,
    /// Unordered or not equal (ZF = 0 or PF = 1).
    FloatNe,
}

impl Gen<'_> {
    /// `add`, `sub`, `mul`, `and`, `or`, `xor`, with or without the overflow check.
    pub(super) fn int_binop(&mut self, i: usize, op: &Op) {
        use Opcode::*;
        let alu = match op.opcode {
            IntAdd | IntAddOvf => Alu::Add,
            IntSub | IntSubOvf => Alu::Sub,
            IntMul | IntMulOvf => Alu::Imul,
            IntAnd => Alu::And,
            IntOr => Alu::Or,
            _ => Alu::Xor,
        };
        let (mut x, mut y) = (op.args[0], op.args[1]);
        if op.opcode.flags().has(crate::ir::Flags::COMMUTATIVE) && self.prefer_swap(x, y) {
            std::mem::swap(&mut x, &mut y);
        }
        if self.byte_sum(i, op) || self.byte_mask(i, op) {
            return;
        }
        let s = self.src(y);
        // `x + c` into a new register while `x` lives on: one `lea` instead of a `mov` and
        // an `add`, unless the next ops compare the sum with 0, which the `add`'s flags say.
        if let (Alu::Add | Alu::Sub, Src::I(c), false) = (alu, s, op.opcode.is_ovf()) {
            let c = if alu == Alu::Sub { c.checked_neg() } else { Some(c) };
            let xr = x.is_op().then(|| self.ra.reg_of(x.index())).flatten();
            if let (Some(c), Some(xr)) = (c, xr) {
                if self.ra.reusable(x.index()).is_none() && !self.zero_test_follows(i) {
                    self.ra.pin(xr);
                    let d = self.def(i);
                    asm::lea(&mut self.a, d, xr.n(), c);
                    return;
                }
            }
        }
        let d = self.def_from(i, x);
        asm::alu(&mut self.a, alu, d, s);
        if alu != Alu::Imul {
            // ZF and SF now say how the result compares with 0.
            self.flags = Some(i);
            self.zf_only = false;
        }
    }

    /// `x + c` (or `x - c`) whose only use is the next op, `& 255`, with `x` in `[0, 255]`:
    /// a one-byte `add`, which leaves the masked sum in the register (its upper bytes stay 0);
    /// the mask then emits nothing ([`Self::byte_mask`]). ZF says whether the masked sum is 0.
    fn byte_sum(&mut self, i: usize, op: &Op) -> bool {
        let (x, c) = (op.args[0], op.args[1]);
        let c = match (op.opcode, self.const_bits(c)) {
            (Opcode::IntAdd, Some(c)) => c,
            (Opcode::IntSub, Some(c)) => c.wrapping_neg(),
            _ => return false,
        };
        let masked = self.t.ops.get(i + 1).is_some_and(|next| {
            next.opcode == Opcode::IntAnd
                && next.args.iter().any(|a| a.is_op() && a.index() == i)
                && next.args.iter().any(|&a| self.const_bits(a) == Some(255))
        });
        if !masked || self.ra.live.last_use[i] as usize != i + 1 || !self.is_byte(x) {
            return false;
        }
        let d = self.def_from(i, x);
        asm::add8_imm(&mut self.a, d, c as u8 as i8);
        self.byte_sum = Some(i);
        true
    }

    /// `v & 255` of a [`Self::byte_sum`]: the value is in `v`'s register already.
    fn byte_mask(&mut self, i: usize, op: &Op) -> bool {
        let Some(v) = self.byte_sum.take() else {
            return false;
        };
        if op.opcode != Opcode::IntAnd || v + 1 != i {
            return false;
        }
        let arg = op.args.iter().copied().find(|a| a.is_op() && a.index() == v);
        let Some(arg) = arg else {
            return false;
        };
        self.def_from(i, arg);
        self.zf_only = true;
        self.flags = Some(i);
        true
    }

    /// Whether `v` is known to be in `[0, 255]` from the op that made it: a one-byte unsigned
    /// load, or `x & c` with `0 <= c <= 255`.
    fn is_byte(&self, v: OpRef) -> bool {
        if !v.is_op() {
            return false;
        }
        let op = &self.t.ops[v.index()];
        match op.opcode {
            Opcode::GetfieldI | Opcode::GetarrayitemI => {
                let d = &self.t.get_descr(op.descr.expect("verified")).kind;
                match d {
                    crate::ir::DescrKind::Field(f) => f.size == 1 && !f.signed,
                    crate::ir::DescrKind::Array(a) => a.item_size == 1 && !a.signed,
                    _ => false,
                }
            }
            Opcode::IntAnd => op
                .args
                .iter()
                .any(|&a| self.const_bits(a).is_some_and(|c| c <= 255)),
            _ => false,
        }
    }

    /// Whether op `i + 1` is a comparison of op `i` with 0 fused with its guard, which can
    /// read the flags op `i` leaves ([`Self::flags_compare_zero`]).
    fn zero_test_follows(&self, i: usize) -> bool {
        let Some(next) = self.t.ops.get(i + 1) else {
            return false;
        };
        self.ra.live.fused.get(i + 1) == Some(&true)
            && next.args.len() == 2
            && next.args[0].is_op()
            && next.args[0].index() == i
            && self.const_bits(next.args[1]) == Some(0)
            && int_cond(next.opcode).and_then(zero_cond).is_some()
    }

    /// If the flags say how `x` compares with 0 (the op that made `x` was the last to set
    /// them), the condition that holds when `x op 0` does, for the comparisons whose
    /// condition does not read OF or CF (an `add` leaves those as its carry and overflow,
    /// not as a `test` would).
    fn flags_compare_zero(&self, x: OpRef, cond: Cond) -> Option<Cond> {
        if x.is_op() && self.flags == Some(x.index()) {
            zero_cond(cond).filter(|c| !self.zf_only || matches!(c, Cond::E | Cond::Ne))
        } else {
            None
        }
    }

    /// Whether a commutative op should take its operands the other way round: to reuse the
    /// second one's register, or to keep a constant on the right.
    fn prefer_swap(&self, x: OpRef, y: OpRef) -> bool {
        if x.is_const() {
            return !y.is_const();
        }
        let reuse = |v: OpRef| v.is_op() && self.ra.reusable(v.index()).is_some();
        !reuse(x) && reuse(y)
    }

    /// `-x` and `!x`.
    pub(super) fn int_unop(&mut self, i: usize, op: &Op) {
        let d = self.def_from(i, op.args[0]);
        if op.opcode == Opcode::IntNeg {
            asm::neg(&mut self.a, d);
        } else {
            asm::not(&mut self.a, d);
        }
    }

    /// `int_signext(x, bytes)`.
    pub(super) fn signext(&mut self, i: usize, op: &Op) {
        let bytes = self.const_bits(op.args[1]).unwrap_or(8) as u8;
        let d = self.def_from(i, op.args[0]);
        asm::signext(&mut self.a, d, d, bytes);
    }

    /// Shifts; the count is masked by 63, by the hardware or here for a constant.
    pub(super) fn shift(&mut self, i: usize, op: &Op) {
        let k = match op.opcode {
            Opcode::IntLshift => Shift::Shl,
            Opcode::IntRshift => Shift::Sar,
            _ => Shift::Shr,
        };
        match self.const_bits(op.args[1]) {
            Some(n) => {
                let d = self.def_from(i, op.args[0]);
                asm::shift_imm(&mut self.a, k, d, (n & 63) as u8);
            }
            None => {
                let count = op.args[1].index();
                let rcx = Reg::gpr(RCX);
                if self.ra.reg_of(count) != Some(rcx) {
                    self.ra.take(&mut self.a, rcx);
                    let s = self.src(op.args[1]);
                    asm::mov(&mut self.a, RCX, s);
                } else {
                    self.ra.pin(rcx);
                }
                let d = self.def_from(i, op.args[0]);
                asm::shift_cl(&mut self.a, k, d);
            }
        }
    }

    /// `int_floordiv` and `int_mod`: `idiv`, except for a divisor of 0 (result 0) and -1
    /// (`idiv` would trap on `MIN / -1`; the result is `-x` or 0).
    pub(super) fn divmod(&mut self, i: usize, op: &Op) {
        let is_div = op.opcode == Opcode::IntFloorDiv;
        let (x, y) = (op.args[0], op.args[1]);
        if let Some(c) = self.const_bits(y) {
            match c as i64 {
                0 => {
                    let d = self.def(i);
                    asm::mov_imm(&mut self.a, d, 0);
                }
                -1 => {
                    let d = self.def_from(i, x);
                    if is_div {
                        asm::neg(&mut self.a, d);
                    } else {
                        asm::mov_imm(&mut self.a, d, 0);
                    }
                }
                c if c > 1 && c <= 1 << 30 && (c as u64).is_power_of_two() => {
                    self.divmod_pow2(i, x, c, is_div)
                }
                c if !c.unsigned_abs().is_power_of_two() => self.divmod_magic(i, x, c, is_div),
                _ => {
                    self.ra.take(&mut self.a, Reg::gpr(RAX));
                    self.ra.take(&mut self.a, Reg::gpr(RDX));
                    let s = self.src(x);
                    asm::mov(&mut self.a, RAX, s);
                    asm::mov_imm(&mut self.a, SCRATCH, c);
                    asm::cqo_idiv(&mut self.a, Src::R(SCRATCH));
                    self.ra.bind(i, Reg::gpr(if is_div { RAX } else { RDX }));
                }
            }
            return;
        }
        let sy = self.div_operands(x, y);
        let (zero, minus1, done) = (
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
        );
        let test = |g: &mut Self, imm: i32| match sy {
            Src::R(r) => asm::alu(&mut g.a, Alu::Cmp, r, Src::I(imm)),
            Src::M(m) => asm::cmp_mem(&mut g.a, m, Src::I(imm)),
            _ => unreachable!("a non-constant divisor is in a register or a slot"),
        };
        test(self, 0);
        asm::jcc(&mut self.a, Cond::E, zero);
        test(self, -1);
        asm::jcc(&mut self.a, Cond::E, minus1);
        asm::cqo_idiv(&mut self.a, sy);
        asm::jmp(&mut self.a, done);
        let res = if is_div { RAX } else { RDX };
        asm::bind(&mut self.a, zero);
        asm::mov_imm(&mut self.a, res, 0);
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, minus1);
        if is_div {
            asm::neg(&mut self.a, RAX);
        } else {
            asm::mov_imm(&mut self.a, RDX, 0);
        }
        asm::bind(&mut self.a, done);
        self.ra.bind(i, Reg::gpr(res));
    }

    /// `x / 2^k` and `x % 2^k` (`0 < k <= 30`), rounding towards zero as `idiv` does, in
    /// shifts and adds: the bias `2^k - 1` (for a negative `x`, else 0) is added before the
    /// arithmetic shift; the remainder is `x` minus the biased value with its low `k` bits
    /// cleared.
    fn divmod_pow2(&mut self, i: usize, x: OpRef, c: i64, is_div: bool) {
        let k = c.trailing_zeros() as u8;
        let d = self.def_from(i, x);
        asm::mov(&mut self.a, SCRATCH, Src::R(d));
        asm::shift_imm(&mut self.a, Shift::Sar, SCRATCH, 63);
        asm::shift_imm(&mut self.a, Shift::Shr, SCRATCH, 64 - k);
        if is_div {
            asm::alu(&mut self.a, Alu::Add, d, Src::R(SCRATCH));
            asm::shift_imm(&mut self.a, Shift::Sar, d, k);
        } else {
            asm::alu(&mut self.a, Alu::Add, SCRATCH, Src::R(d));
            asm::alu(&mut self.a, Alu::And, SCRATCH, Src::I(c.wrapping_neg() as i32));
            asm::alu(&mut self.a, Alu::Sub, d, Src::R(SCRATCH));
        }
    }

    /// `x / d` and `x % d` for a constant `d` (not 0, not a power of two in absolute value),
    /// rounding towards zero as `idiv` does, by a multiplication with a magic number: the high
    /// half of `x * m` (plus or minus `x` when `m`'s sign differs from `d`'s), shifted right,
    /// plus one for a negative quotient; the remainder is `x - q * d`. (Granlund and
    /// Montgomery's method, as in Hacker's Delight, chapter 10.)
    fn divmod_magic(&mut self, i: usize, x: OpRef, d: i64, is_div: bool) {
        let (m, shift) = magic(d);
        self.ra.take(&mut self.a, Reg::gpr(RAX));
        self.ra.take(&mut self.a, Reg::gpr(RDX));
        // `x` stays where it is (a register other than rax and rdx, a slot, or the scratch
        // register for a constant) until the end.
        let sx = self.src_rm(x);
        asm::mov_imm(&mut self.a, RAX, m as u64);
        asm::imul1(&mut self.a, sx);
        if d > 0 && m < 0 {
            asm::alu(&mut self.a, Alu::Add, RDX, sx);
        } else if d < 0 && m > 0 {
            asm::alu(&mut self.a, Alu::Sub, RDX, sx);
        }
        if shift > 0 {
            asm::shift_imm(&mut self.a, Shift::Sar, RDX, shift);
        }
        asm::mov(&mut self.a, RAX, Src::R(RDX));
        asm::shift_imm(&mut self.a, Shift::Shr, RAX, 63);
        asm::alu(&mut self.a, Alu::Add, RDX, Src::R(RAX));
        if is_div {
            self.ra.bind(i, Reg::gpr(RDX));
            return;
        }
        match i32::try_from(d) {
            Ok(d) => asm::alu(&mut self.a, Alu::Imul, RDX, Src::I(d)),
            Err(_) => {
                asm::mov_imm(&mut self.a, RAX, d as u64);
                asm::alu(&mut self.a, Alu::Imul, RDX, Src::R(RAX));
            }
        }
        asm::mov(&mut self.a, RAX, sx);
        asm::alu(&mut self.a, Alu::Sub, RAX, Src::R(RDX));
        self.ra.bind(i, Reg::gpr(RAX));
    }

    /// `uint_floordiv` and `uint_mod`: `div`, except for a divisor of 0 (result 0).
    pub(super) fn udivmod(&mut self, i: usize, op: &Op) {
        let res = if op.opcode == Opcode::UintFloorDiv {
            RAX
        } else {
            RDX
        };
        let (x, y) = (op.args[0], op.args[1]);
        if self.const_bits(y) == Some(0) {
            let d = self.def(i);
            asm::mov_imm(&mut self.a, d, 0);
            return;
        }
        let sy = self.div_operands(x, y);
        if y.is_const() {
            // A constant divisor here is not 0: no check, no zero block.
            asm::xor_div(&mut self.a, sy);
        } else {
            let (zero, done) = (self.a.new_dynamic_label(), self.a.new_dynamic_label());
            self.test_zero(y);
            asm::jcc(&mut self.a, Cond::E, zero);
            asm::xor_div(&mut self.a, sy);
            asm::jmp(&mut self.a, done);
            asm::bind(&mut self.a, zero);
            asm::mov_imm(&mut self.a, res, 0);
            asm::bind(&mut self.a, done);
        }
        self.ra.bind(i, Reg::gpr(res));
    }

    /// `uint_mul_high`: the rdx half of `mul`.
    pub(super) fn mul_high(&mut self, i: usize, op: &Op) {
        let (x, y) = (op.args[0], op.args[1]);
        let sy = self.div_operands(x, y);
        asm::mul(&mut self.a, sy);
        self.ra.bind(i, Reg::gpr(RDX));
    }

    /// `int_min` and `int_max`: `cmp` and a `cmov` of the second operand.
    pub(super) fn min_max(&mut self, i: usize, op: &Op) {
        let s = self.src(op.args[1]);
        let d = self.def_from(i, op.args[0]);
        let r = match s {
            Src::R(r) => r,
            s => {
                asm::mov(&mut self.a, SCRATCH, s);
                SCRATCH
            }
        };
        asm::alu(&mut self.a, Alu::Cmp, d, Src::R(r));
        // min: take the second when the first is greater; max: when it is less.
        asm::cmov_gl(&mut self.a, op.opcode == Opcode::IntMin, d, r);
    }

    /// Emits the comparison of op `op` and says how its outcome sits in the flags.
    pub(super) fn compare_flags(&mut self, op: &Op) -> Flag {
        use Opcode::*;
        let cond = match op.opcode {
            IntLt => Cond::L,
            IntLe => Cond::Le,
            IntGt => Cond::G,
            IntGe => Cond::Ge,
            IntEq | PtrEq => Cond::E,
            IntNe | PtrNe => Cond::Ne,
            UintLt => Cond::B,
            UintLe => Cond::Be,
            UintGt => Cond::A,
            UintGe => Cond::Ae,
            IntIsZero | IntIsTrue => {
                self.test_zero(op.args[0]);
                return Flag::C(if op.opcode == IntIsZero {
                    Cond::E
                } else {
                    Cond::Ne
                });
            }
            _ => return self.float_compare(op),
        };
        let (mut x, mut y, mut cond) = (op.args[0], op.args[1], cond);
        if x.is_const() && !y.is_const() {
            std::mem::swap(&mut x, &mut y);
            cond = cond.swap();
        }
        if self.const_bits(y) == Some(0) {
            if let Some(c) = self.flags_compare_zero(x, cond) {
                return Flag::C(c);
            }
        }
        self.cmp(x, y);
        Flag::C(cond)
    }

    /// `cmp x, y` for any kinds of operands.
    pub(super) fn cmp(&mut self, x: OpRef, y: OpRef) {
        let sy = self.src(y);
        match self.src(x) {
            // `test r, r` sets the flags as `cmp r, 0` does (OF = CF = 0), shorter.
            Src::R(r) if sy == Src::I(0) => asm::alu(&mut self.a, Alu::Test, r, Src::R(r)),
            Src::R(r) => asm::alu(&mut self.a, Alu::Cmp, r, sy),
            Src::M(m) if matches!(sy, Src::R(_) | Src::I(_)) => asm::cmp_mem(&mut self.a, m, sy),
            sx => {
                asm::mov(&mut self.a, SCRATCH, sx);
                asm::alu(&mut self.a, Alu::Cmp, SCRATCH, sy);
            }
        }
    }

    /// Where `x` is, as an operand `div`/`mul` accept: a register or a slot (a constant is
    /// moved into `SCRATCH`).
    fn src_rm(&mut self, x: OpRef) -> Src {
        match self.src(x) {
            s @ (Src::R(_) | Src::M(_)) => s,
            s => {
                asm::mov(&mut self.a, SCRATCH, s);
                Src::R(SCRATCH)
            }
        }
    }

    /// Frees rax and rdx for `div`/`idiv`/`mul`, puts `x` in rax, and gives `y` as an operand
    /// they accept (see [`Self::src_rm`]).
    fn div_operands(&mut self, x: OpRef, y: OpRef) -> Src {
        self.ra.take(&mut self.a, Reg::gpr(RAX));
        self.ra.take(&mut self.a, Reg::gpr(RDX));
        let sy = self.src_rm(y);
        let sx = self.src(x);
        asm::mov(&mut self.a, RAX, sx);
        sy
    }

    /// Sets ZF from whether `x` is zero (nothing if the flags say it already).
    pub(super) fn test_zero(&mut self, x: OpRef) {
        if self.flags_compare_zero(x, Cond::E).is_some() {
            return;
        }
        match self.src(x) {
            Src::R(r) => asm::alu(&mut self.a, Alu::Test, r, Src::R(r)),
            Src::M(m) => asm::cmp_mem(&mut self.a, m, Src::I(0)),
            sx => {
                asm::mov(&mut self.a, SCRATCH, sx);
                asm::alu(&mut self.a, Alu::Test, SCRATCH, Src::R(SCRATCH));
            }
        }
    }

    /// A comparison whose 0/1 result is a value.
    pub(super) fn compare_value(&mut self, i: usize, op: &Op) {
        let flag = self.compare_flags(op);
        // Allocation after the comparison only emits moves, which keep the flags. An integer
        // argument that dies here gives its register (the comparison has read it).
        let reuse = op
            .args
            .iter()
            .find(|a| {
                a.is_op() && !self.ra.is_float(a.index()) && self.ra.reusable(a.index()).is_some()
            })
            .copied();
        let d = match reuse {
            Some(x) => self.ra.transfer(x.index(), i).n(),
            None => self.def(i),
        };
        match flag {
            Flag::C(c) => asm::setcc(&mut self.a, c, d),
            Flag::FloatEq => {
                asm::setcc(&mut self.a, Cond::Np, SCRATCH);
                asm::setcc(&mut self.a, Cond::E, d);
                asm::and8(&mut self.a, d, SCRATCH);
            }
            Flag::FloatNe => {
                asm::setcc(&mut self.a, Cond::P, SCRATCH);
                asm::setcc(&mut self.a, Cond::Ne, d);
                asm::or8(&mut self.a, d, SCRATCH);
            }
        }
        asm::zext8(&mut self.a, d);
    }
}

/// The magic number and shift of a signed 64-bit division by `d` (`|d| >= 3`, not a power of
/// two): the least `p >= 64` for which `m = ceil(2^p / |d|)` gives `floor(x * m / 2^p)` as the
/// quotient of every `x` (with the corrections `divmod_magic` makes), and `m` with `d`'s sign;
/// returns `m` as a 64-bit word and `p - 64`.
pub(super) fn magic(d: i64) -> (i64, u8) {
    const TWO63: u64 = 1 << 63;
    let ad = d.unsigned_abs();
    let t = TWO63 + ((d as u64) >> 63);
    let anc = t - 1 - t % ad;
    let mut p: u32 = 63;
    let (mut q1, mut q2) = (TWO63 / anc, TWO63 / ad);
    let (mut r1, mut r2) = (TWO63 - q1 * anc, TWO63 - q2 * ad);
    loop {
        p += 1;
        // r1 < anc <= 2^63 and r2 < ad <= 2^63: doubling them does not overflow.
        q1 = q1.wrapping_mul(2);
        r1 *= 2;
        if r1 >= anc {
            q1 = q1.wrapping_add(1);
            r1 -= anc;
        }
        q2 = q2.wrapping_mul(2);
        r2 *= 2;
        if r2 >= ad {
            q2 = q2.wrapping_add(1);
            r2 -= ad;
        }
        let delta = ad - r2;
        if !(q1 < delta || (q1 == delta && r1 == 0)) {
            break;
        }
    }
    let m = q2.wrapping_add(1) as i64;
    (if d < 0 { m.wrapping_neg() } else { m }, (p - 64) as u8)
}

/// For `cmp x, 0` then `jcc cond`, the condition that reads only ZF and SF and holds exactly
/// when `cond` does, if there is one: `==`, `!=`, `< 0` (SF) and `>= 0` (not SF). (After
/// `test x, x` OF is 0, so `L` is SF; after an `add`, OF is the addition's overflow.)
fn zero_cond(cond: Cond) -> Option<Cond> {
    match cond {
        Cond::E | Cond::Ne => Some(cond),
        Cond::L => Some(Cond::S),
        Cond::Ge => Some(Cond::Ns),
        _ => None,
    }
}

/// The condition of a signed integer comparison `x op y` as `cmp x, y` sets the flags for it.
fn int_cond(opcode: Opcode) -> Option<Cond> {
    match opcode {
        Opcode::IntLt => Some(Cond::L),
        Opcode::IntGe => Some(Cond::Ge),
        Opcode::IntEq => Some(Cond::E),
        Opcode::IntNe => Some(Cond::Ne),
        _ => None,
    }
}
