//! Test support: a quickcheck generator of well-formed random traces with their inputs and a
//! small heap, a deep comparison of two runs' results, and the checks the property tests run.
//! The optimizer's properties use it against the reference interpreter; the backend uses the
//! same cases and the same comparison for compiled code against the interpreter.
//!
//! - [`Case`] is a recipe ([`recipe`]): plain data that quickcheck generates and shrinks.
//!   [`Case::build`] ([`build`]) turns it into a [`Built`]: a [`heap::Heap`], a trace over it
//!   and the trace's inputs. The builder simulates every op as it emits it, so guards pass or
//!   fail on purpose, facts (`record_known_result`, `record_exact_value`) are true, and memory
//!   accesses stay in bounds on every execution. Traces are full of redundancy on purpose, so
//!   the optimizer has work: repeated pure ops and elidable calls, foldable and identity
//!   expressions, repeated guards and guards on constants, loads after stores, overwritten
//!   stores, allocations that escape or not, loops.
//! - [`compare()`] (module [`mod@compare`]) says whether two runs agree, comparing references deeply.
//! - [`check_optimized`] is property (a) for one case, [`check_round_trip`] property (b).
//! - [`funcs`] holds the real functions the traces call; [`features`] tells what a trace
//!   contains, to check that the generator covers what it should.
//!
//! ```
//! use meta_jit::alloc::Tracker;
//! use meta_jit::testing::{compare, Case, RunResult};
//!
//! let case = Case::random(7, 40);
//! let built = case.build();
//! let tracker = Tracker::new(); // alive through both runs and the comparison
//! // Resets the heap, runs the reference interpreter, snapshots the heap.
//! let a = built.run(&built.trace).unwrap();
//! // The same around any runner (compiled code, say), which returns an `interp::Outcome`.
//! let b = built
//!     .observe(|inputs| built.run.run(&built.trace, inputs))
//!     .unwrap();
//! let ra = RunResult { trace: &built.trace, outcome: &a.outcome, heap: &a.heap };
//! let rb = RunResult { trace: &built.trace, outcome: &b.outcome, heap: &b.heap };
//! compare(ra, rb, &tracker).unwrap();
//! ```

pub mod build;
pub mod compare;
pub mod features;
pub mod funcs;
pub mod heap;
pub mod recipe;

#[cfg(test)]
mod tests;

pub use build::{Built, Observation};
pub use compare::{compare, RunResult};
pub use funcs::env;
pub use recipe::{Case, Shape};

/// Cases have up to this many steps (one to a few ops each) in the property tests.
pub const PROP_SIZE: usize = 100;

/// A deterministic quickcheck runner for a property test: `default_cases` cases (or
/// `METAJIT_PROP_CASES`) generated from `default_seed ^ salt` (or `METAJIT_PROP_SEED ^ salt`),
/// so CI runs the same cases every time and a developer can explore other seeds.
pub fn prop_runner(default_seed: u64, salt: u64, default_cases: u64) -> quickcheck::QuickCheck {
    let env = |name: &str| std::env::var(name).ok().and_then(|s| s.parse::<u64>().ok());
    let seed = env("METAJIT_PROP_SEED").unwrap_or(default_seed);
    let n = env("METAJIT_PROP_CASES").unwrap_or(default_cases);
    quickcheck::QuickCheck::new()
        .rng(quickcheck::Gen::from_size_and_seed(PROP_SIZE, seed ^ salt))
        .tests(n)
        .max_tests(n)
}

pub use crate::check::panic_message;

/// A small deterministic source of numbers for property tests that build their cases from a
/// seed: each call gives a number below its argument (which must not be 0).
pub fn draws(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut rng = seed;
    move |n| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) % n
    }
}

/// With `METAJIT_PROP_VERBOSE` set, prints a case before a property checks it: if the case
/// crashes the process (compiled code, or an access the optimizer made unsafe), the last case
/// printed is the culprit.
pub fn show_case(case: &Case) {
    if std::env::var_os("METAJIT_PROP_VERBOSE").is_some() {
        eprintln!("{case:?}");
    }
}

/// A property's verdict on one case: passed, or failed with the message.
pub fn verdict(r: Result<(), String>) -> quickcheck::TestResult {
    match r {
        Ok(()) => quickcheck::TestResult::passed(),
        Err(e) => quickcheck::TestResult::error(e),
    }
}

use crate::alloc::Tracker;
use crate::interp::Outcome;
use crate::ir::{print::print, verify::verify, Trace};
use crate::opt::unroll::peel;
use crate::opt::{optimize_with_report, Options};

/// Property (a) for one case: the optimized trace verifies, and it runs to the same result as
/// the unoptimized one in the reference interpreter. On failure, the message holds both
/// traces in the text form, the inputs, the heap and both outcomes.
///
/// A loop the optimizer peeled ([`crate::opt::unroll`]) is compared with the loop allowed one
/// more iteration (its preamble is the loop's first), with the loop body's guards named by
/// their preamble copies' ids, and the carried inputs' values at the last `jump`.
pub fn check_optimized(case: &Case, opts: &Options) -> Result<(), String> {
    let built = case.build();
    let (opt, opt_report) = optimize_with_report(&built.trace, opts);
    let peeled = opt_report.peeled.clone();
    let as_loop = match &peeled {
        Some(p) => ids_as_loop(&opt, p.first_copy_id, p.id_offset),
        None => opt.clone(),
    };
    let report = |what: &str, outcomes: Option<(&Outcome, &Outcome)>| {
        let mut s = format!(
            "{what}\noptions: {opts:?}\nmax_iterations: {}, invalidated: {}\nheap:\n{}inputs: {}\n\
             --- unoptimized:\n{}--- optimized:\n{}",
            built.run.max_iterations,
            built.run.invalidated,
            built.heap_text(),
            built.inputs_text(),
            print(&built.trace),
            print(&opt)
        );
        if let Some((a, b)) = outcomes {
            s.push_str(&format!(
                "--- unoptimized run: {a:?}\n--- optimized run: {b:?}\n"
            ));
        }
        s
    };
    if let Err(e) = verify(&opt) {
        return Err(report(
            &format!("the optimized trace does not verify: {e}"),
            None,
        ));
    }
    // What the driver keeps of a compiled trace gives back every guard's resume data.
    let exits = crate::resume::Exits::keep(opt.clone());
    for (i, op) in opt.ops.iter().enumerate() {
        let kept = exits.guard(i);
        let want = op.resume.as_deref().map(|r| (op.opcode, r));
        if kept.as_ref().map(|(o, r)| (*o, r)) != want {
            return Err(report(
                &format!("the kept exits give back another resume for op {i}: {kept:?}"),
                None,
            ));
        }
    }
    let tracker = Tracker::new();
    let mut longer = built.run.clone();
    if peeled.is_some() {
        longer.max_iterations += 1;
    }
    let a = built
        .observe(|inputs| longer.run(&built.trace, inputs))
        .map_err(|e| report(&format!("the unoptimized trace does not run: {e:?}"), None))?;
    let b = built
        .run(&as_loop)
        .map_err(|e| report(&format!("the optimized trace does not run: {e:?}"), None))?;
    // Compare the values of the loop's own carried inputs at the last `jump` (a peeled loop
    // carries only those that change; the optimizer may add values of memory after them).
    // A carried input the loop carries as a virtual object's fields is left out of the
    // comparison (the label has its leaves); its fields' values live on in the others and in
    // the guards' resume data.
    let plain =
        |p: &crate::opt::PeelReport, k: usize| p.carried_virtual.get(k).is_none_or(|w| w.is_none());
    let outcome_a = match (&a.outcome, &peeled) {
        (Outcome::Iterations(x), Some(p)) => Outcome::Iterations(
            (0..p.carried.len())
                .filter(|&i| plain(p, i))
                .map(|i| x[p.carried[i]])
                .collect(),
        ),
        (o, _) => o.clone(),
    };
    let outcome_b = match (&b.outcome, &peeled) {
        (Outcome::Iterations(y), Some(p)) if !p.carried_virtual.is_empty() => {
            let mut at = 0;
            let mut kept = Vec::new();
            for i in 0..p.carried.len() {
                match p.carried_virtual.get(i).copied().flatten() {
                    None => {
                        kept.push(y[at]);
                        at += 1;
                    }
                    Some(w) => at += w,
                }
            }
            kept.extend(y[at..].iter().copied());
            Outcome::Iterations(kept)
        }
        (o, _) => o.clone(),
    };
    let outcome_b = match (&outcome_a, &outcome_b) {
        (Outcome::Iterations(x), Outcome::Iterations(y)) if y.len() > x.len() => {
            Outcome::Iterations(y[..x.len()].to_vec())
        }
        (_, o) => o.clone(),
    };
    let ra = RunResult {
        trace: &built.trace,
        outcome: &outcome_a,
        heap: &a.heap,
    };
    let rb = RunResult {
        trace: &as_loop,
        outcome: &outcome_b,
        heap: &b.heap,
    };
    let result = compare(ra, rb, &tracker);
    drop(tracker);
    result.map_err(|e| {
        report(
            &format!("results differ: {e}"),
            Some((&a.outcome, &b.outcome)),
        )
    })
}

/// A peeled loop's trace with its body's guards renamed to their preamble copies' resume ids
/// (ids from `first_copy_id` on lose `id_offset`), to compare its guard failures with the
/// loop's.
pub fn ids_as_loop(t: &Trace, first_copy_id: u32, id_offset: u32) -> Trace {
    let mut t = t.clone();
    for op in t.ops.iter_mut() {
        if let Some(r) = op.resume.as_deref_mut() {
            if r.id >= first_copy_id {
                r.id -= id_offset;
            }
        }
    }
    t
}

/// Property (c) for one case: a peeled loop ([`crate::opt::unroll`]), not optimized, runs like
/// the loop: with one iteration fewer (its preamble is the loop's first iteration), it ends
/// the same way, its loop guards fail as the loop's (ids less the peel's offset), and its last
/// `jump` passes what the loop's passes to its carried inputs.
pub fn check_peeled(case: &Case) -> Result<(), String> {
    let built = case.build();
    let Some(p) = peel(&built.trace) else {
        return Ok(());
    };
    let peeled = ids_as_loop(&p.trace, p.first_copy_id, p.id_offset);
    let report = |what: &str| {
        format!(
            "{what}\nmax_iterations: {}\nheap:\n{}inputs: {}\n--- loop:\n{}--- peeled:\n{}",
            built.run.max_iterations,
            built.heap_text(),
            built.inputs_text(),
            print(&built.trace),
            print(&p.trace)
        )
    };
    if let Err(e) = verify(&p.trace) {
        return Err(report(&format!("the peeled trace does not verify: {e}")));
    }
    if built.run.max_iterations < 2 {
        return Ok(());
    }
    let tracker = Tracker::new();
    let a = built
        .run(&built.trace)
        .map_err(|e| report(&format!("the loop does not run: {e:?}")))?;
    let mut shorter = built.run.clone();
    shorter.max_iterations -= 1;
    let b = built
        .observe(|inputs| shorter.run(&peeled, inputs))
        .map_err(|e| report(&format!("the peeled trace does not run: {e:?}")))?;
    let outcome_a = match &a.outcome {
        Outcome::Iterations(args) => {
            Outcome::Iterations(p.carried.iter().map(|&k| args[k]).collect())
        }
        o => o.clone(),
    };
    let ra = RunResult {
        trace: &built.trace,
        outcome: &outcome_a,
        heap: &a.heap,
    };
    let rb = RunResult {
        trace: &peeled,
        outcome: &b.outcome,
        heap: &b.heap,
    };
    let result = compare(ra, rb, &tracker);
    drop(tracker);
    result.map_err(|e| {
        report(&format!(
            "results differ: {e}\n--- loop run: {:?}\n--- peeled run: {:?}",
            a.outcome, b.outcome
        ))
    })
}

/// Property (b) for one trace: printing, parsing (with the test functions' [`env()`]) and
/// printing again gives the same text, and the parsed trace equals the original up to the
/// renaming of values ([`same_modulo_renaming`]).
pub fn check_round_trip(t: &Trace) -> Result<(), String> {
    let text = print(t);
    let parsed = crate::ir::parse::parse_with(&text, &env())
        .map_err(|e| format!("the printed trace does not parse: {e}\n{text}"))?;
    let again = print(&parsed);
    if again != text {
        return Err(format!(
            "printing the parsed trace gives another text:\n{text}--- reprinted:\n{again}"
        ));
    }
    same_modulo_renaming(t, &parsed).map_err(|e| format!("{e}\n{text}"))
}

/// Whether two traces are the same up to the numbering of their constant pools: the same
/// descriptors, and op by op the same opcode, descriptor, resume data (ids included), and
/// arguments (ops by position, constants by value).
pub fn same_modulo_renaming(a: &Trace, b: &Trace) -> Result<(), String> {
    if a.descrs != b.descrs {
        return Err("the descriptor tables differ".into());
    }
    if a.ops.len() != b.ops.len() {
        return Err(format!("{} ops vs {}", a.ops.len(), b.ops.len()));
    }
    let same_ref = |x: crate::ir::OpRef, y: crate::ir::OpRef| {
        if x.is_const() && y.is_const() {
            a.const_of(x) == b.const_of(y)
        } else {
            x == y
        }
    };
    let same_refs = |xs: &[crate::ir::OpRef], ys: &[crate::ir::OpRef]| {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(&x, &y)| same_ref(x, y))
    };
    for (i, (x, y)) in a.ops.iter().zip(&b.ops).enumerate() {
        let err = |what: &str| Err(format!("op {i} ({}): {what} differ", x.opcode.name()));
        if x.opcode != y.opcode {
            return err("opcodes");
        }
        if x.descr != y.descr {
            return err("descriptors");
        }
        if !same_refs(&x.args, &y.args) {
            return err("arguments");
        }
        match (&x.resume, &y.resume) {
            (None, None) => {}
            (Some(rx), Some(ry)) => {
                if rx.id != ry.id || rx.frames != ry.frames {
                    return err("resume ids or frames");
                }
                if !same_refs(&rx.values, &ry.values) {
                    return err("resume values");
                }
                let same_virtuals = rx.virtuals.len() == ry.virtuals.len()
                    && rx.virtuals.iter().zip(&ry.virtuals).all(|(vx, vy)| {
                        vx.descr == vy.descr
                            && vx.fields.len() == vy.fields.len()
                            && vx
                                .fields
                                .iter()
                                .zip(&vy.fields)
                                .all(|(fx, fy)| fx.0 == fy.0 && same_ref(fx.1, fy.1))
                    });
                if !same_virtuals {
                    return err("virtuals");
                }
            }
            _ => return err("resume data"),
        }
    }
    Ok(())
}
