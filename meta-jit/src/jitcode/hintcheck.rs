//! Checking `record_known_result!` and `record_exact_value!` on jitcode values: the one check
//! the jitcode runner, the blackhole interpreter, the tracer and compiled code (with
//! `check_hints=1`) all run, so that they agree with each other and with checked mode.
//!
//! Owns: the comparison of jitcode values for hints (integers by value, floats by bits,
//! references by address: the rule of [`crate::check::HintValue`]), which checker the runner is
//! acting as ([`checking_as`]), and turning a failed claim into a [`Violation`] at the hint's
//! [`HintSite`].
//! Must not know: traces, machine code, or any guest language.
#![deny(unsafe_code)]

use std::cell::Cell;

use super::format::{CallDescr, HintSite, Value};
use crate::check::{report_violation, CheckedBy, Violation};

thread_local! {
    static RUNNER_IS: Cell<CheckedBy> = const { Cell::new(CheckedBy::Runner) };
}

/// Runs `f` with the runner's hint checks reported as found by `by` (the blackhole interpreter
/// runs jitcode through the runner).
pub fn checking_as<R>(by: CheckedBy, f: impl FnOnce() -> R) -> R {
    struct Restore(CheckedBy);
    impl Drop for Restore {
        fn drop(&mut self) {
            RUNNER_IS.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(RUNNER_IS.with(|c| c.replace(by)));
    f()
}

/// The checker the runner currently acts as.
pub fn runner_is() -> CheckedBy {
    RUNNER_IS.with(Cell::get)
}

/// Whether two jitcode values are the same for a hint: floats by bits, the rest by value
/// (a reference is its address).
pub fn same(a: Value, b: Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

fn show(v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?} (bits {:#x})", f.to_bits()),
        Value::Ref(a) => format!("{a:#x}"),
    }
}

/// Checks `record_known_result!`: calls the elidable `descr` on `args` and reports a violation
/// at `site`, found by `by`, unless the result is `claimed`. Returns whether the claim held.
pub fn known_result(
    by: CheckedBy,
    site: &HintSite,
    descr: &CallDescr,
    claimed: Value,
    args: &[Value],
) -> bool {
    let actual = (descr.dynamic)(args);
    if actual.is_some_and(|a| same(a, claimed)) {
        return true;
    }
    let arguments = site
        .args
        .iter()
        .zip(args)
        .map(|(name, &v)| format!("{name} = {}", show(v)))
        .collect();
    report_violation(Violation {
        hint: "record_known_result!",
        by,
        file: site.file,
        line: site.line,
        column: site.column,
        call: site.call.to_string(),
        arguments,
        claimed: show(claimed),
        actual: actual.map_or_else(|| "no value".into(), show),
    });
    false
}

/// Checks `record_exact_value!`: reports a violation at `site`, found by `by`, unless `value`
/// is the constant `claimed`. Returns whether the claim held.
pub fn exact_value(by: CheckedBy, site: &HintSite, value: Value, claimed: Value) -> bool {
    if same(value, claimed) {
        return true;
    }
    report_violation(Violation {
        hint: "record_exact_value!",
        by,
        file: site.file,
        line: site.line,
        column: site.column,
        call: site.call.to_string(),
        arguments: vec![],
        claimed: show(claimed),
        actual: show(value),
    });
    false
}
