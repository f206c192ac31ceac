//! Quasi-immutable fields end to end: a loop folds the value of a `#[jit(quasi_immutable)]`
//! field of its (green) program, and every kind of write makes the compiled code go: a write
//! by the embedder between runs, by the interpreter in the middle of a run, by compiled code
//! (a bridge writes, then jumps into the loop that folded the old value), and by native code
//! that a trace calls. The JIT-off run is the oracle each time.

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    /// `c[k] = n`
    Put(u8, i64),
    /// `acc = acc * 3 + scale` (wrapping; reads the quasi-immutable field)
    AddScale,
    /// `scale = c[1]`, written by the interpreter
    SetScale,
    /// `scale = c[1] + 1000` when `c[0] == n`, written by the interpreter
    SetScaleAt(i64),
    /// `acc = acc * 3 + cfg.scale`, through the promoted `st.cfg` (not reached from the greens)
    AddCfgScale,
    /// `st.cfg.scale = c[1]`
    SetCfgScale,
    /// `st.cfg.scale = c[1]`, written by a native function the interpreter calls
    SetCfgScaleNative,
    /// `c[k] -= 1`; back to `t` while it is not 0
    CountDown(u8, u32),
    /// The result is `acc`.
    Halt,
}

#[derive(JitLayout)]
pub struct Prog {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
    #[jit(quasi_immutable)]
    pub scale: i64,
}

#[derive(JitLayout)]
pub struct Machine {
    pub acc: i64,
    pub c: [i64; 2],
    pub cfg: &'static mut Cfg,
}

#[derive(JitLayout)]
pub struct Cfg {
    #[jit(quasi_immutable)]
    pub scale: i64,
}

/// Native code that writes the field, and says so.
#[dont_look_inside]
pub fn set_scale(cfg: &mut Cfg, v: i64) {
    cfg.scale = v;
    meta_jit::warm::quasi_immutable_written(&cfg.scale);
}

#[jit::interpreter(greens(pc, prog), reds(st))]
pub fn run(prog: &mut Prog, st: &mut Machine) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match prog.ops[pc] {
            Op::Put(k, n) => st.c[k as usize] = n,
            Op::AddScale => st.acc = st.acc.wrapping_mul(3).wrapping_add(prog.scale),
            Op::SetScale => prog.scale = st.c[1],
            Op::SetScaleAt(n) => {
                if st.c[0] == n {
                    prog.scale = st.c[1] + 1000;
                }
            }
            Op::AddCfgScale => {
                let cfg: &Cfg = promote!(&*st.cfg);
                st.acc = st.acc.wrapping_mul(3).wrapping_add(cfg.scale);
            }
            Op::SetCfgScale => st.cfg.scale = st.c[1],
            Op::SetCfgScaleNative => set_scale(&mut *st.cfg, st.c[1]),
            Op::CountDown(k, t) => {
                st.c[k as usize] -= 1;
                if st.c[k as usize] != 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Halt => return st.acc,
        }
        pc += 1;
    }
}

/// Runs `prog` with the JIT parameters `params` on this thread's driver (never reset); returns
/// the result, the sum of the fields' final values, and how many traces were compiled and
/// invalidated.
fn go(params: &str, prog: &mut Prog) -> (i64, i64, usize, usize) {
    let before = run::with_driver(|d| {
        d.set_params(params).unwrap();
        d.set_params("keep_optimized=1").unwrap();
        d.with_stats(|s| (s.traces.len(), s.invalidated))
    });
    let mut st = Machine {
        acc: 0,
        c: [0; 2],
        cfg: Box::leak(Box::new(Cfg { scale: 2 })),
    };
    let r = run(prog, &mut st);
    let after = run::with_driver(|d| d.with_stats(|s| (s.traces.len(), s.invalidated)));
    (
        r,
        prog.scale + st.cfg.scale,
        after.0 - before.0,
        after.1 - before.1,
    )
}

const HOT: &str = "on,threshold=3,trace_eagerness=3";

/// The JIT-off result and final field value of `ops` with the field starting at `scale`.
fn oracle(ops: &[Op], scale: i64) -> (i64, i64) {
    let mut p = Prog {
        ops: ops.to_vec(),
        scale,
    };
    let (r, s, _, _) = go("off", &mut p);
    (r, s)
}

#[test]
fn the_loop_folds_the_field_and_a_write_between_runs_is_seen() {
    let ops = vec![Op::Put(0, 300), Op::AddScale, Op::CountDown(0, 1), Op::Halt];
    let mut prog = Prog {
        ops: ops.clone(),
        scale: 11,
    };
    let (r, s, traces, _) = go(HOT, &mut prog);
    assert_eq!((r, s), oracle(&ops, 11));
    assert_eq!(traces, 1);
    let lp = run::with_driver(|d| d.stats()).traces[0].clone();
    // The read is gone from the loop: the value is a constant, under guard_not_invalidated.
    assert!(
        !lp.optimized().to_string().contains("getfield_i(ConstPtr"),
        "{}",
        lp.optimized()
    );
    // The loop is peeled: one guard_not_invalidated in the first iteration, one in the loop.
    let text = lp.optimized().to_string();
    let body = text.split("label(").nth(1).expect("a peeled loop");
    assert_eq!(body.matches("guard_not_invalidated").count(), 1, "{text}");
    // The field's value is in the code, as the constant operand of the loop's addition (11
    // appears nowhere else in the program).
    assert!(
        text.lines()
            .any(|l| l.contains("int_add(") && l.contains(", 11)")),
        "{text}"
    );
    // The embedder writes the field; the next run must not use the code that folded 11.
    prog.scale = 5;
    let (r, s, traces, invalidated) = go(HOT, &mut prog);
    assert_eq!((r, s), oracle(&ops, 5));
    assert_eq!((traces, invalidated), (1, 1));
}

#[test]
fn a_write_by_the_interpreter_in_the_middle_of_the_run_is_seen() {
    // At c0 == 150 the compiled loop's guard fails, the interpreter writes the field, and the
    // loop, entered again, is retraced with the new value.
    let ops = vec![
        Op::Put(1, 7),
        Op::Put(0, 300),
        Op::AddScale,
        Op::SetScaleAt(150),
        Op::CountDown(0, 2),
        Op::Halt,
    ];
    let mut prog = Prog {
        ops: ops.clone(),
        scale: 3,
    };
    let (r, s, traces, invalidated) = go(HOT, &mut prog);
    assert_eq!((r, s), oracle(&ops, 3));
    assert_eq!(s, 1007 + 2);
    assert!(traces >= 2 && invalidated >= 1, "{traces} {invalidated}");
}

/// One loop writes `cfg.scale` with `write`, a later loop folds it, six times. `cfg` is
/// reached through `promote!`, not from the greens, so the driver cannot check its value on
/// entry: only the invalidation that comes with the write keeps the reading loop from running
/// with the old value.
fn writer_then_reader(write: Op) -> Vec<Op> {
    vec![
        Op::Put(1, 6),
        Op::Put(0, 30),
        write,
        Op::CountDown(0, 2),
        Op::Put(0, 30),
        Op::AddCfgScale,
        Op::CountDown(0, 5),
        Op::CountDown(1, 1),
        Op::Halt,
    ]
}

/// Runs [`writer_then_reader`] with `write` hot: it gives the JIT-off result, and the write
/// invalidated compiled code. Returns the driver's stats after the run.
fn writer_invalidates(write: Op) -> meta_jit::warm::Stats {
    let ops = writer_then_reader(write);
    let mut prog = Prog {
        ops: ops.clone(),
        scale: 0,
    };
    let (r, s, _, invalidated) = go(HOT, &mut prog);
    assert_eq!((r, s), oracle(&ops, 0));
    assert!(invalidated >= 1, "{write:?}: nothing invalidated");
    run::with_driver(|d| d.stats())
}

#[test]
fn a_write_by_compiled_code_invalidates_a_loop_that_folded_the_field() {
    let stats = writer_invalidates(Op::SetCfgScale);
    // The writing loop's machine code stores the field and calls the invalidation.
    let writes = |t: &meta_jit::warm::TraceRecord| {
        let text = t.optimized().to_string();
        text.contains("descr=scale_0)") && text.contains("call_n(ConstFn(quasi_immutable_written)")
    };
    assert!(stats.traces.iter().any(writes), "no compiled write");
}

#[test]
fn a_native_function_that_writes_the_field_invalidates_through_the_api() {
    // The writing loop calls `set_scale`, which tells the JIT.
    writer_invalidates(Op::SetCfgScaleNative);
}

#[test]
fn a_loop_that_reads_and_writes_the_field_is_not_compiled() {
    // Folding a value the same iteration overwrites would be wrong from the first iteration:
    // tracing aborts, and the interpreter runs the loop.
    let ops = vec![
        Op::Put(0, 200),
        Op::AddScale,
        Op::SetScale,
        Op::CountDown(0, 1),
        Op::Halt,
    ];
    let mut prog = Prog {
        ops: ops.clone(),
        scale: 3,
    };
    let (r, s, traces, _) = go(HOT, &mut prog);
    assert_eq!((r, s), oracle(&ops, 3));
    assert_eq!(traces, 0);
    let aborts = run::with_driver(|d| d.stats()).aborts;
    assert!(
        aborts
            .iter()
            .any(|a| a.contains("quasi-immutable field `scale`")),
        "{aborts:?}"
    );
}
