//! Jitcode: the register bytecode the codewriter produces for every annotated function, shared by
//! the jitcode-only runner, the tracer and the blackhole interpreter.
//!
//! Owns: the format ([`format`](mod@format)), its construction ([`builder`]), register
//! liveness at guard points ([`liveness`]), register allocation (`regalloc`), the text form ([`print`](mod@print)) and the
//! jitcode-only run mode ([`runner`]).
//! Must not know: Rust syntax (that is `hints-macros`), the typed handle layer (that is
//! [`crate::lower`]), traces, or any guest language.

pub mod builder;
pub mod format;
pub mod hintcheck;
pub mod liveness;
pub mod print;
mod regalloc;
pub mod runner;

pub use builder::{Builder, Label};
pub use format::{
    ArrayDescr, CallDescr, Cmp, Effect, FieldDescr, FloatBinOp, FloatUnOp, HintSite, IntBinOp,
    IntTy, IntUnOp, JitCode, JitCodeRef, Kind, LiveRegs, Op, Overflow, Register, SizeDescr, Value,
};
