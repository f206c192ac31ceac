//! What entering compiled code from the interpreter costs in allocations: a portal call whose
//! loop is compiled enters the loop's code from its `can_enter_jit!` and leaves it through a
//! `finish`. The driver's path from the hint to the machine code and back allocates only the
//! values it hands back (one `Vec`), so that a loop entered often (an inner loop of a function
//! called in a loop, a portal run again from a call) does not pay the allocator on every
//! entry. A counting global allocator measures it; this test binary holds nothing else.

mod counting;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<u8>,
}

/// Sums `k * 3` for `k` from `n` down to 1: op 0 adds, op 1 counts down and loops.
#[jit::interpreter(greens(pc, code), reds(acc, n))]
fn run(code: &Code, mut acc: i64, mut n: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            0 => acc += n * 3,
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

/// Warms `code` up under `params` (200 calls), checks the warm driver with `warm`, then
/// makes `calls` more calls: the allocations they made. Every call must enter compiled code
/// once, and nothing new may be compiled.
fn allocations_of_calls(
    code: &Code,
    params: &str,
    calls: i64,
    warm: impl Fn(&meta_jit::warm::Stats) -> bool,
) -> usize {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap()
    });
    for _ in 0..200 {
        assert_eq!(run(code, 0, 10), 165);
    }
    let before = run::with_driver(|d| d.stats());
    assert!(warm(&before), "{}", before.summary());
    let a0 = counting::allocations();
    let mut sum = 0;
    for _ in 0..calls {
        sum += run(code, 0, 10);
    }
    let allocs = counting::allocations() - a0;
    assert_eq!(sum, 165 * calls);
    let after = run::with_driver(|d| d.stats());
    assert_eq!(
        after.entries - before.entries,
        calls as usize,
        "{}",
        after.summary()
    );
    assert_eq!(
        after.traces.len(),
        before.traces.len(),
        "{}",
        after.summary()
    );
    allocs
}

#[test]
fn entering_compiled_code_allocates_only_its_result() {
    let code = Code { ops: vec![0, 1] };
    let calls = 1000;
    // The loop and the bridge that leaves it are compiled; one allocation a call: the values
    // the code's `finish` hands back (measured: 1000 allocations for 1000 calls; 3000 before
    // the driver's fast path for compiled loops).
    let allocs = allocations_of_calls(&code, "threshold=5,trace_eagerness=3", calls, |s| {
        s.loops() == 1
    });
    assert!(
        allocs <= calls as usize,
        "{allocs} allocations for {calls} entries"
    );
    // With function-entry traces, each call enters its entry trace at the first merge point,
    // on the same path: one allocation a call (measured: 1000 for 1000 calls; 4000 before the
    // fast path took entries too).
    let params = "threshold=5,trace_eagerness=3,function_entry=1";
    let allocs = allocations_of_calls(&code, params, calls, |s| s.entry_traces() >= 1);
    assert!(
        allocs <= calls as usize,
        "{allocs} allocations for {calls} function entries"
    );
}
