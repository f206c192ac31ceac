//! Calling a function that a trace names (`call_*`, `call_pure_*`), from Rust, by its call
//! descriptor. The reference interpreter uses this; compiled code makes the same calls itself.
//!
//! The contract for every function a trace calls: it is `extern "C"`, takes at most 6
//! integer-class arguments (integers, pointers) and 8 floats, each 64 bits wide (`i64`, `u64`,
//! `usize`, pointers, `f64`), and returns one such value or nothing. The codewriter's shims
//! keep it; the verifier checks the counts.

use crate::ir::{CallDescr, Type, Value};

type IntRet =
    extern "C" fn(u64, u64, u64, u64, u64, u64, f64, f64, f64, f64, f64, f64, f64, f64) -> u64;
type FloatRet =
    extern "C" fn(u64, u64, u64, u64, u64, u64, f64, f64, f64, f64, f64, f64, f64, f64) -> f64;

/// Calls the function at `addr` with `args` as `descr` describes; returns its result, or
/// `None` for a function that returns nothing.
///
/// # Safety
/// `addr` must be a function that keeps the contract of the module doc, with the signature
/// `descr` describes, and `args` must have the types `descr.args` lists.
pub unsafe fn call(addr: usize, descr: &CallDescr, args: &[Value]) -> Option<Value> {
    let mut ints = [0u64; 6];
    let mut floats = [0f64; 8];
    let (mut ni, mut nf) = (0, 0);
    for a in args {
        match a {
            Value::Float(f) => {
                floats[nf] = *f;
                nf += 1;
            }
            v => {
                ints[ni] = v.bits();
                ni += 1;
            }
        }
    }
    let [a, b, c, d, e, f] = ints;
    let [g, h, i, j, k, l, m, n] = floats;
    // SAFETY: under the System V x86-64 ABI, integer-class arguments travel in rdi, rsi, rdx,
    // rcx, r8, r9 and float arguments in xmm0-xmm7, each class in its own order whatever the
    // interleaving in the signature; with at most 6 and 8 of them nothing goes on the stack.
    // So calling through a signature with 6 integer and 8 float parameters puts every
    // argument where the callee reads it; the extra registers are never read. The result is
    // in rax (integer class) or xmm0 (float), which the two pointer types tell apart.
    unsafe {
        match descr.ret {
            Type::Float => {
                let fp: FloatRet = std::mem::transmute::<usize, FloatRet>(addr);
                Some(Value::Float(fp(a, b, c, d, e, f, g, h, i, j, k, l, m, n)))
            }
            ret => {
                let fp: IntRet = std::mem::transmute::<usize, IntRet>(addr);
                let r = fp(a, b, c, d, e, f, g, h, i, j, k, l, m, n);
                (ret != Type::Void).then(|| Value::from_bits(ret, r))
            }
        }
    }
}
