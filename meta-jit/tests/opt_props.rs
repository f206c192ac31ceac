//! Property (a): the optimizer preserves meaning. For random traces ([`Case`]), the optimized
//! trace verifies and runs in the reference interpreter to the same result as the unoptimized
//! one: same outcome, equal values (references compared deeply, a failed guard's values
//! rebuilt from its resume data), same heap contents afterwards.
//!
//! The seed is fixed so CI is deterministic; set `METAJIT_PROP_SEED` to explore others,
//! `METAJIT_PROP_CASES` to run more cases, `METAJIT_PROP_VERBOSE` to print every case before
//! it runs (to find one that crashes the process). A failure prints the shrunk case (its trace
//! in the text form, inputs and heap) and the optimized trace with both outcomes.

use meta_jit::opt::Options;
use meta_jit::testing::{check_optimized, check_peeled, prop_runner, show_case, verdict, Case};
use quickcheck::{Arbitrary, Gen, TestResult};

/// The default seed of the case generator.
const SEED: u64 = 0x6d65_7461_6a69_7421;

/// A random subset of the optimizer's stages; shrinks by turning stages off.
#[derive(Clone, Debug)]
struct Stages(Options);

impl Arbitrary for Stages {
    fn arbitrary(g: &mut Gen) -> Stages {
        Stages(Options {
            fold: bool::arbitrary(g),
            bounds: bool::arbitrary(g),
            pure: bool::arbitrary(g),
            exact: bool::arbitrary(g),
            guards: bool::arbitrary(g),
            heap: bool::arbitrary(g),
            virtuals: bool::arbitrary(g),
            dce: bool::arbitrary(g),
            unroll: bool::arbitrary(g),
            counted: bool::arbitrary(g),
            vable: bool::arbitrary(g),
            either_way: bool::arbitrary(g),
        })
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Stages>> {
        let o = self.0.clone();
        let mut out = Vec::new();
        let off: [fn(&mut Options) -> &mut bool; 12] = [
            |o| &mut o.fold,
            |o| &mut o.bounds,
            |o| &mut o.pure,
            |o| &mut o.exact,
            |o| &mut o.guards,
            |o| &mut o.heap,
            |o| &mut o.virtuals,
            |o| &mut o.dce,
            |o| &mut o.unroll,
            |o| &mut o.counted,
            |o| &mut o.vable,
            |o| &mut o.either_way,
        ];
        for f in off {
            let mut s = o.clone();
            if *f(&mut s) {
                *f(&mut s) = false;
                out.push(Stages(s));
            }
        }
        Box::new(out.into_iter())
    }
}

#[test]
fn optimized_runs_like_unoptimized() {
    fn prop(case: Case) -> TestResult {
        show_case(&case);
        verdict(check_optimized(&case, &Options::all()))
    }
    prop_runner(SEED, 0, 10_000).quickcheck(prop as fn(Case) -> TestResult);
}

#[test]
fn optimized_with_some_stages_runs_like_unoptimized() {
    fn prop(case: Case, stages: Stages) -> TestResult {
        show_case(&case);
        verdict(check_optimized(&case, &stages.0))
    }
    prop_runner(SEED, 1, 3_000).quickcheck(prop as fn(Case, Stages) -> TestResult);
}

#[test]
fn peeled_loop_runs_like_the_loop() {
    fn prop(case: Case) -> TestResult {
        show_case(&case);
        verdict(check_peeled(&case))
    }
    prop_runner(SEED, 2, 5_000).quickcheck(prop as fn(Case) -> TestResult);
}
