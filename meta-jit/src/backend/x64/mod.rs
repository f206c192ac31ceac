//! The x86-64 code generator: turns one verified trace into position-independent machine code
//! plus the tables the runtime needs to read its exits. It does not own executable memory or
//! know how traces are linked together beyond the addresses it is given ([`Link`]); the driver
//! in [`crate::backend`] does that.
//!
//! Files: [`regs`] (registers, locations, frame layout), [`asm`] (instruction encodings),
//! [`addr`] (address folding), [`liveness`], [`regalloc`], [`moves`] (parallel moves), [`lower`] (the walk over the trace,
//! entry and exits), and one file per family of ops: [`int`], [`float`], [`mem`], [`call`],
//! [`guard`] (guards, label, jump, finish).
//!
//! There is no `unsafe` here: this code only produces bytes. Running them is the driver's
//! business.
#![deny(unsafe_code)]

mod addr;
pub(crate) mod asm;
mod call;
mod float;
mod guard;
mod int;
pub(crate) mod liveness;
mod lower;
mod mem;
pub(crate) mod moves;
pub(crate) mod regalloc;
pub(crate) mod regs;

use crate::ir::{Type, Value};

pub(crate) use lower::compile;

/// What compiled code needs to know about the world outside the trace.
pub(crate) struct Link<'a> {
    /// The number this trace's exit codes carry.
    pub trace_id: u32,
    /// Address of the trace's data block: word 0 is the invalidation flag, word `1 + k` the
    /// bridge address of the `k`-th guard (0: none).
    pub data: usize,
    /// Where a `jump` to target `n` enters the trace that target names, if it is compiled and
    /// linked; otherwise such a jump exits.
    pub targets: &'a dyn Fn(u32) -> Option<Entry>,
    /// Whether loop back-edges count down the deadframe's iteration counter and exit at 0.
    pub count_iterations: bool,
    /// Whether `finish` is where the portal returns (see `crate::backend::RETURN_FLAG`).
    pub returns: bool,
    /// For a bridge: where its parent guard keeps each of the bridge's inputs when it jumps
    /// to the bridge (a register, or a spill slot of the shared frame). The bridge takes its
    /// inputs there, at its placed entry ([`Assembled::placed_entry`]).
    pub inputs_at: Option<&'a [regs::Loc]>,
}

/// The entries of a compiled trace another trace may jump to.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// The inner entry's address (inputs in the deadframe).
    pub inner: usize,
    /// The placed entry's address and the register of each input (`None`: not read), when
    /// every input the trace reads is in a register there.
    pub placed: Option<(usize, Vec<Option<regs::Loc>>)>,
}

/// How compiled code left through one exit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExitKind {
    /// A guard failed.
    Guard {
        /// Its resume id.
        id: u32,
        /// Its op index.
        op: usize,
        /// Its bridge slot (index into the data block, minus 1).
        slot: usize,
    },
    /// `finish`.
    Finish,
    /// A `jump` to a target that is not linked.
    Jump {
        /// The target number.
        target: u32,
    },
    /// The iteration counter ran out at the back-edge.
    Iterations,
}

/// One value an exit hands back: deadframe word `k` (its position) read as `Type`, or a
/// constant that was not stored.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Saved {
    /// Deadframe word at this value's position.
    Frame(Type),
    /// A constant.
    Const(Value),
}

/// One exit of a compiled trace.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExitInfo {
    /// What it is.
    pub kind: ExitKind,
    /// The values it hands back, in order.
    pub values: Box<[Saved]>,
    /// For a guard: where each of those values is when the guard fails (a bridge attached
    /// to the guard takes them there).
    pub at: Box<[regs::Loc]>,
}

/// A compiled trace before it is placed in executable memory.
pub(crate) struct Assembled {
    /// The code (position-independent).
    pub code: Vec<u8>,
    /// Offset of the inner entry (where jumps from other traces come in, inputs in the
    /// deadframe).
    pub inner_entry: usize,
    /// Offset of the placed entry, where the inputs are already where the trace keeps them
    /// ([`Assembled::input_locs`]): the entry of a bridge's parent guard (always there for a
    /// bridge), and of a trace that jumps here (only when every input is in a register).
    pub placed_entry: Option<usize>,
    /// Where each input is at the placed entry (`None`: the trace never reads it).
    pub input_locs: Vec<Option<regs::Loc>>,
    /// The exits, indexed by the low 32 bits of the exit code.
    pub exits: Vec<ExitInfo>,
    /// Start offset of each op's code, for the disassembly.
    pub op_starts: Vec<(usize, usize)>,
    /// Where the ops' code ends (the out-of-line slow paths, exit stubs and epilogue follow).
    pub ops_end: usize,
    /// Start offset of each out-of-line exit stub, with its exit index.
    pub stub_starts: Vec<(u32, usize)>,
    /// Offset of the epilogue, and of the constant pool (data, not code).
    pub epilogue: usize,
    /// Offset where the constant pool starts.
    pub pool: usize,
    /// How many deadframe value words this trace reads or writes.
    pub frame_values: usize,
    /// Spill slots used.
    pub slots: u32,
    /// For each bridge slot, the offset of the code its guard's stub goes on with while no
    /// bridge is attached: the slot's data word holds that address then, the bridge's entry
    /// once one is (the stub is one indirect jump through the word).
    pub no_bridge: Vec<u32>,
    /// Jumps to other traces, each the offset of a `mov r11, target; jmp r11` (at least 9
    /// bytes) and the target: [`patch_far_jumps`] makes them `jmp rel32` where they reach.
    pub far_jumps: Vec<(u32, u64)>,
}

/// Rewrites each jump of `far_jumps` in `code`, placed at `addr`, as a direct `jmp rel32`
/// (then a `nop` to the end of the old sequence) when the target is within 2 GiB of it.
pub(crate) fn patch_far_jumps(addr: usize, code: &mut [u8], far_jumps: &[(u32, u64)]) {
    for &(at, to) in far_jumps {
        let at = at as usize;
        let next = (addr + at + 5) as i128;
        let Ok(rel) = i32::try_from(to as i128 - next) else {
            continue;
        };
        // `mov r11d, imm32` (41 BB) is 6 bytes, `mov r11, imm64` (49 BB) 10, `jmp r11` 3.
        let len = match (code[at], code[at + 1]) {
            (0x41, 0xBB) => 9,
            (0x49, 0xBB) => 13,
            _ => continue,
        };
        if code[at + len - 3..at + len] != [0x41, 0xFF, 0xE3] {
            continue;
        }
        code[at] = 0xE9;
        code[at + 1..at + 5].copy_from_slice(&rel.to_le_bytes());
        // One long `nop` for the rest (never executed: it reads better in a listing).
        let pad: &[u8] = if len == 9 {
            &[0x0F, 0x1F, 0x40, 0x00]
        } else {
            &[0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00]
        };
        code[at + 5..at + len].copy_from_slice(pad);
    }
}

/// An error that stops compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError(pub String);

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot compile: {}", self.0)
    }
}

impl std::error::Error for CompileError {}
