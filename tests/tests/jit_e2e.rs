//! End to end: the register VM runs with the JIT on and off and must agree; shape checks on
//! what was compiled; deoptimization after a heap write; bridges; aborts.

mod regvm;

use meta_jit::testing::panic_message;
use meta_jit::warm::{TraceKind, TraceRecord};
use regvm::{run_code, run_with, stats, Code, Ins, Ins::*, Vm};

const HOT: &str = "threshold=3,trace_eagerness=5,keep_recorded=1";

/// A trace as recorded (the runs here keep them: `keep_recorded=1`).
fn recorded(t: &meta_jit::warm::TraceRecord) -> &meta_jit::ir::Trace {
    t.recorded.as_ref().expect("run with keep_recorded=1")
}

/// `r0 = sum over i in 1..=n of (i * 3 + 16 + hash(i)) + f-part`, with floats and calls.
fn mixed(n: i64) -> Vec<Ins> {
    vec![
        Li(1, n),
        Li(3, 3),
        // loop body (pc 2)
        MulPromoted(2, 1, 3),
        Add(0, 0, 2),
        AddSq(0, 4),
        Ins::Hash(4, 1),
        Add(0, 0, 4),
        Fma(0, 0.5, 1),
        DecJnz(1, 2),
        FtoI(5, 0),
        Add(0, 0, 5),
        Halt,
    ]
}

#[test]
fn a_hot_loop_is_compiled_and_agrees_with_the_interpreter() {
    let prog = mixed(1000);
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(HOT, &prog, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert_eq!(s.loops(), 1, "{}", s.summary());
    assert!(s.entries >= 1);
    let lp = &s.traces[0];
    // The elidable call on a constant folded while tracing; the look-inside hash's elidable
    // helper is a pure call whose record_known_result left the trace; the promoted multiplier
    // is a guard_value and then a constant.
    assert_eq!(
        recorded(lp).to_string().matches("call_pure_i").count(),
        1,
        "{}",
        recorded(lp)
    );
    assert_eq!(lp.count("record_known_result"), 0, "{}", lp.optimized());
    assert!(recorded(lp).to_string().contains("record_known_result"));
    assert_eq!(lp.count("guard_value"), 1, "{}", lp.optimized());
    // The promoted multiplier is the constant operand of the loop's multiplication.
    assert!(
        lp.optimized()
            .to_string()
            .lines()
            .any(|l| l.contains("int_mul(i") && l.contains(", 3)")),
        "{}",
        lp.optimized()
    );
    // No dispatch is left: the program is constant. The loop is peeled: one float_mul in the
    // preamble, one in the loop body; the promoted value is known in the body (no guard).
    let text = lp.optimized().to_string();
    let body = text.split("label(").nth(1).expect("a peeled loop");
    assert_eq!(body.matches("float_mul").count(), 1, "{text}");
    assert_eq!(body.matches("guard_value").count(), 0, "{text}");
}

#[test]
fn a_heap_write_before_the_failing_guard_is_neither_repeated_nor_lost() {
    // mem[2] += 1 until it reaches r1: the loop's last guard fails after the increment of the
    // same interpreter step; the blackhole interpreter finishes the step from there.
    let prog = vec![Li(1, 500), IncMemJlt(1, 2, 1), Li(0, 7), Halt];
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(HOT, &prog, Vm::new());
    assert_eq!(off.1.mem[2], 500);
    assert_eq!(on, off);
    let s = stats();
    assert_eq!(s.loops(), 1, "{}", s.summary());
    assert!(s.guard_failures >= 1, "{}", s.summary());
}

#[test]
fn a_residual_call_before_the_failing_guard_happens_once() {
    let prog = vec![Li(1, 300), EmitDecJnz(1, 1), Halt];
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(HOT, &prog, Vm::new());
    assert_eq!(off.2.len(), 300);
    assert_eq!(on, off);
    assert_eq!(stats().loops(), 1);
}

#[test]
fn a_branch_that_flips_after_warm_up_runs_in_a_bridge() {
    // r1 counts down from 1000; Bump adds 1 while r1 < 400, else 3: the loop is traced while
    // r1 >= 400, then the guard on the comparison starts failing and gets a bridge that jumps
    // back into the loop.
    let prog = vec![Li(1, 1000), Li(2, 400), Bump(2, 1, 0), DecJnz(1, 2), Halt];
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(HOT, &prog, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert_eq!((s.loops(), s.bridges()), (1, 1), "{}", s.summary());
    let bridge = &s.traces[1];
    assert!(
        bridge.optimized().to_string().contains("jump("),
        "{}",
        bridge.optimized()
    );
    assert!(
        s.guard_failures <= 10,
        "the bridge took over: {}",
        s.summary()
    );
}

#[test]
fn a_bridge_that_reaches_a_cold_inner_loop_traces_that_loop_first() {
    // Loop A (pc 2) is compiled first. The bridge from its exit runs into loop B (pc 5),
    // which has no code yet: instead of unrolling B's 40 turns into the bridge, tracing stops
    // at B's header the second time, B is traced, and the bridge traced later jumps into it.
    let prog = vec![
        Li(1, 50),
        Li(2, 30),
        AddSq(0, 3),
        DecJnz(2, 2),
        Li(3, 40),
        AddSq(0, 5),
        DecJnz(3, 5),
        DecJnz(1, 1),
        Halt,
    ];
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(
        "threshold=3,trace_eagerness=1,keep_recorded=1",
        &prog,
        Vm::new(),
    );
    assert_eq!(on, off);
    let s = stats();
    assert!(s.inner_loops_first >= 1, "{}", s.summary());
    // (The bridge from the outer loop's exit reaches `Halt`.)
    assert!(
        s.aborts.iter().all(|a| a.contains("portal returned")),
        "{:?}",
        s.aborts
    );
    let longest = s.traces.iter().map(|t| recorded(t).ops.len()).max();
    assert!(longest < Some(60), "{longest:?}: {}", s.summary());
    assert!(
        s.traces
            .iter()
            .any(|t| t.kind == meta_jit::warm::TraceKind::Bridge
                && t.optimized().to_string().contains("jump(")),
        "{}",
        s.summary()
    );
}

#[test]
fn a_loop_trace_that_leaves_its_loop_and_comes_back_in_is_traced_from_there() {
    // The inner loop (pc 2) turns twice per entry, so its back edge is taken only before its
    // last turn: its trace starts there, leaves the loop at once, and comes back to pc 2
    // through the outer loop, not through the inner loop's header. It is traced again from
    // that entry, where it goes round, and compiles as the inner loop alone.
    let prog = vec![
        Li(1, 60),
        Li(2, 2),
        AddSq(0, 3),
        DecJnz(2, 2),
        DecJnz(1, 1),
        Halt,
    ];
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(HOT, &prog, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert_eq!(s.retraced, 1, "{}", s.summary());
    // The first loop compiled is the inner one: no trace of the outer loop's `Li(2, 2)` (a
    // store of 2) or its counter (register 1).
    let inner = recorded(&s.traces[0]).to_string();
    assert!(inner.contains("getarrayitem_i(p0, 2,"), "{inner}");
    assert!(!inner.contains("setarrayitem(p0, 2, 2,"), "{inner}");
    assert!(!inner.contains("getarrayitem_i(p0, 1,"), "{inner}");
}

#[test]
fn a_loop_trace_that_ends_in_another_loop_is_dropped_and_retried() {
    // Loop A (pc 3) turns 2, 3, 4, ... times per outer turn; loop G (pc 6) 50 times, so G is
    // compiled first. A's first trace starts on its last turn (the back edge of a 2-turn loop
    // is taken only before its last turn), leaves A and reaches G's header: compiled, that
    // trace would run A's body once per entry and never loop. It is dropped, and A is traced
    // again later, when it goes round. The outer loop's trace (pc 2), which reaches A's
    // header, is dropped too: bridges take that path.
    let prog = vec![
        Li(1, 40),
        Li(6, 42),
        Sub(2, 6, 1),
        AddSq(0, 3),
        DecJnz(2, 3),
        Li(3, 50),
        AddSq(0, 4),
        DecJnz(3, 6),
        DecJnz(1, 2),
        Halt,
    ];
    let ends_elsewhere = |t: &TraceRecord| t.optimized().to_string().contains("target(");
    // Two copies of the program, alive together: each has its own loops.
    let (a, b) = (Code { ops: prog.clone() }, Code { ops: prog.clone() });
    let off = run_with("off", &prog, Vm::new());
    let on = run_code(HOT, &a, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    let dropped = s
        .aborts
        .iter()
        .filter(|a| a.contains("another loop"))
        .count();
    assert_eq!(dropped, 2, "{:?}", s.aborts);
    assert_eq!(s.loops(), 2, "{}", s.summary());
    let loops = s.traces.iter().filter(|t| t.kind == TraceKind::Loop);
    for t in loops {
        assert!(!ends_elsewhere(t), "{}", t.optimized());
    }
    // Once a location has aborted `max_aborts - 1` times, such a trace is compiled: with
    // `max_aborts=1`, A's first trace, which jumps to G.
    let on = run_code("threshold=3,trace_eagerness=5,max_aborts=1", &b, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert!(s.aborts.is_empty(), "{:?}", s.aborts);
    let t = &s.traces[1];
    assert_eq!(t.kind, TraceKind::Loop);
    assert!(ends_elsewhere(t), "{}", t.optimized());
}

#[test]
fn an_over_long_trace_aborts_and_the_program_still_finishes() {
    let prog = mixed(200);
    let off = run_with("off", &prog, Vm::new());
    let on = run_with("threshold=3,trace_limit=10,max_aborts=2", &prog, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert_eq!(s.loops(), 0);
    assert_eq!(s.aborts.len(), 2, "{:?}", s.aborts);
    assert!(s.aborts[0].contains("too long"), "{:?}", s.aborts);
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "a release build checks no arithmetic for overflow"
)]
fn an_overflow_panics_like_the_interpreter() {
    // Add is checked: r0 doubles until it overflows; natively and through the JIT the same
    // panic comes out.
    let prog = vec![Li(0, 1), Li(1, 100), Add(0, 0, 0), DecJnz(1, 2), Halt];
    let msg = |params: &'static str| {
        let prog = prog.clone();
        std::thread::spawn(move || run_with(params, &prog, Vm::new()))
            .join()
            .err()
            .map(|e| panic_message(&*e))
    };
    let off = msg("off");
    assert_eq!(off.as_deref(), Some("attempt to add with overflow"));
    assert_eq!(msg(HOT), off);
}

/// Frees the program in `code` and builds `ops` in its place: the `Code` and its buffer keep
/// their addresses, as when the allocator hands a freed program's memory to the next one.
fn replace_in_place(code: &mut Code, ops: &[Ins]) {
    let (at, buffer) = (code as *const Code, code.ops.as_ptr());
    code.ops.clear();
    code.ops.extend_from_slice(ops);
    assert_eq!((at, buffer), (code as *const Code, code.ops.as_ptr()));
}

#[test]
fn a_program_at_a_freed_programs_address_runs_its_own_code() {
    // The loop folds `square(4)` from the first program; the second has `square(7)` at the
    // same pc, at the same address. No `reset` in between.
    let first = mixed(1000);
    let mut second = mixed(1000);
    second[4] = AddSq(0, 7);
    let mut code = Code { ops: first.clone() };
    assert_eq!(
        run_code(HOT, &code, Vm::new()),
        run_with("off", &first, Vm::new())
    );
    let off = run_with("off", &second, Vm::new());
    replace_in_place(&mut code, &second);
    let on = run_code(HOT, &code, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert_eq!((s.invalidated, s.loops()), (1, 1), "{}", s.summary());
    // And back: the first program, in the same place again, gets its own loop too.
    replace_in_place(&mut code, &first);
    assert_eq!(
        run_code(HOT, &code, Vm::new()),
        run_with("off", &first, Vm::new())
    );
}

/// Nested loops: the inner loop's exit gets a bridge (through pc 4) that jumps to the outer
/// loop, which jumps back into the inner one.
fn nested(k: i64) -> Vec<Ins> {
    vec![
        Li(1, 40),
        Li(2, 50),
        AddSq(0, 3),
        DecJnz(2, 2),
        AddSq(0, k),
        DecJnz(1, 1),
        Halt,
    ]
}

#[test]
fn a_program_that_differs_only_where_a_bridge_folded_is_not_run_by_it() {
    // The second program is equal to the first in both loops' own code; only pc 4, which the
    // inner loop's bridge folded, differs. Entering the inner loop checks the bridge too.
    let mut code = Code { ops: nested(5) };
    let first = run_code(HOT, &code, Vm::new());
    let s = stats();
    // The outer loop's trace ends in the inner loop and is dropped: the bridge takes its path.
    assert_eq!((s.loops(), s.bridges()), (1, 1), "{}", s.summary());
    assert_eq!(first, run_with("off", &nested(5), Vm::new()));
    let off = run_with("off", &nested(6), Vm::new());
    replace_in_place(&mut code, &nested(6));
    assert_eq!(run_code(HOT, &code, Vm::new()), off);
    assert!(stats().invalidated >= 1, "{}", stats().summary());
}

#[test]
fn a_location_that_aborted_is_traced_again_for_a_new_program_there() {
    // The first program's loop at pc 1 is too long to trace (one abort: don't trace again);
    // the second program's loop at pc 1, at the same address, is short and gets compiled.
    let long: Vec<Ins> = [Li(1, 300)]
        .into_iter()
        .chain(std::iter::repeat_n(AddSq(0, 2), 12))
        .chain([DecJnz(1, 1), Halt])
        .collect();
    let mut short = long.clone();
    short[1] = DecJnz(1, 1);
    short[2] = Halt;
    let params = "threshold=3,trace_limit=40,max_aborts=1";
    let mut code = Code { ops: long.clone() };
    let first = run_code(params, &code, Vm::new());
    let s = stats();
    assert_eq!((s.loops(), s.aborts.len()), (0, 1), "{}", s.summary());
    assert_eq!(first, run_with("off", &long, Vm::new()));
    let off = run_with("off", &short, Vm::new());
    replace_in_place(&mut code, &short);
    assert_eq!(run_code(params, &code, Vm::new()), off);
    assert_eq!(stats().loops(), 1, "{}", stats().summary());
}

/// A loop over the ops that tracing used to give up on: unsigned 64-bit division, remainder
/// and checked product, float remainder, `u64 as f64`, float to narrow and unsigned integers
/// (summed with the wrapping `Sub`).
fn conversions(n: i64) -> Vec<Ins> {
    vec![
        Li(1, n),
        Li(2, 7),
        Li(3, -3),
        // loop body (pc 3)
        UDivRem(4, 1, 2),
        UDivRem(5, 3, 2),
        Sub(0, 0, 4),
        Sub(0, 0, 5),
        UMul(6, 1, 1),
        Sub(0, 0, 6),
        FModU(0, 3.5, 1),
        FModU(1, 1e3, 3),
        Fma(2, -1.5, 1),
        FToN(6, 0),
        Sub(0, 0, 6),
        FToN(6, 1),
        Sub(0, 0, 6),
        FToN(6, 2),
        Sub(0, 0, 6),
        DecJnz(1, 3),
        Halt,
    ]
}

#[test]
fn unsigned_division_float_remainder_and_every_float_cast_are_traced() {
    let prog = conversions(2000);
    let off = run_with("off", &prog, Vm::new());
    let on = run_with(HOT, &prog, Vm::new());
    assert_eq!(on, off);
    let s = stats();
    assert_eq!((s.loops(), s.aborts.len()), (1, 0), "{:?}", s.aborts);
    let lp = &s.traces[0];
    // (`uint_mul_high` is the overflow check of an unsigned multiplication: debug builds only.)
    let mul_high = if cfg!(debug_assertions) {
        "uint_mul_high"
    } else {
        "uint_mod"
    };
    for op in [
        "uint_floordiv",
        "uint_mod",
        mul_high,
        "float_mod",
        "cast_uint_to_float",
        "cast_float_to_uint",
        "int_min",
        "int_max",
    ] {
        assert!(lp.count(op) >= 1, "no {op} in\n{}", lp.optimized());
    }
    // f2 grew past f64::MAX (so its casts saturated on the way), f1 is above i64::MAX.
    assert!(
        off.1.f[2].is_infinite() && off.1.f[1] > 1e19,
        "{:?}",
        off.1.f
    );
}

#[test]
fn unsigned_overflow_and_division_by_zero_panic_like_the_interpreter() {
    // r2 counts down to 0 and divides; r5 doubles until the unsigned product overflows.
    let by_zero = vec![
        Li(1, 100),
        Li(2, 60),
        Li(3, 1),
        UDivRem(4, 1, 2),
        Sub(2, 2, 3),
        DecJnz(1, 3),
        Halt,
    ];
    let overflow = vec![
        Li(1, 100),
        Li(5, 1),
        Li(3, 2),
        UMul(5, 5, 3),
        DecJnz(1, 3),
        Halt,
    ];
    // A release build checks no arithmetic for overflow: only the division by zero panics.
    let cases = [
        (by_zero, "attempt to divide by zero"),
        (overflow, "attempt to multiply with overflow"),
    ];
    let n = if cfg!(debug_assertions) { 2 } else { 1 };
    for (prog, expected) in cases.into_iter().take(n) {
        // The panic message, and how many loops were compiled before it.
        let run = |params: &'static str| {
            let prog = prog.clone();
            std::thread::spawn(move || {
                let hook = std::panic::take_hook();
                std::panic::set_hook(Box::new(|_| {}));
                let r = std::panic::catch_unwind(|| run_with(params, &prog, Vm::new()));
                std::panic::set_hook(hook);
                let msg = r.err().map(|e| panic_message(&*e));
                (msg, stats().loops())
            })
            .join()
            .unwrap()
        };
        assert_eq!(run("off"), (Some(expected.to_string()), 0));
        assert_eq!(run(HOT), (Some(expected.to_string()), 1));
    }
}
