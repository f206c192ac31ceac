//! Calls to `extern "C"` functions under the System V ABI: integer-class arguments in rdi, rsi,
//! rdx, rcx, r8, r9, floats in xmm0-xmm7 (the contract of [`crate::call`] keeps them all in
//! registers), the function address in rax, the result in rax or xmm0. Values needed after the
//! call leave the caller-saved registers first; the frame keeps rsp 16-byte aligned.

use super::asm;
use super::lower::Gen;
use super::moves::parallel_move;
use super::regs::*;
use crate::ir::{Op, Type};

impl Gen<'_> {
    /// `call_*` and `call_pure_*`.
    pub(super) fn call(&mut self, i: usize, op: &Op) {
        self.ra.before_call(&mut self.a);
        let mut moves = Vec::with_capacity(op.args.len());
        let (mut ni, mut nf) = (0, 0);
        for &x in &op.args[1..] {
            let dst = if self.t.type_of(x) == Type::Float {
                nf += 1;
                Reg::xmm(nf - 1)
            } else {
                ni += 1;
                Reg::gpr(ARG_GPRS[ni - 1])
            };
            moves.push((Loc::Reg(dst), self.loc(x)));
        }
        moves.push((Loc::Reg(Reg::gpr(RAX)), self.loc(op.args[0])));
        parallel_move(&mut self.a, &moves);
        asm::call_r(&mut self.a, RAX);
        self.ra.after_call();
        match op.ty() {
            Type::Float => self.ra.bind(i, Reg::xmm(0)),
            Type::Void => {}
            _ => self.ra.bind(i, Reg::gpr(RAX)),
        }
    }
}
