//! Registers, locations and the frame layout of compiled code: the vocabulary the allocator,
//! the lowering and the exits share. It knows nothing of the IR.
//!
//! Frame (rbp-based, built by the trace prologue, the same for every trace so that exits and
//! jumps between traces can use it whatever trace they are in):
//!
//! ```text
//! [rbp + 8]        return address into Rust
//! [rbp]            caller's rbp
//! [rbp - 8 .. -40] rbx, r12, r13, r14, r15 (callee-saved, restored by the epilogue)
//! [rbp - 48]       the deadframe pointer (the argument of the entry)
//! [rbp - 56 - 8k]  spill slot k
//! rsp = rbp - 48 - frame size (a multiple of 16, so calls see an aligned stack)
//! ```
//!
//! `r11` and `xmm15` are scratch registers that are never allocated: the lowering uses them
//! inside one op's instruction sequence, the parallel move to break cycles.

/// A register: 0..16 are the general-purpose registers in hardware order, 16..32 the xmm
/// registers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Reg(pub u8);

impl Reg {
    /// The general-purpose register with hardware number `n`.
    pub const fn gpr(n: u8) -> Reg {
        Reg(n)
    }
    /// The xmm register `n`.
    pub const fn xmm(n: u8) -> Reg {
        Reg(16 + n)
    }
    /// Whether it is an xmm register.
    pub fn is_xmm(self) -> bool {
        self.0 >= 16
    }
    /// The hardware number (0..16) within its class.
    pub fn n(self) -> u8 {
        self.0 & 15
    }
    /// The bit of this register in a [`RegSet`].
    pub fn bit(self) -> u32 {
        1 << self.0
    }
}

/// A set of registers, one bit per [`Reg`].
pub(crate) type RegSet = u32;

pub(crate) const RAX: u8 = 0;
pub(crate) const RCX: u8 = 1;
pub(crate) const RDX: u8 = 2;
pub(crate) const RBX: u8 = 3;
pub(crate) const RSP: u8 = 4;
pub(crate) const RBP: u8 = 5;
pub(crate) const RSI: u8 = 6;
pub(crate) const RDI: u8 = 7;
pub(crate) const R8: u8 = 8;
pub(crate) const R9: u8 = 9;
pub(crate) const R10: u8 = 10;
/// The general-purpose scratch register.
pub(crate) const SCRATCH: u8 = 11;
pub(crate) const R12: u8 = 12;
pub(crate) const R13: u8 = 13;
pub(crate) const R14: u8 = 14;
pub(crate) const R15: u8 = 15;
/// The xmm scratch register.
pub(crate) const XSCRATCH: u8 = 15;

/// Allocatable caller-saved general-purpose registers, in order of preference (the ones with
/// fixed roles in division, shifts and calls last).
pub(crate) const GPR_CALLER_SAVED: [u8; 8] = [RSI, RDI, R8, R9, R10, RCX, RDX, RAX];
/// Allocatable callee-saved general-purpose registers.
pub(crate) const GPR_CALLEE_SAVED: [u8; 5] = [RBX, R12, R13, R14, R15];
/// Number of allocatable xmm registers (xmm0..xmm14; all caller-saved in the System V ABI).
pub(crate) const XMM_ALLOCATABLE: u8 = 15;
/// Integer-class argument registers of the System V ABI.
pub(crate) const ARG_GPRS: [u8; 6] = [RDI, RSI, RDX, RCX, R8, R9];

/// Registers a call clobbers (the allocatable ones).
pub(crate) fn caller_saved() -> RegSet {
    let g = GPR_CALLER_SAVED
        .iter()
        .fold(0, |s, &r| s | Reg::gpr(r).bit());
    let x = (0..XMM_ALLOCATABLE).fold(0, |s, r| s | Reg::xmm(r).bit());
    g | x
}

/// Where a value is: a register, a spill slot, or nowhere because it is a constant.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Loc {
    /// In a register.
    Reg(Reg),
    /// In spill slot `k` (`[rbp + slot_disp(k)]`).
    Slot(u32),
    /// A constant with these bits.
    Const(u64),
}

/// Offset from rbp of the saved deadframe pointer.
pub(crate) const CTX_DISP: i32 = -48;
/// Offset from rbp of the stack pointer before the spill area (`rsp` after the prologue).
pub(crate) const FRAME_BASE: i32 = 48;

/// Offset from rbp of spill slot `k`.
pub(crate) fn slot_disp(k: u32) -> i32 {
    -(FRAME_BASE + 8 + 8 * k as i32)
}

/// Byte offset in the deadframe of value `k` (after the iteration counter).
pub(crate) fn frame_value_disp(k: usize) -> i32 {
    8 + 8 * k as i32
}
