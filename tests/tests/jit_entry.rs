//! Function-entry traces: a VM whose guest calls run the portal again, and whose functions
//! have no loop, is compiled only from its functions' entries (`function_entry=1`). The
//! JIT-off run is the oracle each time.

mod entryvm;

use entryvm::{run, Op, Prog};

/// Runs function 0 of `prog` on each argument with the JIT parameters `params` (the driver
/// reset first); returns the results and the driver's statistics.
fn go(params: &str, prog: &Prog, args: &[i64]) -> (Vec<i64>, meta_jit::warm::Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
    });
    let r = args.iter().map(|&a| run(prog, 0, a)).collect();
    (r, run::with_driver(|d| d.stats()))
}

const HOT: &str = "on,threshold=3,trace_eagerness=3,function_entry=1";

#[test]
fn recursive_fib_runs_its_function_entry_trace() {
    let prog = entryvm::fib();
    let args: Vec<i64> = (0..18).collect();
    let (off, _) = go("off", &prog, &args);
    assert_eq!(off[17], 1597);
    let (on, s) = go(HOT, &prog, &args);
    assert_eq!(on, off, "{}", s.summary());
    // fib has no loop: its one trace starts at its entry and ends at its return.
    assert_eq!(s.loops(), 0, "{}", s.summary());
    assert!(s.entry_traces() >= 1, "{}", s.summary());
    // Nearly every call (10,000 of them for fib(17) alone) runs compiled code.
    assert!(s.entries >= 10_000, "{}", s.summary());
    // Without the parameter, no entry is counted.
    let (plain, s) = go("on,threshold=3,function_entry=0", &prog, &args);
    assert_eq!(plain, off);
    assert_eq!(s.traces.len(), 0, "{}", s.summary());
}

#[test]
fn an_entry_trace_left_through_a_guard_finishes_the_call_in_the_interpreter() {
    // The entry is traced on odd arguments (all the first calls), then runs on even ones:
    // its guard on `arg & 1` fails, the blackhole interpreter and the interpreter finish the
    // call, and after enough failures a bridge does.
    let prog = Prog::new(&[&[Op::Odd(1), Op::Mix(5), Op::Odd(2), Op::Ret]]);
    let args: Vec<i64> = (0..400)
        .map(|i| if i < 100 { 2 * i + 1 } else { i })
        .collect();
    let (off, _) = go("off", &prog, &args);
    let (on, s) = go(HOT, &prog, &args);
    assert_eq!(on, off, "{}", s.summary());
    assert!(s.entry_traces() >= 1, "{}", s.summary());
    assert!(s.guard_failures >= 1, "{}", s.summary());
}

#[test]
fn guest_recursion_ten_thousand_deep_runs_entry_traces() {
    // Each level mixes and calls itself with `arg - 1`: 10,000 nested portal runs. In the
    // first run, the third level is traced, and the levels below it run in the interpreter
    // (a nested run while the driver traces); in the second, every level runs the compiled
    // entry trace, called from the compiled entry trace of the level above.
    let out = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(|| {
            let prog = Prog::new(&[&[Op::Lt(1), Op::Mix(7), Op::Rec { f: 0, k: 1 }, Op::Ret]]);
            let (off, _) = go("off", &prog, &[10_000, 10_000]);
            let (on, s) = go(HOT, &prog, &[10_000, 10_000]);
            (off, on, s.entry_traces(), s.entries, s.summary())
        })
        .unwrap()
        .join()
        .unwrap();
    let (off, on, traces, entries, summary) = out;
    assert_eq!(on, off, "{summary}");
    assert!(traces >= 1, "{summary}");
    assert!(entries >= 10_000, "{summary}");
}
