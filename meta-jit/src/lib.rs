//! meta-jit: a meta-tracing JIT framework for interpreters written in Rust.
//!
//! The pipeline, stage by stage (each a module):
//! - [`ir`]: the trace IR, its text form (printer and parser) and its verifier;
//! - [`interp`]: the reference trace interpreter, the oracle for the optimizer and the backend;
//! - [`opt`]: the one-pass optimizer (union-find replacement, one module per concern);
//! - [`backend`]: the x86-64 backend (dynasmrt): compiles traces, runs them, attaches bridges;
//! - [`testing`]: random traces for property tests, and the deep comparison of two runs.
#![deny(missing_docs)]

pub mod alloc;
pub mod backend;
pub mod call;
pub mod interp;
pub mod ir;
pub mod opt;
pub mod testing;
