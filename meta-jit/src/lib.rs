//! meta-jit: a meta-tracing JIT framework for interpreters written in Rust, in the spirit of
//! RPython. See the book for the interpreter author's view and the design.
//!
//! The parts, each a module:
//! - [`hints`]: what an interpreter author writes (the hint macros and attributes, re-exported
//!   from `hints-macros`), [`lower`]: the typed layer the macros' generated code calls, and
//!   [`jitcode`]: the register bytecode it builds, with the jitcode-only runner;
//! - [`check`]: checked mode and the quickcheck helpers for hints;
//! - `trace`: the tracer (meta-interpreter), which runs jitcode and records trace IR;
//! - [`warm`]: the driver (one per portal): counts loops, traces, compiles and enters them,
//!   handles guard failures and bridges; [`log`]: the JIT log it prints (`METAJIT_LOG`);
//! - `resume`: resume data, from a failed guard back to jitcode frames (and to the tracer's
//!   frames for a bridge), and `blackhole`: the blackhole interpreter that runs those frames
//!   to the next merge point;
//! - `ir`: the trace IR, its text form (printer and parser) and its verifier;
//! - `interp`: the reference trace interpreter, the oracle for the optimizer and the backend;
//! - `opt`: the one-pass optimizer (union-find replacement, one module per concern);
//! - `backend`: the x86-64 backend (dynasmrt): compiles traces, runs them, attaches bridges;
//! - `alloc`, `call`: how traces allocate and call out;
//! - `testing`: random traces for property tests, and the deep comparison of two runs.
//!
//! The public surface is what an interpreter author uses: [`hints`], the driver in [`warm`] with
//! its parameters and statistics, [`check`] and the [`log`]; [`jitcode`] and [`lower`] are
//! public because the code the hint macros generate calls them. The other modules are
//! internals: public only with the `internals` feature (the book's chapters, the tests and tools
//! that read traces use it), crate-private otherwise. Features: `disasm` (default: machine
//! code in the log and the trace viewer, through iced-x86), `testing` (the quickcheck helpers:
//! `check::check_hints` and `testing`), `internals`.
#![deny(missing_docs)]
// Without `internals`, what only the tests, the book and tools use of the internals is unused.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

// The code the hint macros generate names this crate as `::meta_jit`, also inside it.
extern crate self as meta_jit;

/// Declares internal modules: public with the `internals` feature, crate-private without.
macro_rules! internals {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[cfg(feature = "internals")]
        pub mod $name;
        $(#[$doc])*
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

pub mod check;
pub mod gc;
pub mod hints;
pub mod jitcode;
pub mod log;
pub mod lower;
pub mod warm;

internals! {
    alloc;
    backend;
    blackhole;
    call;
    interp;
    ir;
    opt;
    resume;
    trace;
}

#[cfg(any(test, feature = "testing"))]
pub mod testing;
