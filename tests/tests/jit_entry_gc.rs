//! The collector and calls between compiled traces together: a VM whose every guest call runs
//! the portal again (compiled as `call_assembler`, called directly from machine code) and whose
//! values are boxes of the JIT's heap (`Gc<Num>`). A caller keeps its box in a red across the
//! call, so while the callee allocates and collects in compiled code's slow path, the caller's
//! box lives only in the caller's compiled frame: its registers, its spill slots and the
//! deadframe it keeps on the machine stack for the call. The collector must find it there
//! (it scans the run's stack conservatively); a box freed too early is reused by a later
//! allocation and the sums come out wrong. The JIT-off run, collecting too, is the oracle.

mod xorshift;

use meta_jit::gc::{self, Gc};
use meta_jit::hints as jit;
use meta_jit::hints::*;
use xorshift::Rng;

/// A boxed number.
#[derive(Debug, JitLayout, Trace)]
pub struct Num {
    pub v: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout, Trace)]
#[repr(C, u8)]
pub enum Op {
    /// Returns a new box of `arg` when `arg < k`.
    Lt(i64),
    /// `acc = box(acc + f(arg - k) * m)`: function `f`, run by the portal again.
    Rec { f: u8, k: i64, m: i64 },
    /// `acc = box(acc * 3 + k)` (wrapping)
    Mix(i64),
    /// `i += 1`; back to the function's start while `i < n` (a loop of the outermost call,
    /// where collection happens: its safe point, and compiled code entered from it).
    Again(i64),
    /// Returns `acc`.
    Ret,
}

#[derive(JitLayout, Trace)]
pub struct Func {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout, Trace)]
pub struct Prog {
    #[jit(immutable, immutable_items)]
    pub funcs: Vec<Func>,
}

#[look_inside]
fn boxed(v: i64) -> Gc<Num> {
    Gc::new(Num { v })
}

#[jit::interpreter(greens(pc, f, prog), reds(arg, acc, i))]
pub fn run(prog: &Prog, f: usize, arg: i64, mut acc: Gc<Num>) -> Gc<Num> {
    let mut pc: usize = 0;
    let mut i: i64 = 0;
    loop {
        jit_merge_point!();
        match prog.funcs[f].ops[pc] {
            Op::Lt(k) => {
                if arg < k {
                    return boxed(arg);
                }
            }
            Op::Rec { f: g, k, m } => {
                let r = run(prog, g as usize, arg - k, boxed(0));
                acc = boxed(acc.v.wrapping_add(r.v.wrapping_mul(m)));
            }
            Op::Mix(k) => acc = boxed(acc.v.wrapping_mul(3).wrapping_add(k)),
            Op::Again(n) => {
                i += 1;
                if i < n {
                    pc = 0;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Ret => return acc,
        }
        pc += 1;
    }
}

/// Runs function 0 of `prog` on each argument with the JIT parameters `params`, collecting
/// every `threshold` bytes: the results and the collections made in compiled code.
fn go(params: &str, prog: &Prog, args: &[i64], threshold: usize) -> (Vec<i64>, u64) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
    });
    let c0 = gc::stats().in_compiled_code;
    gc::set_collection_threshold(threshold);
    // SAFETY: the `Gc`s the program uses after a safe point are the portal's reds and what
    // they reach (`Num` and `Prog` implement `Trace`); the results are read before the next
    // portal call.
    unsafe { gc::enable_collection() };
    let r = args.iter().map(|&a| run(prog, 0, a, boxed(0)).v).collect();
    gc::disable_collection();
    gc::set_collection_threshold(0);
    (r, gc::stats().in_compiled_code - c0)
}

const HOT: &str = "on,threshold=3,trace_eagerness=3,function_entry=1";

fn prog(funcs: &[&[Op]]) -> Prog {
    Prog {
        funcs: funcs.iter().map(|o| Func { ops: o.to_vec() }).collect(),
    }
}

/// Function 0 sums `fib(arg)` 20 times in a loop; function 1 is recursive fib with boxes:
/// `fib(n) = n` below 2, else `fib(n - 1) + fib(n - 2)`.
fn fib() -> Prog {
    prog(&[
        &[Op::Rec { f: 1, k: 0, m: 1 }, Op::Again(20), Op::Ret],
        &[
            Op::Lt(2),
            Op::Rec { f: 1, k: 1, m: 1 },
            Op::Rec { f: 1, k: 2, m: 1 },
            Op::Ret,
        ],
    ])
}

#[test]
fn boxes_kept_across_direct_calls_survive_collections_in_the_callee() {
    let p = fib();
    let args: Vec<i64> = (10..21).collect();
    let (off, _) = go("off", &p, &args, 1);
    assert_eq!(off[10], 6765 * 20);
    let (on, in_compiled) = go(HOT, &p, &args, 1);
    assert_eq!(on, off);
    let s = run::with_driver(|d| d.stats());
    assert!(s.assembler_calls > 0, "no direct call: {}", s.summary());
    assert!(in_compiled > 0, "no collection in compiled code");
}

/// A loop calling two or three mutually recursive functions that mix their boxes before and
/// after calls.
fn random_program(rng: &mut Rng) -> Prog {
    let nf = 3 + rng.below(2) as usize;
    let mut funcs: Vec<Vec<Op>> = vec![vec![
        Op::Rec {
            f: 1 + rng.below(nf as u64 - 1) as u8,
            k: 0,
            m: 1,
        },
        Op::Mix(rng.below(10) as i64),
        Op::Again(5 + rng.below(20) as i64),
        Op::Ret,
    ]];
    funcs.extend((1..nf).map(|_| {
        let mut ops = vec![Op::Lt(1 + rng.below(3) as i64)];
        for _ in 0..1 + rng.below(4) {
            ops.push(match rng.below(3) {
                0 => Op::Mix(rng.below(100) as i64),
                _ => Op::Rec {
                    f: 1 + rng.below(nf as u64 - 1) as u8,
                    k: 1 + rng.below(3) as i64,
                    m: rng.below(5) as i64 - 2,
                },
            });
        }
        ops.push(Op::Ret);
        ops
    }));
    let refs: Vec<&[Op]> = funcs.iter().map(|f| f.as_slice()).collect();
    prog(&refs)
}

#[test]
fn random_recursive_programs_with_boxes_agree_through_collections() {
    let programs: u64 = std::env::var("JIT_ENTRY_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(100, |n: u64| n / 10);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compiled_collections = 0;
    for k in 0..programs {
        let p = random_program(&mut rng);
        let args: Vec<i64> = (0..14).collect();
        let (off, _) = go("off", &p, &args, 64);
        let (on, c) = go(HOT, &p, &args, 64);
        compiled_collections += c;
        assert_eq!(
            on,
            off,
            "program {k}: {:?}",
            p.funcs.iter().map(|f| f.ops.clone()).collect::<Vec<_>>()
        );
    }
    assert!(compiled_collections > 0, "no collection in compiled code");
}
