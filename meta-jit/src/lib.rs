//! meta-jit: a meta-tracing JIT framework for interpreters written in Rust, in the spirit of
//! RPython. See the book for the interpreter author's view and the design.
//!
//! The parts, each a module:
//! - [`hints`]: what an interpreter author writes (the hint macros and attributes, re-exported
//!   from `hints-macros`), [`lower`]: the typed layer the macros' generated code calls, and
//!   [`jitcode`]: the register bytecode it builds, with the jitcode-only runner;
//! - [`check`]: checked mode and the quickcheck helpers for hints;
//! - [`trace`]: the tracer (meta-interpreter), which runs jitcode and records trace IR;
//! - [`warm`]: the driver (one per portal): counts loops, traces, compiles and enters them,
//!   handles guard failures and bridges; [`log`]: the JIT log it prints (`METAJIT_LOG`);
//! - [`resume`]: resume data, from a failed guard back to jitcode frames (and to the tracer's
//!   frames for a bridge), and [`blackhole`]: the blackhole interpreter that runs those frames
//!   to the next merge point;
//! - [`ir`]: the trace IR, its text form (printer and parser) and its verifier;
//! - [`interp`]: the reference trace interpreter, the oracle for the optimizer and the backend;
//! - [`opt`]: the one-pass optimizer (union-find replacement, one module per concern);
//! - [`backend`]: the x86-64 backend (dynasmrt): compiles traces, runs them, attaches bridges;
//! - [`alloc`], [`call`]: how traces allocate and call out;
//! - [`testing`]: random traces for property tests, and the deep comparison of two runs.
#![deny(missing_docs)]

// The code the hint macros generate names this crate as `::meta_jit`, also inside it.
extern crate self as meta_jit;

pub mod alloc;
pub mod backend;
pub mod blackhole;
pub mod call;
pub mod check;
pub mod hints;
pub mod interp;
pub mod ir;
pub mod jitcode;
pub mod log;
pub mod lower;
pub mod opt;
pub mod resume;
pub mod testing;
pub mod trace;
pub mod warm;
