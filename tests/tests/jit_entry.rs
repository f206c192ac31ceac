//! Function-entry traces: a VM whose guest calls run the portal again, and whose functions
//! have no loop, is compiled only from its functions' entries (`function_entry=1`). The
//! JIT-off run is the oracle each time.

mod entryvm;
mod xorshift;

use entryvm::{run, Op, Prog};
use meta_jit::ir::{print, Opcode};
use meta_jit::warm::TraceKind;
use xorshift::Rng;

/// Runs function 0 of `prog` on each argument with the JIT parameters `params` (the driver
/// reset first); returns the results and the driver's statistics.
fn go(params: &str, prog: &Prog, args: &[i64]) -> (Vec<i64>, meta_jit::warm::Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
        d.set_params("keep_optimized=1").unwrap();
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
    // Its entry trace calls its own compiled code for both recursive calls (RPython's
    // `call_assembler`), and makes no other call.
    let entry = s
        .traces
        .iter()
        .find(|t| t.kind == TraceKind::Entry)
        .expect("an entry trace");
    let count = |o: Opcode| {
        entry
            .optimized()
            .ops
            .iter()
            .filter(|op| op.opcode == o)
            .count()
    };
    assert_eq!(
        count(Opcode::CallAssemblerI),
        2,
        "{}",
        print::listing(entry.optimized(), &[])
    );
    let calls = entry
        .optimized()
        .ops
        .iter()
        .filter(|op| op.opcode.is_call())
        .count();
    assert_eq!(calls, 2, "{}", print::listing(entry.optimized(), &[]));
    // fib has no loop: its one trace starts at its entry and ends at its return.
    assert_eq!(s.loops(), 0, "{}", s.summary());
    assert!(s.entry_traces() >= 1, "{}", s.summary());
    // Nearly every call (10,000 of them for fib(17) alone) is made by compiled code, to
    // compiled code, most of them directly (not through the driver).
    assert!(s.assembler_calls >= 10_000, "{}", s.summary());
    assert!(s.entries < 1_000, "{}", s.summary());
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
    // Each level mixes and calls itself with `arg - 1`: 10,000 nested portal calls. In the
    // first run, the third level is traced, and the levels below it run in the interpreter
    // (the tracer executes its `call_assembler` while the driver traces); in the second, the
    // third level enters the compiled entry trace, and every level below runs it too, called
    // from the compiled code of the level above through `call_assembler`: 10,000 levels of
    // compiled code wait in calls at once.
    let out = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(|| {
            let prog = Prog::new(&[&[Op::Lt(1), Op::Mix(7), Op::Rec { f: 0, k: 1 }, Op::Ret]]);
            let (off, _) = go("off", &prog, &[10_000, 10_000]);
            let (on, s) = go(HOT, &prog, &[10_000, 10_000]);
            (off, on, s.entry_traces(), s.assembler_calls, s.summary())
        })
        .unwrap()
        .join()
        .unwrap();
    let (off, on, traces, assembler_calls, summary) = out;
    assert_eq!(on, off, "{summary}");
    assert_eq!(traces, 1, "{summary}");
    assert!(assembler_calls >= 9_990, "{summary}");
}

#[test]
fn a_guard_failing_in_a_called_entry_trace_still_returns_the_right_result() {
    // Function 0 recurses on `arg - 1` and adds 1 when `arg & 8` is set: its entry trace is
    // traced on one side of that branch, and the callees it calls through `call_assembler`
    // take the other side one time in two (in runs of 8). With a bridge only after 10,000
    // failures, each failure inside a callee leaves its compiled code for the slow path,
    // which finishes the callee in the interpreter and returns its result to the caller's
    // compiled code.
    let prog = Prog::new(&[&[
        Op::Lt(1),
        Op::Odd(8),
        Op::Mix(3),
        Op::Rec { f: 0, k: 1 },
        Op::Ret,
    ]]);
    let args: Vec<i64> = (0..60).map(|i| 20 + i % 7).collect();
    let (off, _) = go("off", &prog, &args);
    let (on, s) = go(
        "on,threshold=3,trace_eagerness=10000,function_entry=1",
        &prog,
        &args,
    );
    assert_eq!(on, off, "{}", s.summary());
    assert_eq!(s.bridges(), 0, "{}", s.summary());
    assert!(s.guard_failures >= 100, "{}", s.summary());
    assert!(s.assembler_calls >= 100, "{}", s.summary());
}

/// A random program of 1 to 3 functions. Each starts with `Lt(k)` (k ≥ 1) and every `Rec`
/// passes a smaller argument, so every call returns; at most two `Rec`s a function keep the
/// calls fewer than 3^arg.
fn random_program(rng: &mut Rng) -> Prog {
    let nf = 1 + rng.below(3) as u8;
    let funcs: Vec<Vec<Op>> = (0..nf)
        .map(|_| {
            let mut ops = vec![Op::Lt(1 + rng.below(3) as i64)];
            let mut recs = 0;
            for _ in 0..1 + rng.below(5) {
                ops.push(match rng.below(4) {
                    0 => Op::Mix(rng.below(10) as i64),
                    1 => Op::Odd(1 << rng.below(4)),
                    _ if recs < 2 => {
                        recs += 1;
                        Op::Rec {
                            f: rng.below(u64::from(nf)) as u8,
                            k: 1 + rng.below(2) as i64,
                        }
                    }
                    _ => Op::Mix(1),
                });
            }
            ops.push(Op::Ret);
            ops
        })
        .collect();
    let refs: Vec<&[Op]> = funcs.iter().map(Vec::as_slice).collect();
    Prog::new(&refs)
}

/// How many random programs the default run checks; `JIT_ENTRY_PROGRAMS` sets another count.
fn programs() -> u64 {
    std::env::var("JIT_ENTRY_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

#[test]
fn random_recursive_programs_agree_with_the_interpreter() {
    // Each program runs function 0 on the arguments 0 to 11 with the JIT off, on its jitcode
    // alone, and with the JIT on: function entries compiled, eager bridges or none (one
    // program in two) and, for one program in three, a short trace limit (inlined calls then
    // make traces too long, and their callees are called instead). Compiled code calls
    // compiled code in about half of the programs.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let args: Vec<i64> = (0..12).collect();
    let (mut with_calls, mut assembler_calls) = (0, 0);
    for i in 0..programs() {
        let prog = random_program(&mut rng);
        let (off, _) = go("off", &prog, &args);
        let limit = if i % 3 == 0 { 40 } else { 6000 };
        // One program in two gets no bridge: its guards that fail in called code leave it.
        let eager = if i % 2 == 0 { 2 } else { 100_000 };
        let params =
            format!("on,threshold=2,trace_eagerness={eager},function_entry=1,trace_limit={limit}");
        let (on, s) = go(&params, &prog, &args);
        assert_eq!(
            on,
            off,
            "program {i}: {:?}\n{}",
            prog_ops(&prog),
            s.summary()
        );
        // The jitcode alone (the codewriter's output, no tracing) agrees too.
        let jitcode: Vec<i64> = args
            .iter()
            .map(|&a| run::run_jitcode(&prog, 0, a))
            .collect();
        assert_eq!(jitcode, off, "program {i}: {:?}", prog_ops(&prog));
        with_calls += usize::from(s.assembler_calls > 0);
        assembler_calls += s.assembler_calls;
    }
    eprintln!(
        "{with_calls} programs of {} call compiled code from compiled code ({assembler_calls} calls)",
        programs()
    );
    // Many programs recurse, and most of those call compiled code from compiled code (46% of
    // 50,000 programs did).
    assert!(
        with_calls as u64 * 3 >= programs(),
        "{with_calls} programs, {assembler_calls} calls"
    );
}

fn prog_ops(p: &Prog) -> Vec<Vec<Op>> {
    p.funcs.iter().map(|f| f.ops.clone()).collect()
}

#[test]
fn a_callee_that_made_a_trace_too_long_is_called_not_inlined() {
    // Function 0 mixes 25 times and calls function 1 (no recursion), which adds function
    // 2's result (its argument) and mixes 30 times: each fits the trace limit alone, not
    // with function 1 inlined into function 0. The
    // first trace of function 0's entry overflows while it inlines function 1, which is then
    // marked not to be inlined again (RPython's `dont_trace_here`); the next trace of
    // function 0 calls function 1's compiled entry instead.
    let mut f0 = vec![Op::Lt(-1_000)];
    f0.extend([Op::Mix(1); 25]);
    f0.extend([Op::Rec { f: 1, k: 0 }, Op::Ret]);
    let mut f1 = vec![Op::Lt(-1_000), Op::Rec { f: 2, k: 0 }];
    f1.extend([Op::Mix(2); 30]);
    f1.push(Op::Ret);
    let f2 = [Op::Lt(1_000_000), Op::Ret];
    let prog = Prog::new(&[&f0, &f1, &f2]);
    let args: Vec<i64> = (0..100).collect();
    let (off, _) = go("off", &prog, &args);
    let (on, s) = go(&format!("{HOT},trace_limit=100"), &prog, &args);
    assert_eq!(on, off, "{}", s.summary());
    assert!(
        s.aborts.iter().any(|a| a.contains("too long")),
        "{}",
        s.summary()
    );
    let calling = s.traces.iter().filter(|t| {
        t.kind == TraceKind::Entry
            && t.optimized()
                .ops
                .iter()
                .any(|op| op.opcode == Opcode::CallAssemblerI)
    });
    assert_eq!(calling.count(), 1, "{}", s.summary());
    assert!(s.assembler_calls >= 50, "{}", s.summary());
}

/// The portal's native resume function (`#[jit::interpreter]` generates it for a dispatch loop
/// that starts with its merge point): run from the merge point with given greens and reds, it
/// finishes the call as the portal would. The driver uses it to finish a call that compiled
/// code made when the callee's code left it at a merge point, or while the driver traces
/// (with `threshold=2` on `entry_speedup`, where tracing starts at the top of the recursion
/// and the subtrees below the trace run there: 46.9 ms with it, 1169 ms when they ran in the
/// portal's jitcode).
#[test]
fn the_portal_resumes_natively_at_its_merge_point() {
    use meta_jit::jitcode::Value;
    let fib = entryvm::fib();
    let prog_ref = |p: &Prog| Value::Ref(p as *const Prog as usize);
    for a in 0..15 {
        // At the entry: pc 0, acc 0.
        let vals = vec![
            Value::Int(0),
            Value::Int(0),
            prog_ref(&fib),
            Value::Int(a),
            Value::Int(0),
        ];
        // SAFETY: the greens and reds of the portal's merge point, of their types; `fib`
        // outlives the call.
        let out = unsafe { run::__jit_resume(vals) };
        assert_eq!(out, vec![Value::Int(run(&fib, 0, a))], "fib({a})");
    }
    // In the middle of a function: at pc 1 with acc 10, `acc = acc * 3 + 7`, then return.
    let mix = Prog::new(&[&[Op::Mix(5), Op::Mix(7), Op::Ret]]);
    let vals = vec![
        Value::Int(1),
        Value::Int(0),
        prog_ref(&mix),
        Value::Int(4),
        Value::Int(10),
    ];
    // SAFETY: as above.
    let out = unsafe { run::__jit_resume(vals) };
    assert_eq!(out, vec![Value::Int(37)]);
}
