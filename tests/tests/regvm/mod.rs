//! A small register VM written with the public hints only: int and float registers, a memory
//! array, a branchy opcode, elidable, look-inside and residual calls, `promote!`.

#![allow(dead_code)]

use std::cell::RefCell;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = imm`
    Li(u8, i64),
    /// `r[a] = r[b] + r[c]` (checked)
    Add(u8, u8, u8),
    /// `r[a] = r[b] - r[c]` (wrapping)
    Sub(u8, u8, u8),
    /// `r[a] = r[b] * r[c]` (wrapping)
    Mul(u8, u8, u8),
    /// `r[a] -= 1`, then jump to `t` if `r[a] != 0` (the loop back-edge)
    DecJnz(u8, u32),
    /// `f[a] = f[a] * x + r[b] as f64`
    Fma(u8, f64, u8),
    /// `r[a] = f[b] as i64`
    FtoI(u8, u8),
    /// Branchy: `if r[a] < r[b] { r[c] += 1 } else { r[c] += 3 }`
    Bump(u8, u8, u8),
    /// `r[a] += square(imm)` (elidable, constant argument: folds)
    AddSq(u8, i64),
    /// `r[a] = hash(r[b])` (look-inside, with `record_known_result!`)
    Hash(u8, u8),
    /// `r[a] = r[b] * promote!(r[c])`
    MulPromoted(u8, u8, u8),
    /// `mem[m] += 1`, then jump to `t` while `mem[m] < r[a]` (a heap write before the loop's
    /// guard, in one step)
    IncMemJlt(u8, u8, u32),
    /// `emit(r[a])` (residual), then `r[a] -= 1` and jump to `t` while `r[a] > 0`
    EmitDecJnz(u8, u32),
    /// `r[a] = (r[b] as u64 / r[c] as u64 + r[b] as u64 % r[c] as u64) as i64` (panics when
    /// `r[c]` is 0)
    UDivRem(u8, u8, u8),
    /// `r[a] = (r[b] as u64 * r[c] as u64) as i64` (checked: panics on unsigned overflow)
    UMul(u8, u8, u8),
    /// `f[a] = f[a] % x + r[b] as u64 as f64`
    FModU(u8, f64, u8),
    /// `r[a] = f[b] as u8 + f[b] as i16 + f[b] as u32 + f[b] as i32 + f[b] as u64` (wrapping)
    FToN(u8, u8),
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
    pub f: [f64; 4],
    pub mem: [i64; 8],
}

impl Vm {
    pub fn new() -> Vm {
        Vm {
            r: [0; 8],
            f: [0.0; 4],
            mem: [0; 8],
        }
    }
}

#[elidable]
pub fn square(x: i64) -> i64 {
    x.wrapping_mul(x)
}

#[elidable]
pub fn hash_helper(x: i64) -> i64 {
    (x ^ 0x5bd1).wrapping_mul(31) & 0xffff
}

#[look_inside]
pub fn hash(x: i64) -> i64 {
    let h = hash_helper(x);
    record_known_result!(h, hash_helper, x);
    h
}

thread_local! {
    pub static OUT: RefCell<Vec<i64>> = const { RefCell::new(Vec::new()) };
}

#[dont_look_inside]
pub fn emit(x: i64) {
    OUT.with(|o| o.borrow_mut().push(x));
}

/// Takes what `emit` printed on this thread.
pub fn take_output() -> Vec<i64> {
    OUT.with(|o| std::mem::take(&mut *o.borrow_mut()))
}

#[jit::interpreter(greens(pc, code), reds(vm))]
pub fn run(code: &Code, vm: &mut Vm) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => vm.r[a as usize] = imm,
            Ins::Add(a, b, c) => vm.r[a as usize] = vm.r[b as usize] + vm.r[c as usize],
            Ins::Sub(a, b, c) => vm.r[a as usize] = vm.r[b as usize].wrapping_sub(vm.r[c as usize]),
            Ins::Mul(a, b, c) => vm.r[a as usize] = vm.r[b as usize].wrapping_mul(vm.r[c as usize]),
            Ins::DecJnz(a, t) => {
                vm.r[a as usize] -= 1;
                if vm.r[a as usize] != 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Fma(a, x, b) => vm.f[a as usize] = vm.f[a as usize] * x + vm.r[b as usize] as f64,
            Ins::FtoI(a, b) => vm.r[a as usize] = vm.f[b as usize] as i64,
            Ins::Bump(a, b, c) => {
                if vm.r[a as usize] < vm.r[b as usize] {
                    vm.r[c as usize] += 1;
                } else {
                    vm.r[c as usize] += 3;
                }
            }
            Ins::AddSq(a, imm) => vm.r[a as usize] = vm.r[a as usize].wrapping_add(square(imm)),
            Ins::Hash(a, b) => vm.r[a as usize] = hash(vm.r[b as usize]),
            Ins::MulPromoted(a, b, c) => {
                let k = promote!(vm.r[c as usize]);
                vm.r[a as usize] = vm.r[b as usize].wrapping_mul(k);
            }
            Ins::IncMemJlt(a, m, t) => {
                vm.mem[m as usize] += 1;
                if vm.mem[m as usize] < vm.r[a as usize] {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::EmitDecJnz(a, t) => {
                emit(vm.r[a as usize]);
                vm.r[a as usize] -= 1;
                if vm.r[a as usize] > 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::UDivRem(a, b, c) => {
                let x = vm.r[b as usize] as u64;
                let y = vm.r[c as usize] as u64;
                vm.r[a as usize] = (x / y).wrapping_add(x % y) as i64;
            }
            Ins::UMul(a, b, c) => {
                vm.r[a as usize] = (vm.r[b as usize] as u64 * vm.r[c as usize] as u64) as i64
            }
            Ins::FModU(a, x, b) => {
                vm.f[a as usize] = vm.f[a as usize] % x + vm.r[b as usize] as u64 as f64
            }
            Ins::FToN(a, b) => {
                let x = vm.f[b as usize];
                let s = (x as u8 as i64).wrapping_add(x as i16 as i64);
                let s = s
                    .wrapping_add(x as u32 as i64)
                    .wrapping_add(x as i32 as i64);
                vm.r[a as usize] = s.wrapping_add(x as u64 as i64);
            }
            Ins::Halt => return vm.r[0],
        }
        pc += 1;
    }
}

/// Runs `ops` with the JIT configured by `params` (`"off"` for the interpreter alone); returns
/// the result, the final VM and what it emitted. The driver is this thread's, with whatever it
/// compiled for earlier programs (each new `Code` may well live where a freed one lived).
pub fn run_with(params: &str, ops: &[Ins], vm: Vm) -> (i64, Vm, Vec<i64>) {
    let code = Code { ops: ops.to_vec() };
    run_code(params, &code, vm)
}

thread_local! {
    /// How many traces and aborts, guard failures, entries, invalidations, inner loops
    /// traced first and loops traced again the driver had counted when the last run started.
    static BEFORE: RefCell<[usize; 7]> = const { RefCell::new([0; 7]) };
}

fn counts(s: &meta_jit::warm::Stats) -> [usize; 7] {
    [
        s.traces.len(),
        s.aborts.len(),
        s.guard_failures,
        s.entries,
        s.invalidated,
        s.inner_loops_first,
        s.retraced,
    ]
}

/// Runs `code` like [`run_with`].
pub fn run_code(params: &str, code: &Code, vm: Vm) -> (i64, Vm, Vec<i64>) {
    run::with_driver(|d| {
        d.set_params(
            "on,threshold=1039,trace_eagerness=200,trace_limit=6000,max_aborts=4,keep_optimized=1",
        )
        .unwrap();
        d.set_params(params).unwrap();
        BEFORE.with(|b| *b.borrow_mut() = d.with_stats(counts));
    });
    let mut vm = vm;
    take_output();
    let r = run(code, &mut vm);
    (r, vm, take_output())
}

/// What the driver did on this thread during the last run (times are left out).
pub fn stats() -> meta_jit::warm::Stats {
    let [traces, aborts, guard_failures, entries, invalidated, inner_loops_first, retraced] =
        BEFORE.with(|b| *b.borrow());
    run::with_driver(|d| {
        d.with_stats(|now| meta_jit::warm::Stats {
            traces: now.traces[traces..].to_vec(),
            aborts: now.aborts[aborts..].to_vec(),
            guard_failures: now.guard_failures - guard_failures,
            entries: now.entries - entries,
            invalidated: now.invalidated - invalidated,
            inner_loops_first: now.inner_loops_first - inner_loops_first,
            retraced: now.retraced - retraced,
            ..Default::default()
        })
    })
}
