//! A reentrant portal: compiled code calls a native function that runs the portal again, and
//! that nested run counts, traces, compiles and enters compiled code of its own while the
//! outer code waits in the call. The VM's functions call each other (and themselves) only
//! through such a native function, `call`, so every guest call is a nested portal run. The
//! JIT-off run is the oracle each time.

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    /// `c = n`
    Count(i64),
    /// `acc = acc * 3 + k` (wrapping)
    Mix(i64),
    /// `acc = acc * 3 + cfg.scale` (wrapping), the scale read through the promoted `cfg`: a
    /// loop folds it, and a write makes its code go
    AddScale,
    /// `c = bump(cfg)`: 1 on the 500th bump, which also writes the scale, else 0
    Bump,
    /// When the frame is less than `limit` calls deep: `acc += f(acc & 255)`, function `f`
    /// run by the portal again
    Descend(u8),
    /// The same, only when `c == k`
    DescendAt { f: u8, k: i64 },
    /// `c -= 1`; back to `t` while it is not 0
    Again(u32),
    /// The function returns `acc`.
    Ret,
}

#[derive(JitLayout)]
pub struct Func {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout)]
pub struct Prog {
    #[jit(immutable, immutable_items)]
    pub funcs: Vec<Func>,
}

#[derive(JitLayout)]
pub struct Cfg {
    #[jit(quasi_immutable)]
    pub scale: i64,
    pub bumps: i64,
}

#[derive(JitLayout)]
pub struct Frame<'a> {
    pub acc: i64,
    pub c: i64,
    pub depth: u32,
    /// How deep calls go.
    pub limit: u32,
    pub cfg: &'a mut Cfg,
}

/// A guest call: runs function `f` on a new frame, through the portal (natively: the JIT
/// sees a residual call, and the portal's own driver takes over inside).
#[dont_look_inside]
pub fn call(prog: &Prog, f: u64, arg: i64, depth: u32, limit: u32, cfg: &mut Cfg) -> i64 {
    let mut fr = Frame {
        acc: arg,
        c: 0,
        depth,
        limit,
        cfg,
    };
    run(prog, f as usize, &mut fr)
}

/// Counts the calls; the 500th writes the scale (native code, which says so) and returns 1.
#[dont_look_inside]
pub fn bump(cfg: &mut Cfg) -> i64 {
    cfg.bumps += 1;
    if cfg.bumps != 500 {
        return 0;
    }
    cfg.scale = 77;
    meta_jit::warm::quasi_immutable_written(&cfg.scale);
    1
}

#[jit::interpreter(greens(pc, f, prog), reds(fr))]
pub fn run(prog: &Prog, f: usize, fr: &mut Frame<'_>) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match prog.funcs[f].ops[pc] {
            Op::Count(n) => fr.c = n,
            Op::Mix(k) => fr.acc = fr.acc.wrapping_mul(3).wrapping_add(k),
            Op::AddScale => {
                let cfg: &Cfg = promote!(&*fr.cfg);
                fr.acc = fr.acc.wrapping_mul(3).wrapping_add(cfg.scale);
            }
            Op::Bump => fr.c = bump(&mut *fr.cfg),
            Op::Descend(g) => {
                if fr.depth < fr.limit {
                    let r = call(
                        prog,
                        g as u64,
                        fr.acc & 255,
                        fr.depth + 1,
                        fr.limit,
                        &mut *fr.cfg,
                    );
                    fr.acc = fr.acc.wrapping_add(r);
                }
            }
            Op::DescendAt { f: g, k } => {
                if fr.c == k && fr.depth < fr.limit {
                    let r = call(
                        prog,
                        g as u64,
                        fr.acc & 255,
                        fr.depth + 1,
                        fr.limit,
                        &mut *fr.cfg,
                    );
                    fr.acc = fr.acc.wrapping_add(r);
                }
            }
            Op::Again(t) => {
                fr.c -= 1;
                if fr.c != 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Ret => return fr.acc,
        }
        pc += 1;
    }
}

/// Without function-entry traces: these tests are about loops entered from nested portal
/// runs (`guest_recursion_with_function_entries_agrees` runs the deep one with them).
const HOT: &str = "on,threshold=3,trace_eagerness=3,function_entry=0";

/// Runs function 0 of `funcs` once per call limit in `limits`, on one program and with the
/// JIT parameters `params` (the driver reset first); returns each run's result and final
/// scale, and the driver's statistics at the end.
fn go(params: &str, funcs: &[&[Op]], limits: &[u32]) -> (Vec<(i64, i64)>, meta_jit::warm::Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
    });
    let prog = Prog {
        funcs: funcs.iter().map(|ops| Func { ops: ops.to_vec() }).collect(),
    };
    let mut results = Vec::new();
    for &limit in limits {
        let mut cfg = Cfg { scale: 2, bumps: 0 };
        let mut fr = Frame {
            acc: 1,
            c: 0,
            depth: 0,
            limit,
            cfg: &mut cfg,
        };
        let r = run(&prog, 0, &mut fr);
        results.push((r, cfg.scale));
    }
    (results, run::with_driver(|d| d.stats()))
}

/// Runs `funcs` with the JIT off and on; checks that both agree and returns the JIT's stats.
fn agree(funcs: &[&[Op]], limits: &[u32]) -> meta_jit::warm::Stats {
    agree_with(HOT, funcs, limits)
}

/// `agree` with the JIT parameters `params`.
fn agree_with(params: &str, funcs: &[&[Op]], limits: &[u32]) -> meta_jit::warm::Stats {
    let (off, _) = go("off", funcs, limits);
    let (on, stats) = go(params, funcs, limits);
    assert_eq!(on, off, "{}", stats.summary());
    stats
}

/// `agree` on a thread with a stack large enough for 10,000 nested portal runs; returns the
/// number of loops, the entries into compiled code, the bridges and the summary.
fn agree_deep(funcs: Vec<Vec<Op>>, limits: Vec<u32>) -> (usize, usize, usize, String) {
    agree_deep_with(HOT, funcs, limits)
}

/// `agree_deep` with the JIT parameters `params`.
fn agree_deep_with(
    params: &'static str,
    funcs: Vec<Vec<Op>>,
    limits: Vec<u32>,
) -> (usize, usize, usize, String) {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || {
            let funcs: Vec<&[Op]> = funcs.iter().map(Vec::as_slice).collect();
            let s = agree_with(params, &funcs, &limits);
            (s.loops(), s.entries, s.bridges(), s.summary())
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_loop_run_again_from_compiled_code_runs_its_own_compiled_code() {
    // Function 0 loops 1,000 times and calls function 1 in every turn; function 1 loops 30
    // times. Function 0's loop is compiled with `call` as a residual call, and every one of
    // its turns runs the portal again from that call, where function 1's loop runs as
    // compiled code too: about one entry into compiled code per call.
    let f0: &[Op] = &[
        Op::Count(1000),
        Op::Mix(5),
        Op::Descend(1),
        Op::Again(1),
        Op::Ret,
    ];
    let f1: &[Op] = &[Op::Count(30), Op::Mix(7), Op::Again(1), Op::Ret];
    let s = agree(&[f0, f1], &[1]);
    assert_eq!(s.loops(), 2, "{}", s.summary());
    // A driver that kept the nested runs in the interpreter while compiled code ran entered
    // function 1's loop only from the interpreter's first turns of function 0 (before its
    // loop was compiled): 4 entries in all.
    assert!(s.entries >= 990, "{}", s.summary());
    // Function 1's loop leaves through a guard in each call, and the path from there to the
    // portal's return is a bridge that returns: 999 failures into the interpreter before
    // bridges could end at a return, a few now.
    assert!(s.guard_failures <= 10, "{}", s.summary());
    assert!(s.bridges() >= 1, "{}", s.summary());
    // The nested calls have the outer call's pinned greens (the same program): what was
    // checked in the outer call holds in them, and entering the loop checks no fact (1,994
    // checks when each portal call checked again).
    assert!(s.fact_checks <= 10, "{}", s.summary());
}

#[test]
fn a_trace_thrown_away_while_it_waits_in_a_call_still_resumes() {
    // Function 0's loop folds the scale and calls function 1 in every turn. The 500th call,
    // made from the loop's compiled code, writes the scale (the loop's code is invalidated
    // while it waits in that call) and calls function 0 again: entering the same loop, the
    // nested run finds its code invalidated and throws it away. Back in the outer code, whose
    // trace is gone, the next check of the invalidation flag fails: the driver resumes from
    // the thrown-away trace's resume data, which it kept for that.
    let f0: &[Op] = &[
        Op::Count(1000),
        Op::AddScale,
        Op::Descend(1),
        Op::Again(1),
        Op::Ret,
    ];
    let f1: &[Op] = &[Op::Bump, Op::DescendAt { f: 0, k: 1 }, Op::Ret];
    let s = agree(&[f0, f1], &[3]);
    assert!(s.invalidated >= 1, "{}", s.summary());
    assert!(s.loops() >= 2, "{}", s.summary());
}

/// A function that calls itself in the first turn of a 6-turn loop.
fn descend_in_first_turn() -> Vec<Op> {
    vec![
        Op::Count(6),
        Op::Mix(3),
        Op::DescendAt { f: 0, k: 6 },
        Op::Again(1),
        Op::Ret,
    ]
}

#[test]
fn guest_recursion_ten_thousand_deep_runs_compiled_code_at_every_depth() {
    // Each level calls itself in the first turn of a 6-turn loop, then runs the other turns
    // in the loop's compiled code: 10,000 levels, 10,000 entries into compiled code.
    let f0 = descend_in_first_turn();
    let (loops, entries, _, summary) = agree_deep(vec![f0], vec![10_000]);
    assert_eq!(loops, 1, "{summary}");
    assert!(entries >= 9_000, "{summary}");
}

#[test]
fn guest_recursion_with_function_entries_agrees() {
    // The deep recursion above with function-entry traces: the entry is traced from inside
    // the recursion, and the levels below run natively while the driver traces (the portal's
    // native resume), then in compiled code.
    let f0 = descend_in_first_turn();
    let params = "on,threshold=3,trace_eagerness=3,function_entry=1";
    let (loops, _, _, summary) = agree_deep_with(params, vec![f0], vec![10_000]);
    assert!(loops >= 1, "{summary}");
}

#[test]
fn guest_recursion_ten_thousand_deep_from_compiled_code() {
    // Each level calls itself in the fourth turn of its loop, from a bridge of the loop's
    // guard on the turn: once that bridge exists (a first run 50 calls deep compiles it),
    // every level of a second run 10,000 deep waits in the call inside compiled code, with
    // the nested levels' runs of compiled code on top of it.
    let f0 = vec![
        Op::Count(6),
        Op::Mix(3),
        Op::DescendAt { f: 0, k: 3 },
        Op::Again(1),
        Op::Ret,
    ];
    let (loops, entries, bridges, summary) = agree_deep(vec![f0], vec![50, 10_000]);
    assert_eq!(loops, 1, "{summary}");
    assert!(bridges >= 1, "{summary}");
    assert!(entries >= 9_000, "{summary}");
}
