//! Guest calls traced through, with every guest frame a heap object: a register VM whose call
//! allocates the callee's frame (`Gc::new(Frame { .. })`, its registers `Cell`s, its caller in
//! `back: Option<Gc<Frame>>`) and continues in the same dispatch loop, as PyPy's interpreter
//! keeps frames on the heap. The frame of a function called from a compiled loop never
//! escapes the iteration, so the optimizer keeps it virtual: the loop allocates nothing and
//! calls nothing. A guard that fails three calls deep materializes the three callee frames
//! from the resume data, linked as the interpreter links them, and the interpreter goes on in
//! the innermost. The JIT-off run is the oracle.

mod heapvm;

use heapvm::{callops, frame, run, seen, Code, Ins, Seen, SEEN};
use meta_jit::warm::Stats;

/// Runs `ops` with the JIT parameters `params` (after a reset): the result, the outermost
/// frame at the end, the guest stacks `snapshot` saw, and the driver's statistics.
fn go(params: &str, ops: &[Ins]) -> (i64, Seen, Vec<Seen>, Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
        d.set_params("keep_optimized=1").unwrap();
    });
    SEEN.with(|s| s.borrow_mut().clear());
    let code = Code { ops: ops.to_vec() };
    let main = frame(0, 0, 0, None);
    let r = run(&code, main);
    let snaps = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    (r, seen(Some(main)), snaps, run::with_driver(|d| d.stats()))
}

/// Runs `ops` with the JIT off and on; both must end the same and see the same stacks.
fn agree(ops: &[Ins]) -> Stats {
    let (r0, m0, s0, _) = go("off", ops);
    let (r1, m1, s1, stats) = go("on,threshold=3,trace_eagerness=1000", ops);
    assert_eq!((r1, &m1), (r0, &m0), "{}", stats.summary());
    assert_eq!(s1.len(), s0.len(), "snapshots");
    assert!(s1 == s0, "a snapshot differs");
    stats
}

#[test]
fn a_loop_calling_a_small_function_allocates_no_frame_and_calls_nothing() {
    // r1 counts to 1000; each turn calls `inc` (r0 + 3) and adds the result to r2.
    let ops = callops::call_in_loop();
    let s = agree(&ops);
    let body = callops::loop_body(&s);
    for op in ["call", "new("] {
        assert!(!body.contains(op), "`{op}` in the loop body:\n{body}");
    }
}

#[test]
fn a_guard_three_calls_deep_materializes_the_callee_frames() {
    // Each turn calls f1, which calls f2, which calls f3; f3's branch on its argument flips
    // after 600 turns. Its guard then fails three inlined calls deep: the three callee frames,
    // virtual in the compiled loop, are allocated from the guard's resume data and linked to
    // the caller's frame, and the interpreter goes on in f3. There the other branch records
    // the whole guest stack: the 400 records equal the JIT-off run's.
    let ops = callops::three_deep();
    let (_, _, snaps, _) = go("off", &ops);
    assert_eq!(snaps.len(), 400);
    assert!(snaps.iter().all(|s| s.0.len() == 4), "three calls deep");
    let s = agree(&ops);
    assert!(s.guard_failures >= 300, "{}", s.summary());
    assert_eq!(s.bridges(), 0, "{}", s.summary());
    // Before the flip, the compiled loop allocated none of the callee frames.
    let body = callops::loop_body(&s);
    assert!(!body.contains("new("), "{body}");
    // With bridges: the guard's bridge starts from resume data that holds the three virtual
    // frames, and the stacks it hands to `snapshot` are still the interpreter's.
    let (r0, m0, s0, _) = go("off", &ops);
    let (r1, m1, s1, stats) = go("on,threshold=3,trace_eagerness=2", &ops);
    assert_eq!((r1, &m1), (r0, &m0), "{}", stats.summary());
    assert!(s1 == s0, "a snapshot differs");
    assert!(stats.bridges() >= 1, "{}", stats.summary());
    assert!(stats.guard_failures < 20, "{}", stats.summary());
}
