//! Property (b): the text form round-trips. For random traces, `print(parse(print(t)))` is
//! `print(t)`, and `parse(print(t))` equals `t` up to renaming. Optimized traces must print
//! text that parses back to the same text too (their guard ids may be renumbered: the text
//! form does not carry ids).

use meta_jit::ir::parse::parse_with;
use meta_jit::ir::print::print;
use meta_jit::opt::{optimize, Options};
use meta_jit::testing::{check_round_trip, env, prop_runner, Case};
use quickcheck::TestResult;

const SEED: u64 = 0x7072_696e_7421;

#[test]
fn generated_traces_round_trip() {
    fn prop(case: Case) -> TestResult {
        let built = case.build();
        match check_round_trip(&built.trace) {
            Ok(()) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    prop_runner(SEED, 0, 10_000).quickcheck(prop as fn(Case) -> TestResult);
}

#[test]
fn optimized_traces_print_parseable_text() {
    fn prop(case: Case) -> TestResult {
        let built = case.build();
        let opt = optimize(&built.trace, &Options::all());
        let text = print(&opt);
        match parse_with(&text, &env()) {
            Ok(t) if print(&t) == text => TestResult::passed(),
            Ok(t) => TestResult::error(format!("reprinted differently:\n{text}---\n{}", print(&t))),
            Err(e) => TestResult::error(format!("does not parse: {e}\n{text}")),
        }
    }
    prop_runner(SEED, 0, 2_000).quickcheck(prop as fn(Case) -> TestResult);
}
