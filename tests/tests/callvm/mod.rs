//! A small register VM with guest calls, written with the public hints only. A call pushes a
//! frame on the VM's own stack (the return pc and the callee-saved registers `r4`..`r6`) and
//! continues in the same dispatch loop; a return pops it. Calls nest at most `MAX_DEPTH`
//! deep: a call at that depth does nothing, so every program terminates. The loop that gets
//! compiled is the main program's `DecJnz`; a trace of it runs through the calls its body
//! makes (inlined, as the tracer follows the interpreter), and guards fail inside them
//! (early returns, the depth limit, a different callee path).

#![allow(dead_code)]

use meta_jit::hints as jit;
use meta_jit::hints::*;

/// How deep calls nest.
pub const MAX_DEPTH: i64 = 5;
/// Words of one frame on the stack: the return pc and three saved registers.
const FRAME: i64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = imm`
    Li(u8, i64),
    /// `r[a] = r[b] + r[c]` (wrapping)
    Add(u8, u8, u8),
    /// `r[a] = r[b] - r[c]` (wrapping)
    Sub(u8, u8, u8),
    /// `r[a] = r[b] * r[c]` (wrapping)
    Mul(u8, u8, u8),
    /// `r[a] = (r[b] < r[c]) as i64`
    Lt(u8, u8, u8),
    /// Calls the function at `t` (does nothing at depth `MAX_DEPTH`).
    Gosub(u32),
    /// Calls the function at `t` as `Gosub` does, whose entry is then a merge point where
    /// tracing may start and close (as an interpreter that makes every function entry a loop
    /// header, for recursion, does).
    GosubMerge(u32),
    /// Returns to the caller, restoring `r4`..`r6`.
    Ret,
    /// Returns early if `r[a] < 0`.
    RetIfNeg(u8),
    /// Returns early if `r[a]` is odd.
    RetIfOdd(u8),
    /// `r[a] -= 1`, then jump to `t` if `r[a] != 0` (the loop back-edge)
    DecJnz(u8, u32),
    /// Stop; the result is `r[0]`.
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Vm {
    pub r: [i64; 8],
    /// Frames, `FRAME` words each.
    pub stack: [i64; 20],
    /// How many frames are on the stack.
    pub depth: i64,
    /// Calls made (those at the depth limit included).
    pub calls: i64,
}

impl Vm {
    pub fn new() -> Vm {
        Vm {
            r: [0; 8],
            stack: [0; 20],
            depth: 0,
            calls: 0,
        }
    }
}

/// Pushes a frame that returns to `back`, unless calls are `MAX_DEPTH` deep (false).
#[look_inside]
fn push(vm: &mut Vm, back: usize) -> bool {
    vm.calls += 1;
    if vm.depth >= MAX_DEPTH {
        return false;
    }
    let base = (vm.depth * FRAME) as usize;
    vm.stack[base] = back as i64;
    vm.stack[base + 1] = vm.r[4];
    vm.stack[base + 2] = vm.r[5];
    vm.stack[base + 3] = vm.r[6];
    vm.depth += 1;
    true
}

#[look_inside]
fn ret(vm: &mut Vm) -> usize {
    vm.depth -= 1;
    let base = (vm.depth * FRAME) as usize;
    vm.r[4] = vm.stack[base + 1];
    vm.r[5] = vm.stack[base + 2];
    vm.r[6] = vm.stack[base + 3];
    vm.stack[base] as usize
}

#[jit::interpreter(greens(pc, code), reds(vm))]
pub fn run(code: &Code, vm: &mut Vm) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => vm.r[a as usize] = imm,
            Ins::Add(a, b, c) => vm.r[a as usize] = vm.r[b as usize].wrapping_add(vm.r[c as usize]),
            Ins::Sub(a, b, c) => vm.r[a as usize] = vm.r[b as usize].wrapping_sub(vm.r[c as usize]),
            Ins::Mul(a, b, c) => vm.r[a as usize] = vm.r[b as usize].wrapping_mul(vm.r[c as usize]),
            Ins::Lt(a, b, c) => vm.r[a as usize] = (vm.r[b as usize] < vm.r[c as usize]) as i64,
            Ins::Gosub(t) => {
                if push(vm, pc + 1) {
                    pc = t as usize;
                    continue;
                }
            }
            Ins::GosubMerge(t) => {
                if push(vm, pc + 1) {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Ret => {
                pc = ret(vm);
                continue;
            }
            Ins::RetIfNeg(a) => {
                if vm.r[a as usize] < 0 {
                    pc = ret(vm);
                    continue;
                }
            }
            Ins::RetIfOdd(a) => {
                if vm.r[a as usize] & 1 != 0 {
                    pc = ret(vm);
                    continue;
                }
            }
            Ins::DecJnz(a, t) => {
                vm.r[a as usize] -= 1;
                if vm.r[a as usize] != 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return vm.r[0],
        }
        pc += 1;
    }
}

/// How the program runs: with the JIT configured by these parameters (`"off"` for the
/// interpreter alone), or on the interpreter's jitcode alone.
#[derive(Clone, Copy, Debug)]
pub enum Mode<'a> {
    Jit(&'a str),
    Jitcode,
}

/// Runs `ops` from a fresh VM; returns the result and the final VM. The driver is this
/// thread's, with whatever it compiled for earlier programs.
pub fn run_mode(mode: Mode, ops: &[Ins]) -> (i64, Vm) {
    let code = Code { ops: ops.to_vec() };
    let mut vm = Vm::new();
    let r = match mode {
        Mode::Jit(params) => {
            run::with_driver(|d| {
                d.set_params("on,threshold=1039,trace_eagerness=200,trace_limit=6000,max_aborts=4,keep_optimized=1")
                    .unwrap();
                d.set_params(params).unwrap();
            });
            run(&code, &mut vm)
        }
        Mode::Jitcode => run::run_jitcode(&code, &mut vm),
    };
    (r, vm)
}

/// The driver's statistics on this thread so far.
pub fn stats() -> meta_jit::warm::Stats {
    run::with_driver(|d| d.stats())
}
