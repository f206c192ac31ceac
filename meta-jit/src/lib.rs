//! meta-jit: a meta-tracing JIT framework for interpreters written in Rust, in the spirit of
//! RPython. See the book for the interpreter author's view and the design.
#![deny(missing_docs)]

// The code the hint macros generate names this crate as `::meta_jit`, also inside it.
extern crate self as meta_jit;

pub mod check;
pub mod hints;
pub mod jitcode;
pub mod lower;
