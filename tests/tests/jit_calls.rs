//! JIT on, JIT off and jitcode-only on generated programs with guest calls: a counted main
//! loop whose body calls functions, functions that call each other and themselves
//! (recursion, cut at a fixed depth) and return early on a negative or odd register (often
//! the loop counter, so the path through the calls changes every iteration). With a low
//! threshold and trace eagerness, traces run through calls, and guards fail inside them.
//! The result and the final VM (registers, the frame stack, the call count) must be the same
//! in all three modes. One driver runs them all, with no reset in between.

mod callvm;

use callvm::{run_mode, stats, Ins, Mode, Vm};
use quickcheck::{Arbitrary, Gen, TestResult};

#[derive(Clone, Debug)]
struct Program(Vec<Ins>);

/// A straight-line body: arithmetic writing `r0`..`r6` and reading `r0`..`r7` (`r7` is the
/// loop counter, so paths change from one iteration to the next), calls of function
/// `0..functions` (placeholders, fixed up to addresses later; half of them `GosubMerge`, whose
/// callee's entry is a merge point), and early returns when
/// `in_function`.
fn body(g: &mut Gen, len: usize, functions: u32, in_function: bool) -> Vec<Ins> {
    let mut calls = 0;
    (0..len)
        .map(|_| {
            let a = u8::arbitrary(g) % 7;
            let (b, c) = (u8::arbitrary(g) % 8, u8::arbitrary(g) % 8);
            match u8::arbitrary(g) % 10 {
                0 => Ins::Li(a, i64::from(i8::arbitrary(g))),
                1 => Ins::Add(a, b, c),
                2 => Ins::Sub(a, b, c),
                3 => Ins::Mul(a, b, c),
                4 => Ins::Lt(a, b, c),
                5 | 6 if calls < 2 => {
                    calls += 1;
                    // Some calls enter at a merge point: traces start and close there too.
                    if bool::arbitrary(g) {
                        Ins::Gosub(u32::arbitrary(g) % functions)
                    } else {
                        Ins::GosubMerge(u32::arbitrary(g) % functions)
                    }
                }
                7 if in_function => Ins::RetIfNeg(a),
                8 if in_function => Ins::RetIfOdd(if bool::arbitrary(g) { 7 } else { b }),
                _ => Ins::Add(a, a, b),
            }
        })
        .collect()
}

impl Arbitrary for Program {
    fn arbitrary(g: &mut Gen) -> Program {
        let functions = u32::arbitrary(g) % 3 + 1;
        let n = i64::from(u8::arbitrary(g) % 40) + 1;
        let mut ops = vec![Ins::Li(7, n), Ins::Li(1, 3), Ins::Li(2, -5)];
        let main = usize::arbitrary(g) % 6 + 1;
        ops.extend(body(g, main, functions, false));
        ops.push(Ins::DecJnz(7, 3));
        ops.push(Ins::Halt);
        let mut starts = Vec::new();
        for _ in 0..functions {
            starts.push(ops.len() as u32);
            let len = usize::arbitrary(g) % 6 + 1;
            ops.extend(body(g, len, functions, true));
            ops.push(Ins::Ret);
        }
        for op in &mut ops {
            if let Ins::Gosub(f) | Ins::GosubMerge(f) = op {
                *f = starts[*f as usize];
            }
        }
        Program(ops)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Program>> {
        // Replace one instruction at a time by a harmless one; the layout (and so every
        // address) stays.
        let ops = self.0.clone();
        Box::new((0..ops.len()).filter_map(move |k| {
            let simpler = match ops[k] {
                Ins::Add(0, 0, 0) | Ins::DecJnz(..) | Ins::Halt | Ins::Ret => return None,
                Ins::Li(7, n) if n > 1 => Ins::Li(7, n / 2),
                Ins::Li(7, _) => return None,
                _ => Ins::Add(0, 0, 0),
            };
            let mut p = ops.clone();
            p[k] = simpler;
            Some(Program(p))
        }))
    }
}

type Run = Result<(i64, Vm), String>;

fn outcome(mode: Mode, ops: &[Ins]) -> Run {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_mode(mode, ops)))
        .map_err(|e| meta_jit::testing::panic_message(&*e))
}

#[test]
fn jit_on_off_and_jitcode_agree_on_programs_with_calls() {
    fn prop(p: Program) -> TestResult {
        let off = outcome(Mode::Jit("off"), &p.0);
        let jitcode = outcome(Mode::Jitcode, &p.0);
        let on = outcome(Mode::Jit("threshold=2,trace_eagerness=2"), &p.0);
        if off.is_err() {
            return TestResult::error(format!("{:?}\nthe interpreter failed: {off:?}", p.0));
        }
        if on == off && jitcode == off {
            TestResult::passed()
        } else {
            TestResult::error(format!(
                "{:?}\noff:     {off:?}\njitcode: {jitcode:?}\non:      {on:?}",
                p.0
            ))
        }
    }
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    meta_jit::testing::prop_runner(0x6361, 0, 2000).quickcheck(prop as fn(Program) -> TestResult);
    std::panic::set_hook(prev);
    let s = stats();
    println!("{}", s.summary());
    // The programs exercised the JIT: loops compiled through calls, bridges, guard failures.
    // (With the default seed: 1,663 loops, 303 bridges, 2,305 guard failures.)
    assert!(s.loops() > 1000, "{}", s.summary());
    assert!(s.bridges() > 100, "{}", s.summary());
    assert!(s.guard_failures > 2000, "{}", s.summary());
}

#[test]
fn deep_calls_are_cut_at_the_depth_limit() {
    // f calls itself twice: 2^MAX_DEPTH - 1 frames pushed, then every call at the limit is
    // counted and skipped. The three modes agree on the count.
    let ops = vec![
        Ins::Li(7, 50),
        Ins::Li(1, 3),
        Ins::Li(2, -5),
        Ins::Gosub(6),
        Ins::DecJnz(7, 3),
        Ins::Halt,
        Ins::Add(0, 0, 1),
        Ins::Gosub(6),
        Ins::Gosub(6),
        Ins::Ret,
    ];
    let per_call: i64 = (1..=callvm::MAX_DEPTH + 1).map(|d| 1 << (d - 1)).sum();
    let off = outcome(Mode::Jit("off"), &ops).unwrap();
    assert_eq!(off.1.calls, 50 * per_call);
    assert_eq!(off.1.depth, 0);
    assert_eq!(outcome(Mode::Jitcode, &ops).unwrap(), off);
    assert_eq!(
        outcome(Mode::Jit("threshold=2,trace_eagerness=2"), &ops).unwrap(),
        off
    );
}

#[test]
fn function_entries_that_each_pass_the_other_twice_are_no_inner_loops() {
    // The loop calls f twice, then g twice, and both entries are merge points. A trace from
    // the second call of f passes g's entry twice before it comes back to f, and one from the
    // second call of g passes f's twice: each stops to trace the other first. The driver
    // sees the cycle at its second turn and traces that entry no more, so that the
    // loop's trace goes through it (before, the two asked for each other on every turn).
    let ops = vec![
        Ins::Li(7, 2000),
        Ins::Li(1, 3),
        Ins::GosubMerge(8),
        Ins::GosubMerge(8),
        Ins::GosubMerge(10),
        Ins::GosubMerge(10),
        Ins::DecJnz(7, 2),
        Ins::Halt,
        Ins::Add(0, 0, 1),
        Ins::Ret,
        Ins::Sub(0, 0, 7),
        Ins::Ret,
    ];
    let off = outcome(Mode::Jit("off"), &ops).unwrap();
    assert_eq!(off.0, 2000 * 6 - 2 * (1..=2000).sum::<i64>());
    let before = stats();
    let on = outcome(Mode::Jit("threshold=4,trace_eagerness=5"), &ops).unwrap();
    assert_eq!(on, off);
    let s = stats();
    let firsts = s.inner_loops_first - before.inner_loops_first;
    assert!(firsts <= 4, "{firsts} inner loops first: {}", s.summary());
    let cycles = s.aborts[before.aborts.len()..]
        .iter()
        .filter(|a| a.contains("a cycle of loops"))
        .count();
    assert_eq!(cycles, 1, "{}", s.summary());
    assert!(
        s.loops() > before.loops(),
        "nothing compiled: {}",
        s.summary()
    );
    assert!(
        s.entries - before.entries < 100,
        "the loop leaves compiled code: {}",
        s.summary()
    );
}
