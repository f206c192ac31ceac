//! A VM whose every guest call runs the portal again (a native call of the portal for the
//! callee): each guest frame is a native frame of the portal, and a function without a loop
//! is compiled only as a function-entry trace (`function_entry=1`). Shared by `jit_entry.rs`
//! and the `entry_speedup` example (recursive fib).

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    /// Return `arg` when `arg < k`.
    Lt(i64),
    /// `acc += f(arg - k)`: function `f`, run by the portal again.
    Rec { f: u8, k: i64 },
    /// `acc = acc * 3 + k` (wrapping)
    Mix(i64),
    /// `acc += 1` when `arg & k` is not 0.
    Odd(i64),
    /// Return `acc`.
    Ret,
}

#[derive(JitLayout)]
pub struct Func {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout)]
pub struct Prog {
    #[jit(immutable, immutable_items)]
    pub funcs: Vec<Func>,
}

impl Prog {
    /// A program of these functions.
    pub fn new(funcs: &[&[Op]]) -> Prog {
        Prog {
            funcs: funcs.iter().map(|ops| Func { ops: ops.to_vec() }).collect(),
        }
    }
}

/// A guest call: function `f` on `arg`, through the portal.
#[dont_look_inside]
pub fn call(prog: &Prog, f: u64, arg: i64) -> i64 {
    run(prog, f as usize, arg)
}

/// Recursive fib: `fib(n) = n` below 2, else `fib(n - 1) + fib(n - 2)`.
pub fn fib() -> Prog {
    Prog::new(&[&[
        Op::Lt(2),
        Op::Rec { f: 0, k: 1 },
        Op::Rec { f: 0, k: 2 },
        Op::Ret,
    ]])
}

#[jit::interpreter(greens(pc, f, prog), reds(arg, acc))]
pub fn run(prog: &Prog, f: usize, arg: i64) -> i64 {
    let mut pc: usize = 0;
    let mut acc: i64 = 0;
    loop {
        jit_merge_point!();
        match prog.funcs[f].ops[pc] {
            Op::Lt(k) => {
                if arg < k {
                    return arg;
                }
            }
            Op::Rec { f: g, k } => acc = acc.wrapping_add(run(prog, g as usize, arg - k)),
            Op::Mix(k) => acc = acc.wrapping_mul(3).wrapping_add(k),
            Op::Odd(k) => {
                if arg & k != 0 {
                    acc += 1;
                }
            }
            Op::Ret => return acc,
        }
        pc += 1;
    }
}
