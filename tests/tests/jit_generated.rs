//! JIT on vs off on generated register-VM programs: a counted loop around a random body (int
//! and float arithmetic, signed and unsigned, float casts, the branchy opcode, calls of every
//! policy, promotion), with a low
//! threshold and trace eagerness so loops, guard failures and bridges all happen. The result,
//! the VM and what it emitted (or the panic) must be the same. One driver runs them all, with
//! no reset in between, so each program meets the compiled code of the ones before it at the
//! same addresses.

mod regvm;

use std::panic::{catch_unwind, AssertUnwindSafe};

use meta_jit::testing::panic_message;
use quickcheck::{Arbitrary, Gen, TestResult};
use regvm::{run_with, stats, Ins, Vm};

#[derive(Clone, Debug)]
struct Program(Vec<Ins>);

impl Arbitrary for Program {
    fn arbitrary(g: &mut Gen) -> Program {
        let reg = |g: &mut Gen| u8::arbitrary(g) % 7;
        let n = i64::from(u8::arbitrary(g) % 60) + 1;
        let mut ops = vec![Ins::Li(7, n), Ins::Li(1, 3), Ins::Li(2, -5)];
        let body = usize::arbitrary(g) % 8 + 1;
        for _ in 0..body {
            let (a, b, c) = (reg(g), reg(g), reg(g));
            ops.push(match u8::arbitrary(g) % 15 {
                0 => Ins::Li(a, i64::from(i8::arbitrary(g))),
                1 => Ins::Add(a, b, c),
                2 => Ins::Sub(a, b, c),
                3 => Ins::Mul(a, b, c),
                4 => Ins::Fma(a % 4, *g.choose(&[0.5, 1.5, -2.0]).unwrap(), b),
                5 => Ins::FtoI(a, b % 4),
                6 => Ins::Bump(a, 7, c),
                7 => Ins::AddSq(a, i64::from(i8::arbitrary(g))),
                8 => Ins::Hash(a, b),
                9 => Ins::MulPromoted(a, b, c),
                10 => Ins::UDivRem(a, b, c),
                11 => Ins::UMul(a, b, c),
                12 => Ins::FModU(a % 4, *g.choose(&[2.5, -0.75, 1e10]).unwrap(), b),
                13 => Ins::FToN(a, b % 4),
                _ => Ins::Bump(a, b, c),
            });
        }
        ops.push(Ins::DecJnz(7, 3));
        ops.push(Ins::Halt);
        Program(ops)
    }
}

type Run = Result<(i64, Vm, Vec<i64>), String>;

fn outcome(params: &str, ops: &[Ins]) -> Run {
    catch_unwind(AssertUnwindSafe(|| run_with(params, ops, Vm::new())))
        .map_err(|e| panic_message(&*e))
}

#[test]
fn jit_on_and_off_agree_on_generated_programs() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static LOOPS: AtomicUsize = AtomicUsize::new(0);
    static BRIDGES: AtomicUsize = AtomicUsize::new(0);
    static INVALIDATED: AtomicUsize = AtomicUsize::new(0);
    fn prop(p: Program) -> TestResult {
        let off = outcome("off", &p.0);
        let on = outcome("threshold=2,trace_eagerness=2", &p.0);
        let s = stats();
        LOOPS.fetch_add(s.loops(), Relaxed);
        BRIDGES.fetch_add(s.bridges(), Relaxed);
        INVALIDATED.fetch_add(s.invalidated, Relaxed);
        if on == off {
            TestResult::passed()
        } else {
            TestResult::error(format!("{:?}\noff: {off:?}\non:  {on:?}", p.0))
        }
    }
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // A fixed seed (unless `METAJIT_PROP_SEED` picks another): the counts asserted below
    // come from the same programs on every run.
    meta_jit::testing::prop_runner(0x6a67, 0, 2000).quickcheck(prop as fn(Program) -> TestResult);
    std::panic::set_hook(prev);
    let (l, b) = (LOOPS.load(Relaxed), BRIDGES.load(Relaxed));
    let i = INVALIDATED.load(Relaxed);
    println!("loops: {l}, bridges: {b}, invalidated: {i}");
    assert!(l > 200 && b > 20, "loops: {l}, bridges: {b}");
    // Every program's `Code` lives where the previous one did, and the driver is never
    // reset: compiled code of earlier programs is found out and thrown away.
    assert!(i > 100, "invalidated: {i}");
}
