//! The random-trace property of the backend: for random traces ([`Case`], the generator of
//! `meta_jit::testing`), compiled code runs like the reference interpreter on the same trace,
//! unoptimized and optimized: same outcome, same failing guard with the same saved values,
//! same values at `finish` and after the last loop iteration (references compared deeply:
//! objects the runs allocate compare by content), same heap contents afterwards.
//!
//! A third property attaches a bridge to the guard that failed and checks that it receives
//! exactly the values the guard saves, and computes with them like the interpreter does.
//!
//! The seed is fixed so CI is deterministic; `METAJIT_PROP_SEED` explores others,
//! `METAJIT_PROP_CASES` runs more cases, `METAJIT_PROP_VERBOSE` prints every case before it
//! runs (to find one that crashes the process). A failure prints the shrunk case: the trace in
//! the text form, its inputs and heap, both outcomes and the disassembly.

use meta_jit::alloc::Tracker;
use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::interp::Outcome;
use meta_jit::ir::print::print;
use meta_jit::ir::{Opcode, Trace};
use meta_jit::opt::{optimize, Options};
use meta_jit::testing::{compare, prop_runner, show_case, verdict, Built, Case, RunResult};
use quickcheck::TestResult;

/// The default seed of the case generator.
const SEED: u64 = 0x6261_636b_656e_6421;

/// Compiles `t` (this case's trace, or its optimized version) and checks that it runs like
/// the reference interpreter runs `t`.
fn check_compiled(built: &Built, t: &Trace) -> Result<(), String> {
    let mut backend = Backend::new();
    let opts = CompileOptions {
        count_iterations: true,
        ..CompileOptions::default()
    };
    let id = backend
        .compile(t, &opts)
        .map_err(|e| format!("{e}\n{}", print(t)))?;
    let report = |what: String, outcomes: Option<(&Outcome, &Outcome)>| {
        let mut s = format!(
            "{what}\nmax_iterations: {}, invalidated: {}\nheap:\n{}inputs: {}\n--- trace:\n{}",
            built.run.max_iterations,
            built.run.invalidated,
            built.heap_text(),
            built.inputs_text(),
            print(t),
        );
        if let Some((a, b)) = outcomes {
            s += &format!("--- interpreter: {a:?}\n--- compiled:    {b:?}\n");
        }
        s + "--- code:\n" + &backend.disassemble(id, t)
    };
    let tracker = Tracker::new();
    let want = built
        .run(t)
        .map_err(|e| report(format!("the interpreter cannot run it: {e:?}"), None))?;
    let got = built
        .observe(|inputs| {
            if built.run.invalidated {
                backend.invalidate(id);
            }
            backend
                .run_with(id, inputs, built.run.max_iterations as u64)
                .map(|e| {
                    // Resume does a failed guard's pending stores; here, the test does.
                    meta_jit::interp::exit_stores(t, inputs, &e.outcome);
                    e.outcome
                })
        })
        .map_err(|e| report(format!("the backend cannot run it: {e:?}"), None))?;
    let outcomes = Some((&want.outcome, &got.outcome));
    // The same trace ran: a failed guard is the same op and saves as many values.
    if let (
        Outcome::GuardFailed {
            op: a, saved: sa, ..
        },
        Outcome::GuardFailed {
            op: b, saved: sb, ..
        },
    ) = (&want.outcome, &got.outcome)
    {
        if a != b || sa.len() != sb.len() {
            return Err(report("a different guard failed".into(), outcomes));
        }
    }
    let ra = RunResult {
        trace: t,
        outcome: &want.outcome,
        heap: &want.heap,
    };
    let rb = RunResult {
        trace: t,
        outcome: &got.outcome,
        heap: &got.heap,
    };
    let result = compare(ra, rb, &tracker);
    drop(tracker);
    result.map_err(|e| report(format!("results differ: {e}"), outcomes))
}

/// A bridge taking `saved`'s types that computes a new value from each number input and a
/// sum of them, and finishes with its inputs, the new values and the sum: enough live values
/// to spill some, while the inputs stay where the guard left them.
fn computing_bridge(saved: &[meta_jit::ir::Value]) -> Trace {
    use meta_jit::ir::Type;
    let mut bridge = Trace::new();
    let inputs: Vec<_> = saved.iter().map(|v| bridge.input(v.ty())).collect();
    let mut out = inputs.clone();
    let mut sum = bridge.int(0);
    for (k, &x) in inputs.iter().enumerate() {
        match bridge.type_of(x) {
            Type::Int => {
                let c = bridge.int(k as i64 * 7 + 3);
                let y = bridge.emit(Opcode::IntMul, &[x, c]);
                sum = bridge.emit(Opcode::IntAdd, &[sum, y]);
                out.push(y);
            }
            Type::Float => {
                let c = bridge.float(k as f64 + 0.5);
                out.push(bridge.emit(Opcode::FloatAdd, &[x, c]));
            }
            _ => {}
        }
    }
    out.push(sum);
    bridge.emit(Opcode::Finish, &out);
    bridge
}

/// When `t` ends at a failing guard, attaches a bridge to that guard ([`computing_bridge`])
/// and runs again: the guard's exit must hand every saved value, in order and of its type,
/// from wherever it lived (register, spill slot) to the bridge's inputs, without leaving
/// machine code, and the bridge must finish like the interpreter running it on those values.
fn check_bridge(built: &Built, t: &Trace) -> Result<(), String> {
    let mut backend = Backend::new();
    let opts = CompileOptions {
        count_iterations: true,
        ..CompileOptions::default()
    };
    let id = backend.compile(t, &opts).map_err(|e| e.to_string())?;
    let tracker = Tracker::new();
    let want = built.run(t).map_err(|e| format!("{e:?}"))?;
    let Outcome::GuardFailed { op, saved, .. } = &want.outcome else {
        return Ok(());
    };
    let bridge = computing_bridge(saved);
    let b = backend
        .compile_bridge(id, *op, &bridge, &opts)
        .map_err(|e| e.to_string())?;
    let run = |inputs: &[meta_jit::ir::Value]| {
        if built.run.invalidated {
            backend.invalidate(id);
        }
        backend.run_with(id, inputs, built.run.max_iterations as u64)
    };
    let mut ended = None;
    let got = built
        .observe(|inputs| {
            run(inputs).map(|e| {
                ended = Some(e.trace);
                // A real bridge starts with its guard's pending stores (`resume::bridge_frames`
                // records them); this one does not, so the test does them, with the values
                // the bridge received (the first values it finishes with).
                if let Outcome::Finish(vals) = &e.outcome {
                    if vals.len() >= saved.len() {
                        let exit = Outcome::GuardFailed {
                            id: 0,
                            op: *op,
                            saved: vals[..saved.len()].to_vec(),
                        };
                        meta_jit::interp::exit_stores(t, inputs, &exit);
                    }
                }
                e.outcome
            })
        })
        .map_err(|e| format!("{e:?}"))?;
    let expected = meta_jit::interp::run(&bridge, saved).map_err(|e| format!("{e:?}"))?;
    let ra = RunResult {
        trace: &bridge,
        outcome: &expected,
        heap: &want.heap,
    };
    let rb = RunResult {
        trace: &bridge,
        outcome: &got.outcome,
        heap: &got.heap,
    };
    let result = compare(ra, rb, &tracker).and_then(|()| {
        (ended == Some(b))
            .then_some(())
            .ok_or_else(|| format!("ended in {ended:?}, not in the bridge {b:?}"))
    });
    drop(tracker);
    result.map_err(|e| {
        format!(
            "the bridge did not get the guard's values: {e}
guard at op {op}, saved {saved:?}
             got {:?}
--- trace:
{}--- code:
{}",
            got.outcome,
            print(t),
            backend.disassemble(id, t)
        )
    })
}

#[test]
fn compiled_runs_like_the_interpreter() {
    fn prop(case: Case) -> TestResult {
        show_case(&case);
        let built = case.build();
        verdict(check_compiled(&built, &built.trace))
    }
    prop_runner(SEED, 0, 10_000).quickcheck(prop as fn(Case) -> TestResult);
}

#[test]
fn compiled_optimized_runs_like_the_interpreter() {
    fn prop(case: Case) -> TestResult {
        show_case(&case);
        let built = case.build();
        let opt = optimize(&built.trace, &Options::all());
        verdict(check_compiled(&built, &opt))
    }
    prop_runner(SEED, 1, 10_000).quickcheck(prop as fn(Case) -> TestResult);
}

#[test]
fn bridges_receive_the_guards_values() {
    fn prop(case: Case) -> TestResult {
        show_case(&case);
        let built = case.build();
        let opt = optimize(&built.trace, &Options::all());
        verdict(check_bridge(&built, &built.trace).and_then(|()| check_bridge(&built, &opt)))
    }
    prop_runner(SEED, 2, 3_000).quickcheck(prop as fn(Case) -> TestResult);
}
