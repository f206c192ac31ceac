//! What a guard failure without a bridge costs in allocations: the compiled loop's guard fails,
//! the driver rebuilds the interpreter's frames from the guard's resume data, the blackhole
//! interpreter runs them to the next merge point, the interpreter goes on to the loop's
//! `can_enter_jit!` and enters the compiled loop again. A guest loop whose rare branch never
//! gets a bridge (or gets it late: a bridge comes after `trace_eagerness` failures) pays this
//! path on every failure. A counting global allocator measures it; this test binary holds
//! nothing else.

mod counting;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<u8>,
}

/// Counts `n` down to 0; op 0 adds 3 to `acc`, or 1000 when `n` is a multiple of 16 (the
/// branch the loop's trace does not take, a guard failure every 16 turns); op 1 counts down
/// and loops.
#[jit::interpreter(greens(pc, code), reds(acc, n))]
fn run(code: &Code, mut acc: i64, mut n: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            0 => {
                if n & 15 == 0 {
                    acc += 1000;
                } else {
                    acc += 3;
                }
            }
            _ => {
                n -= 1;
                if n > 0 {
                    pc = 0;
                    can_enter_jit!();
                    continue;
                }
                return acc;
            }
        }
        pc += 1;
    }
}

/// What `run(code, 0, n)` returns.
fn expected(n: i64) -> i64 {
    (1..=n).map(|k| if k & 15 == 0 { 1000 } else { 3 }).sum()
}

#[test]
fn a_guard_failure_without_a_bridge_allocates_little() {
    let code = Code { ops: vec![0, 1] };
    // No bridge ever: every failure takes the driver's path back to the interpreter.
    run::with_driver(|d| {
        d.reset();
        d.set_params("threshold=5,trace_eagerness=1000000").unwrap()
    });
    let warm_n = 16 * 20 + 1;
    assert_eq!(run(&code, 0, warm_n), expected(warm_n));
    let before = run::with_driver(|d| d.stats());
    assert_eq!(before.loops(), 1, "{}", before.summary());
    let n = 16 * 1000 + 1;
    let a0 = counting::allocations();
    let got = run(&code, 0, n);
    let allocs = counting::allocations() - a0;
    assert_eq!(got, expected(n));
    let after = run::with_driver(|d| d.stats());
    let failures = after.guard_failures - before.guard_failures;
    // One a turn of 16, and the loop's last turn.
    assert_eq!(failures, 1001, "{}", after.summary());
    assert_eq!(
        after.traces.len(),
        before.traces.len(),
        "{}",
        after.summary()
    );
    // Measured: 6,005 allocations for 1,001 failures (11,009 before the driver read the
    // frames straight from the encoded resume data and the blackhole interpreter made room
    // for the reds in the greens' list): the values the exit saved, the list of frames, two
    // register files of the one frame, the greens and the reds where the blackhole
    // interpreter stops.
    // Debug builds also check each failure's frames against the general decoder of resume
    // data (`Exits::frames`), which allocates 7 more (13,012 measured).
    let per_failure = if cfg!(debug_assertions) { 13 } else { 6 };
    assert!(
        allocs <= per_failure * failures + 5,
        "{allocs} allocations for {failures} guard failures"
    );
}
