//! Memory ops: field and array loads and stores by descriptor (sizes 1, 2, 4, 8; loads sign-
//! or zero-extend as the descriptor says; stores write the low bytes), and allocation, which
//! calls [`crate::alloc::jit_alloc`] exactly as the reference interpreter allocates, after an
//! inline bump-pointer fast path for small objects ([`crate::alloc::Nursery`]).

use super::asm::{self, Addr, Src};
use super::lower::{fits_i32, Gen};
use super::moves::parallel_move;
use super::regs::*;
use crate::ir::{DescrKind, Op, OpRef, Opcode, Type};

/// Bytes `bump_new`'s slow path saves the caller-saved registers in (8 general and 15 float
/// registers, rounded up to keep the stack 16-aligned).
const SAVE_AREA: i32 = 192;
const _: () = assert!(
    8 * (GPR_CALLER_SAVED.len() as i32 + XMM_ALLOCATABLE as i32) <= SAVE_AREA
        && SAVE_AREA % 16 == 0
);

/// Where a memory op reads or writes, and how wide.
struct Access {
    /// The descriptor's offset plus what address folding added.
    offset: i64,
    index: Option<(OpRef, u8)>,
    size: u8,
    signed: bool,
}

impl Gen<'_> {
    fn access(&self, op: &Op, i: usize) -> Access {
        let d = &self.t.get_descr(op.descr.expect("verified")).kind;
        let folded = self.disp.get(i).copied().unwrap_or(0);
        match d {
            DescrKind::Field(f) => Access {
                offset: i64::from(f.offset) + folded,
                index: None,
                size: f.size,
                signed: f.signed,
            },
            DescrKind::Array(a) => Access {
                offset: i64::from(a.base) + folded,
                index: Some((op.args[1], a.item_size)),
                size: a.item_size,
                signed: a.signed,
            },
            _ => unreachable!("the verifier checks descriptor kinds"),
        }
    }

    /// The address of an access to the object `p`. Uses `r11` for constant or far addresses;
    /// returns whether it did.
    fn address(&mut self, p: OpRef, acc: &Access) -> (Addr, bool) {
        enum Base {
            Const(u64),
            Reg(u8),
        }
        let off = acc.offset as u64;
        let base = match self.const_bits(p) {
            Some(b) => Base::Const(b),
            None => Base::Reg(self.ra.ensure_reg(&mut self.a, p.index()).n()),
        };
        // The constant part of the offset, and the index register if any.
        let (disp, ri) = match acc.index {
            None => (off, None),
            Some((x, s)) => match self.const_bits(x) {
                Some(k) => (off.wrapping_add(k.wrapping_mul(s as u64)), None),
                None => (
                    off,
                    Some((self.ra.ensure_reg(&mut self.a, x.index()).n(), s)),
                ),
            },
        };
        let scratch = |index| Addr {
            base: SCRATCH,
            index,
            disp: 0,
        };
        match base {
            Base::Const(b) => {
                asm::mov_imm(&mut self.a, SCRATCH, b.wrapping_add(disp));
                (scratch(ri), true)
            }
            Base::Reg(rp) if fits_i32(disp) => (
                Addr {
                    base: rp,
                    index: ri,
                    disp: disp as i64 as i32,
                },
                false,
            ),
            Base::Reg(rp) => {
                asm::mov_imm(&mut self.a, SCRATCH, disp);
                asm::alu(&mut self.a, asm::Alu::Add, SCRATCH, Src::R(rp));
                self.flags = None;
                (scratch(ri), true)
            }
        }
    }

    /// `getfield_*` and `getarrayitem_*`.
    pub(super) fn load(&mut self, i: usize, op: &Op) {
        let acc = self.access(op, i);
        let (addr, _) = self.address(op.args[0], &acc);
        let d = self.def(i);
        if op.ty() == Type::Float {
            if acc.size == 8 {
                asm::load_float(&mut self.a, d, addr);
            } else {
                asm::load_int(&mut self.a, SCRATCH, addr, acc.size, acc.signed);
                asm::movq_xr(&mut self.a, d, SCRATCH);
            }
        } else {
            asm::load_int(&mut self.a, d, addr, acc.size, acc.signed);
        }
    }

    /// `setfield` and `setarrayitem`.
    pub(super) fn store(&mut self, i: usize, op: &Op) {
        let acc = self.access(op, i);
        let v = *op.args.last().expect("verified");
        // The value first (so that its register is pinned while the address is built).
        enum Val {
            Reg(u8),
            Xmm(u8),
            Imm(i32),
            Big(u64),
        }
        let val = match self.const_bits(v) {
            Some(b) => {
                if acc.size < 8 || fits_i32(b) {
                    Val::Imm(b as i32)
                } else {
                    Val::Big(b)
                }
            }
            None => {
                let r = self.ra.ensure_reg(&mut self.a, v.index());
                if r.is_xmm() {
                    Val::Xmm(r.n())
                } else {
                    Val::Reg(r.n())
                }
            }
        };
        let (addr, uses_scratch) = self.address(op.args[0], &acc);
        match val {
            Val::Reg(r) => asm::store_int(&mut self.a, addr, acc.size, r),
            Val::Imm(k) => asm::store_imm(&mut self.a, addr, acc.size, k),
            Val::Xmm(x) if acc.size == 8 => asm::store_float(&mut self.a, addr, x),
            Val::Xmm(x) => {
                let t = self.temp(uses_scratch);
                asm::movq_rx(&mut self.a, t, x);
                asm::store_int(&mut self.a, addr, acc.size, t);
            }
            Val::Big(b) => {
                let t = self.temp(uses_scratch);
                asm::mov_imm(&mut self.a, t, b);
                asm::store_int(&mut self.a, addr, acc.size, t);
            }
        }
    }

    /// A general register for a temporary: `r11` unless the address already uses it.
    fn temp(&mut self, scratch_busy: bool) -> u8 {
        if scratch_busy {
            self.ra.alloc(&mut self.a, false, false, None).n()
        } else {
            SCRATCH
        }
    }

    /// `new` of a small object: the nursery's bump pointer advanced inline, falling through
    /// when the object fits; only when it does not, a jump to an out-of-line call of
    /// `jit_alloc(size, align)` ([`Self::slow_alloc`], emitted after the trace's ops) that saves
    /// and restores every caller-saved register itself (so the register allocator's state is
    /// the same on both paths and the fast path spills nothing) and jumps back.
    // dynasm's `Rq(r)` converts the register number with `.into()`.
    #[allow(clippy::useless_conversion)]
    fn bump_new(&mut self, i: usize, size: usize, align: usize) {
        use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
        let nursery = crate::alloc::nursery_addr_for(size) as i64;
        let step = crate::alloc::nursery_size(size) as i32;
        let r = self.ra.def(&mut self.a, i, None).n();
        let (slow, done) = (self.a.new_dynamic_label(), self.a.new_dynamic_label());
        let a = &mut self.a;
        dynasm!(a
            ; .arch x64
            ; mov r11, QWORD nursery
            ; mov Rq(r), [r11]
            ; add Rq(r), step
            ; cmp Rq(r), [r11 + 8]
            ; ja =>slow
            ; mov [r11], Rq(r)
            ; sub Rq(r), step
            ; =>done
        );
        self.slow_allocs.push(SlowAlloc {
            slow,
            done,
            r,
            size,
            align,
        });
    }

    /// The out-of-line slow path of a [`Self::bump_new`]: `jit_alloc(size, align)` with every
    /// caller-saved register but the result's saved around it, then back to the fast path's
    /// end.
    #[allow(clippy::useless_conversion)]
    pub(super) fn slow_alloc(&mut self, s: &SlowAlloc) {
        use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
        let f = crate::alloc::jit_alloc as extern "C" fn(usize, usize) -> usize as usize as i64;
        let (r, size, align) = (s.r, s.size as i64, s.align as i64);
        dynasm!(self.a ; .arch x64 ; =>s.slow);
        self.save_caller_saved(Some(r));
        let a = &mut self.a;
        dynasm!(a
            ; .arch x64
            ; mov rdi, QWORD size
            ; mov rsi, QWORD align
            ; mov rax, QWORD f
            ; call rax
            ; mov r11, rax
        );
        self.restore_caller_saved(Some(r));
        let a = &mut self.a;
        dynasm!(a
            ; .arch x64
            ; mov Rq(r), r11
            ; jmp =>s.done
        );
    }

    /// Every caller-saved register (but `except`) into a save area pushed on the stack, which
    /// stays 16-aligned (the area is a multiple of 16). A collection that runs meanwhile finds
    /// the saved values there, in the stack it scans.
    #[allow(clippy::useless_conversion)]
    fn save_caller_saved(&mut self, except: Option<u8>) {
        use dynasmrt::{dynasm, DynasmApi};
        let a = &mut self.a;
        dynasm!(a ; .arch x64 ; sub rsp, SAVE_AREA);
        for (k, &g) in GPR_CALLER_SAVED.iter().enumerate() {
            if Some(g) != except {
                let off = 8 * k as i32;
                dynasm!(a ; .arch x64 ; mov [rsp + off], Rq(g));
            }
        }
        for x in 0..XMM_ALLOCATABLE {
            let off = 8 * (GPR_CALLER_SAVED.len() as i32 + x as i32);
            dynasm!(a ; .arch x64 ; movsd [rsp + off], Rx(x));
        }
    }

    /// The registers [`Self::save_caller_saved`] saved, and the area popped.
    #[allow(clippy::useless_conversion)]
    fn restore_caller_saved(&mut self, except: Option<u8>) {
        use dynasmrt::{dynasm, DynasmApi};
        let a = &mut self.a;
        for x in 0..XMM_ALLOCATABLE {
            let off = 8 * (GPR_CALLER_SAVED.len() as i32 + x as i32);
            dynasm!(a ; .arch x64 ; movsd Rx(x), [rsp + off]);
        }
        for (k, &g) in GPR_CALLER_SAVED.iter().enumerate() {
            if Some(g) != except {
                let off = 8 * k as i32;
                dynasm!(a ; .arch x64 ; mov Rq(g), [rsp + off]);
            }
        }
        dynasm!(a ; .arch x64 ; add rsp, SAVE_AREA);
    }

    /// After a residual call: a safe point of the collector. The call may have allocated
    /// objects of the heap (natively, through `Gc::new`) until the heap wants a collection,
    /// and the loop may allocate nothing inline (where the allocation slow path would
    /// collect); so compiled code tests the heap's flag (one load and compare of a
    /// thread-local byte) and, when it is set, calls [`crate::alloc::jit_safepoint`] out of
    /// line with every caller-saved register saved (the call's result among them).
    pub(super) fn safepoint_after_call(&mut self) {
        use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
        let flag = crate::gc::heap::wanted_flag_addr() as i64;
        let (slow, done) = (self.a.new_dynamic_label(), self.a.new_dynamic_label());
        let a = &mut self.a;
        dynasm!(a
            ; .arch x64
            ; mov r11, QWORD flag
            ; cmp BYTE [r11], 0
            ; jne =>slow
            ; =>done
        );
        self.safepoints.push((slow, done));
    }

    /// The out-of-line part of a [`Self::safepoint_after_call`].
    pub(super) fn slow_safepoint(&mut self, slow: dynasmrt::DynamicLabel, done: dynasmrt::DynamicLabel) {
        use dynasmrt::{dynasm, DynasmApi, DynasmLabelApi};
        let f = crate::alloc::jit_safepoint as extern "C" fn() as usize as i64;
        dynasm!(self.a ; .arch x64 ; =>slow);
        self.save_caller_saved(None);
        dynasm!(self.a
            ; .arch x64
            ; mov rax, QWORD f
            ; call rax
        );
        self.restore_caller_saved(None);
        dynasm!(self.a ; .arch x64 ; jmp =>done);
    }

    /// `new` and `new_array`: a call to `jit_alloc(size, align)` (`new` of a small object:
    /// [`Self::bump_new`]).
    pub(super) fn alloc_object(&mut self, i: usize, op: &Op) {
        let f = crate::alloc::jit_alloc as extern "C" fn(usize, usize) -> usize as usize as u64;
        let d = &self.t.get_descr(op.descr.expect("verified")).kind;
        if let (Opcode::New, DescrKind::Size(s)) = (op.opcode, d) {
            if s.align <= 8 && s.size as usize <= crate::alloc::MAX_SMALL {
                let (size, align) = (s.size as usize, s.align as usize);
                return self.bump_new(i, size, align);
            }
        }
        self.ra.before_call(&mut self.a);
        match (op.opcode, d) {
            (Opcode::New, DescrKind::Size(s)) => {
                let moves = [
                    (Loc::Reg(Reg::gpr(RDI)), Loc::Const(s.size as u64)),
                    (Loc::Reg(Reg::gpr(RSI)), Loc::Const(s.align as u64)),
                    (Loc::Reg(Reg::gpr(RAX)), Loc::Const(f)),
                ];
                parallel_move(&mut self.a, &moves);
            }
            (Opcode::NewArray, DescrKind::Array(arr)) => {
                let moves = [
                    (Loc::Reg(Reg::gpr(RDI)), self.loc(op.args[0])),
                    (Loc::Reg(Reg::gpr(RSI)), Loc::Const(8)),
                    (Loc::Reg(Reg::gpr(RAX)), Loc::Const(f)),
                ];
                parallel_move(&mut self.a, &moves);
                // size = base + max(n, 0) * item_size
                asm::mov_imm(&mut self.a, SCRATCH, 0);
                asm::alu(&mut self.a, asm::Alu::Test, RDI, Src::R(RDI));
                asm::cmovs(&mut self.a, RDI, SCRATCH);
                asm::alu(
                    &mut self.a,
                    asm::Alu::Imul,
                    RDI,
                    Src::I(arr.item_size as i32),
                );
                asm::mov_imm(&mut self.a, SCRATCH, arr.base as u64);
                asm::alu(&mut self.a, asm::Alu::Add, RDI, Src::R(SCRATCH));
            }
            _ => unreachable!("the verifier checks descriptor kinds"),
        }
        asm::call_r(&mut self.a, RAX);
        self.ra.after_call();
        self.ra.bind(i, Reg::gpr(RAX));
    }
}

/// A small `new`'s slow path, emitted after the trace's ops ([`Gen::slow_alloc`]).
pub(super) struct SlowAlloc {
    /// Where the fast path jumps when the object does not fit.
    pub slow: dynasmrt::DynamicLabel,
    /// Where the slow path jumps back to.
    pub done: dynasmrt::DynamicLabel,
    /// The result's register.
    pub r: u8,
    /// The object's size and alignment.
    pub size: usize,
    pub align: usize,
}
