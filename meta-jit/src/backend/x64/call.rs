//! Calls to `extern "C"` functions under the System V ABI: integer-class arguments in rdi, rsi,
//! rdx, rcx, r8, r9, floats in xmm0-xmm7 (the contract of [`crate::call`] keeps them all in
//! registers), the function address in rax, the result in rax or xmm0. Values needed after the
//! call leave the caller-saved registers first; the frame keeps rsp 16-byte aligned.
//!
//! `call_assembler_*(helper, target, reds...)` calls another trace's code directly when it
//! can. `target` is the address of a block whose word 0 is the native entry of the callee's
//! code (0: none now), word 1 a function `(target, exit code, deadframe) -> result` and word 2
//! a count of the calls that found code (which the fast path increments). The
//! fast path puts a deadframe of [`ASSEMBLER_FRAME_WORDS`] words on the machine stack, stores
//! the reds in it as the callee's inputs and calls the entry; an exit code with
//! [`RETURN_FLAG`] is the portal's return, whose result is deadframe word 1. Any other exit
//! goes to word 1's function with the code and the deadframe (the runtime finishes the call).
//! Without code, `helper(target, reds...)` does all of it.

use super::asm;
use super::lower::Gen;
use super::moves::parallel_move;
use super::regs::*;
use crate::backend::{ASSEMBLER_FRAME_WORDS, RETURN_FLAG};
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
        self.safepoint_after_call();
        self.ra.after_call();
        match op.ty() {
            Type::Float => self.ra.bind(i, Reg::xmm(0)),
            Type::Void => {}
            _ => self.ra.bind(i, Reg::gpr(RAX)),
        }
    }

    /// `call_assembler_*` (see the module doc).
    pub(super) fn call_assembler(&mut self, i: usize, op: &Op) {
        self.ra.before_call(&mut self.a);
        let mut moves = Vec::with_capacity(op.args.len());
        for (k, &x) in op.args[1..].iter().enumerate() {
            moves.push((Loc::Reg(Reg::gpr(ARG_GPRS[k])), self.loc(x)));
        }
        moves.push((Loc::Reg(Reg::gpr(RAX)), self.loc(op.args[0])));
        parallel_move(&mut self.a, &moves);
        let reds = op.args.len() - 2;
        let bytes = (8 * ASSEMBLER_FRAME_WORDS) as i32;
        let (slow, exit, done) = (
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
            self.a.new_dynamic_label(),
        );
        // r10 is caller-saved and holds no argument: free after `before_call`.
        asm::load_r_at(&mut self.a, R10, RDI, 0);
        asm::alu(&mut self.a, asm::Alu::Test, R10, asm::Src::R(R10));
        asm::jcc(&mut self.a, asm::Cond::E, slow);
        // Word 2 counts the calls that take this path.
        asm::load_r_at(&mut self.a, SCRATCH, RDI, 16);
        asm::alu(&mut self.a, asm::Alu::Add, SCRATCH, asm::Src::I(1));
        asm::store_r_at(&mut self.a, RDI, 16, SCRATCH);
        asm::alu(&mut self.a, asm::Alu::Sub, RSP, asm::Src::I(bytes));
        asm::mov(&mut self.a, SCRATCH, asm::Src::R(RSP));
        // Word 0 is the iteration counter, which the runtime's code never counts down.
        asm::store_const(&mut self.a, SCRATCH, 0, i64::MAX as u64);
        for k in 0..reds {
            asm::store_r_at(&mut self.a, SCRATCH, frame_value_disp(k), ARG_GPRS[1 + k]);
        }
        asm::mov(&mut self.a, RDI, asm::Src::R(SCRATCH));
        asm::call_r(&mut self.a, R10);
        asm::mov_imm(&mut self.a, SCRATCH, RETURN_FLAG);
        asm::alu(&mut self.a, asm::Alu::Test, RAX, asm::Src::R(SCRATCH));
        asm::jcc(&mut self.a, asm::Cond::E, exit);
        asm::mov(&mut self.a, SCRATCH, asm::Src::R(RSP));
        asm::load_r_at(&mut self.a, RAX, SCRATCH, frame_value_disp(0));
        asm::alu(&mut self.a, asm::Alu::Add, RSP, asm::Src::I(bytes));
        asm::jmp(&mut self.a, done);
        // Another exit: the runtime finishes the call from the deadframe.
        asm::bind(&mut self.a, exit);
        let target = self.const_bits(op.args[1]).expect("the target is a constant");
        asm::mov(&mut self.a, RSI, asm::Src::R(RAX));
        asm::mov(&mut self.a, RDX, asm::Src::R(RSP));
        asm::mov_imm(&mut self.a, RDI, target);
        asm::load_r_at(&mut self.a, RAX, RDI, 8);
        asm::call_r(&mut self.a, RAX);
        asm::alu(&mut self.a, asm::Alu::Add, RSP, asm::Src::I(bytes));
        asm::jmp(&mut self.a, done);
        asm::bind(&mut self.a, slow);
        asm::call_r(&mut self.a, RAX);
        asm::bind(&mut self.a, done);
        self.ra.after_call();
        if op.ty() != Type::Void {
            self.ra.bind(i, Reg::gpr(RAX));
        }
    }
}
