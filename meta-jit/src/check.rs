//! Checked mode and its quickcheck helpers: verifying the claims hints make. The helpers
//! (`check_hints` and the rest that generate inputs) need the `testing` feature.
//!
//! Owns: what a hint violation is ([`Violation`]), what happens when one is found (a panic with
//! the hint's location, arguments and both values, or, inside `check_hints`, a recorded
//! failure), and the property-testing loop that runs a hinted function on generated inputs and
//! shrinks a failing one to a small counterexample.
//! Must not know: jitcode, traces, or any guest language.
//!
//! Checks happen in two places. The hint macros check their claims where they expand with
//! `debug_assertions` or `test` enabled (in the crate that uses the hints); in release builds
//! they expand to nothing there. The tracer checks the `record_known_result!` and
//! `record_exact_value!` it records from jitcode, in every build, and reports a violation at
//! `<traced jitcode>` (no source location) when the claim does not hold on the traced values.
//! So outside debug or test builds, `check_hints` finds only the violations the tracer
//! reports (on code the JIT traces during the run).
#![deny(unsafe_code)]

use std::cell::RefCell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(feature = "testing")]
use quickcheck::{Arbitrary, Gen};

/// A hint whose claim did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// `record_known_result!` or `record_exact_value!`.
    pub hint: &'static str,
    /// Source file of the hint.
    pub file: &'static str,
    /// Line of the hint.
    pub line: u32,
    /// Column of the hint.
    pub column: u32,
    /// The claimed call (`f(args)`) or value expression.
    pub call: String,
    /// `name = value` for each argument.
    pub arguments: Vec<String>,
    /// The value the hint claimed.
    pub claimed: String,
    /// The value the native computation gave.
    pub actual: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}:{}:{} does not hold: ",
            self.hint, self.file, self.line, self.column
        )?;
        write!(
            f,
            "{} is {} but the hint claims {}",
            self.call, self.actual, self.claimed
        )?;
        if !self.arguments.is_empty() {
            write!(f, " (arguments: {})", self.arguments.join(", "))?;
        }
        Ok(())
    }
}

thread_local! {
    static COLLECTOR: RefCell<Option<Vec<Violation>>> = const { RefCell::new(None) };
}

/// Called by the checked-mode expansion of the hints, and by the tracer when a hint it records
/// does not hold. Panics with the violation, unless a `check_hints` run on this thread is
/// collecting them.
#[track_caller]
pub fn report_violation(v: Violation) {
    let collected = COLLECTOR.with(|c| match c.borrow_mut().as_mut() {
        Some(list) => {
            list.push(v.clone());
            true
        }
        None => false,
    });
    if !collected {
        panic!("{v}");
    }
}

/// Runs `f` and returns the hint violations it reached (in order), or its panic message.
pub fn violations_of<R>(f: impl FnOnce() -> R) -> (Vec<Violation>, Option<String>) {
    let previous = COLLECTOR.with(|c| c.borrow_mut().replace(Vec::new()));
    let result = catch_unwind(AssertUnwindSafe(f));
    let found = COLLECTOR
        .with(|c| std::mem::replace(&mut *c.borrow_mut(), previous))
        .unwrap_or_default();
    let panic = result.err().map(|e| panic_message(&*e));
    (found, panic)
}

/// Why an input failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A hint's claim did not hold (the first one reached).
    Hint(Violation),
    /// The function panicked for another reason.
    Panic(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Hint(v) => write!(f, "{v}"),
            Failure::Panic(m) => write!(f, "panicked: {m}"),
        }
    }
}

/// A failing input, shrunk.
#[cfg(feature = "testing")]
#[derive(Clone, Debug)]
pub struct Counterexample<A> {
    /// The smallest failing input found.
    pub input: A,
    /// The failure on that input.
    pub failure: Failure,
    /// The first failing input generated.
    pub original: A,
    /// How many shrinking steps were taken.
    pub shrink_steps: usize,
}

#[cfg(feature = "testing")]
impl<A: fmt::Debug> fmt::Display for Counterexample<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\n  counterexample (shrunk in {} steps): {:?}\n  first failing input: {:?}",
            self.failure, self.shrink_steps, self.input, self.original
        )
    }
}

#[cfg(feature = "testing")]
fn failure_of<A, R>(f: &impl Fn(A) -> R, a: A) -> Option<Failure> {
    let (violations, panic) = violations_of(|| f(a));
    match (violations.into_iter().next(), panic) {
        (Some(v), _) => Some(Failure::Hint(v)),
        (None, Some(p)) => Some(Failure::Panic(p)),
        (None, None) => None,
    }
}

#[cfg(feature = "testing")]
/// Runs `f` on `tests` generated inputs with every hint it reaches checked. Returns the first
/// failing input, shrunk (quickcheck's `Arbitrary::shrink`) while it still fails, or `Ok` with
/// the number of inputs run. For several arguments use a tuple: `check_hints(n, |(a, b)| ..)`.
pub fn check_hints<A, R>(tests: u64, f: impl Fn(A) -> R) -> Result<u64, Box<Counterexample<A>>>
where
    A: Arbitrary + fmt::Debug,
{
    check_hints_with(&mut Gen::new(100), tests, f)
}

#[cfg(feature = "testing")]
/// `check_hints` with a given generator (size and seed).
pub fn check_hints_with<A, R>(
    g: &mut Gen,
    tests: u64,
    f: impl Fn(A) -> R,
) -> Result<u64, Box<Counterexample<A>>>
where
    A: Arbitrary + fmt::Debug,
{
    for _ in 0..tests {
        let a = A::arbitrary(g);
        let Some(failure) = failure_of(&f, a.clone()) else {
            continue;
        };
        let original = a.clone();
        let (mut input, mut failure, mut steps) = (a, failure, 0);
        'shrink: loop {
            for candidate in input.shrink() {
                if let Some(fail) = failure_of(&f, candidate.clone()) {
                    input = candidate;
                    failure = fail;
                    steps += 1;
                    continue 'shrink;
                }
            }
            break;
        }
        return Err(Box::new(Counterexample {
            input,
            failure,
            original,
            shrink_steps: steps,
        }));
    }
    Ok(tests)
}

#[cfg(feature = "testing")]
/// `check_hints`, panicking with the counterexample report on failure.
#[track_caller]
pub fn assert_hints_hold<A, R>(tests: u64, f: impl Fn(A) -> R)
where
    A: Arbitrary + fmt::Debug,
{
    if let Err(c) = check_hints(tests, f) {
        panic!("hint check failed: {c}");
    }
}

/// The message of a panic payload caught by `catch_unwind` or `JoinHandle::join`: the
/// `String` or `&str` it carries, or `"<non-string panic>"` for any other payload.
///
/// ```
/// use meta_jit::check::panic_message;
///
/// let e = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
/// assert_eq!(panic_message(&*e), "boom 1");
/// let e = std::panic::catch_unwind(|| std::panic::panic_any(7)).unwrap_err();
/// assert_eq!(panic_message(&*e), "<non-string panic>");
/// ```
pub fn panic_message(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "<non-string panic>".into())
}
