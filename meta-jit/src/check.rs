//! Checked mode and its quickcheck helpers: verifying the claims hints make. The helpers
//! (`check_hints` and the rest that generate inputs) need the `testing` feature.
//!
//! Owns: what a hint violation is ([`Violation`], with the checker that found it:
//! [`CheckedBy`]), how checked mode compares a claimed value with the actual one
//! ([`HintValue`]: integers by value, floats by bits, references by address), what happens when
//! a violation is found (a panic with the hint's location, arguments and both values, or, inside
//! `check_hints` and [`violations_of`], a recorded failure), and the property-testing loop that
//! runs a hinted function on generated inputs and shrinks a failing one to a small
//! counterexample.
//! Must not know: jitcode, traces, or any guest language.
//!
//! Hints are checked wherever they run:
//! - natively, where the hint macros expand, with `debug_assertions` or `test` enabled in the
//!   crate that uses them (the purity of `#[elidable]` functions too: see `purity`);
//! - by the jitcode runner and the blackhole interpreter, on every hint they execute, in every
//!   build;
//! - by the tracer, on every hint it records, in every build;
//! - by compiled code, with the JIT parameter `check_hints=1`.
//!
//! Every report carries the hint's source file, line and column.
#![deny(unsafe_code)]

use std::cell::RefCell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(feature = "testing")]
use quickcheck::{Arbitrary, Gen};

/// Which checker found a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckedBy {
    /// The hint macro's own check in the native interpreter (debug builds and `cfg(test)`).
    Native,
    /// The jitcode-only runner (`run_jitcode`).
    Runner,
    /// The blackhole interpreter, after a guard failure or an aborted trace.
    Blackhole,
    /// The tracer, on the values it records.
    Tracer,
    /// Compiled code, with the JIT parameter `check_hints=1`.
    Compiled,
}

impl fmt::Display for CheckedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CheckedBy::Native => "checked mode",
            CheckedBy::Runner => "jitcode runner",
            CheckedBy::Blackhole => "blackhole interpreter",
            CheckedBy::Tracer => "tracer",
            CheckedBy::Compiled => "compiled code",
        })
    }
}

/// A hint whose claim did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// `record_known_result!`, `record_exact_value!` or `#[elidable]` (an impure function).
    pub hint: &'static str,
    /// The checker that found it.
    pub by: CheckedBy,
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
            "{} at {}:{}:{} does not hold ({}): ",
            self.hint, self.file, self.line, self.column, self.by
        )?;
        if self.hint == "#[elidable]" {
            write!(
                f,
                "{}, it gave {} then {}",
                self.call, self.claimed, self.actual
            )?;
        } else {
            write!(
                f,
                "{} is {} but the hint claims {}",
                self.call, self.actual, self.claimed
            )?;
        }
        if !self.arguments.is_empty() {
            write!(f, " (arguments: {})", self.arguments.join(", "))?;
        }
        Ok(())
    }
}

/// At most this many violations are kept by one [`violations_of`] run (an impure function in a
/// long loop would otherwise fill memory); later ones are counted only.
pub const MAX_COLLECTED: usize = 1000;

/// The violations collected on this thread: the list and how many were dropped.
type Collected = (Vec<Violation>, usize);

thread_local! {
    static COLLECTOR: RefCell<Option<Collected>> = const { RefCell::new(None) };
}

/// Whether a [`violations_of`] (or `check_hints`) run on this thread is collecting
/// violations, in which case [`report_violation`] records instead of panicking.
pub fn collecting() -> bool {
    COLLECTOR.with(|c| c.borrow().is_some())
}

/// Called by every checker when a hint does not hold. Panics with the violation, unless a
/// [`violations_of`] run on this thread is collecting them.
#[track_caller]
pub fn report_violation(v: Violation) {
    let collected = COLLECTOR.with(|c| match c.borrow_mut().as_mut() {
        Some((list, dropped)) => {
            if list.len() < MAX_COLLECTED {
                list.push(v.clone());
            } else {
                *dropped += 1;
            }
            true
        }
        None => false,
    });
    if !collected {
        panic!("{v}");
    }
}

/// Installs (once per process) a panic hook that prints nothing while this thread collects
/// violations: the panics [`check_hints`] catches are reported as its result, not on standard
/// error (a panicking function tried on thousands of inputs printed millions of messages).
/// Outside collection the previous hook runs as before.
fn quiet_panics_while_collecting() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet = COLLECTOR
                .try_with(|c| c.try_borrow().map(|c| c.is_some()).unwrap_or(true))
                .unwrap_or(false);
            if !quiet {
                previous(info);
            }
        }));
    });
}

/// Runs `f` and returns the hint violations it reached (in order; at most [`MAX_COLLECTED`]),
/// or its panic message. Panics inside `f` print nothing.
pub fn violations_of<R>(f: impl FnOnce() -> R) -> (Vec<Violation>, Option<String>) {
    quiet_panics_while_collecting();
    let previous = COLLECTOR.with(|c| c.borrow_mut().replace((Vec::new(), 0)));
    let result = catch_unwind(AssertUnwindSafe(f));
    let found = COLLECTOR
        .with(|c| std::mem::replace(&mut *c.borrow_mut(), previous))
        .map(|(list, _)| list)
        .unwrap_or_default();
    let panic = result.err().map(|e| {
        let mut m = panic_message(&*e);
        if m.len() > MAX_MESSAGE {
            let mut end = MAX_MESSAGE;
            while !m.is_char_boundary(end) {
                end -= 1;
            }
            m.truncate(end);
            m.push_str("...");
        }
        m
    });
    (found, panic)
}

/// A panic message kept in a [`Failure::Panic`] is cut to this many bytes.
const MAX_MESSAGE: usize = 2000;

/// At most this many shrink candidates are tried for one counterexample.
pub const MAX_SHRINK_TRIES: usize = 10_000;

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
/// failing input, shrunk (quickcheck's `Arbitrary::shrink`, at most [`MAX_SHRINK_TRIES`]
/// candidates) while it still fails, or `Ok` with the number of inputs run. It stops at that
/// first counterexample and prints nothing while it runs. For several arguments use a tuple: `check_hints(n, |(a, b)| ..)`.
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
        let (mut input, mut failure, mut steps, mut tries) = (a, failure, 0, 0);
        'shrink: loop {
            for candidate in input.shrink() {
                tries += 1;
                if tries > MAX_SHRINK_TRIES {
                    break 'shrink;
                }
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

/// How checked mode compares a hint's claimed value with the actual one, and prints them.
///
/// The rule, the same in every checker: integers, `bool` and `char` by value; floats by their
/// bits (so a NaN result equals the same NaN: `f64::NAN` claimed for `f64::NAN` holds, while
/// two NaNs with different bits, which `to_bits` tells apart, differ); references, raw
/// pointers and [`crate::gc::Gc`]s by address (identity): the JIT replaces the call with the
/// claimed reference itself, so an equal object at another address is not the same result. Other types (user enums, for
/// example) fall back to `PartialEq` and `Debug`.
pub trait HintValue {
    /// Whether the two values are the same in the sense above.
    fn hint_eq(&self, other: &Self) -> bool;
    /// The value as a report shows it.
    fn hint_show(&self) -> String;
    /// Whether the value is an address (compared by identity).
    fn hint_is_address(&self) -> bool {
        false
    }
}

macro_rules! hint_value_by_eq {
    ($($t:ty),*) => {$(
        impl HintValue for $t {
            fn hint_eq(&self, other: &Self) -> bool {
                self == other
            }
            fn hint_show(&self) -> String {
                format!("{self:?}")
            }
        }
    )*};
}
hint_value_by_eq!(
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    bool,
    char,
    ()
);

macro_rules! hint_value_by_bits {
    ($($t:ty),*) => {$(
        impl HintValue for $t {
            fn hint_eq(&self, other: &Self) -> bool {
                self.to_bits() == other.to_bits()
            }
            fn hint_show(&self) -> String {
                format!("{self:?} (bits {:#x})", self.to_bits())
            }
        }
    )*};
}
hint_value_by_bits!(f32, f64);

impl<T: ?Sized> HintValue for &T {
    fn hint_eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(*self, *other)
    }
    fn hint_show(&self) -> String {
        format!("{:p}", *self)
    }
    fn hint_is_address(&self) -> bool {
        true
    }
}
impl<T: ?Sized> HintValue for &mut T {
    fn hint_eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(&**self, &**other)
    }
    fn hint_show(&self) -> String {
        format!("{:p}", &**self)
    }
    fn hint_is_address(&self) -> bool {
        true
    }
}
impl<T: ?Sized> HintValue for *const T {
    fn hint_eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(*self, *other)
    }
    fn hint_show(&self) -> String {
        format!("{:p}", *self)
    }
    fn hint_is_address(&self) -> bool {
        true
    }
}
impl<T: ?Sized> HintValue for *mut T {
    fn hint_eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(*self, *other)
    }
    fn hint_show(&self) -> String {
        format!("{:p}", *self)
    }
    fn hint_is_address(&self) -> bool {
        true
    }
}
impl<T: 'static> HintValue for crate::gc::Gc<T> {
    fn hint_eq(&self, other: &Self) -> bool {
        crate::gc::Gc::ptr_eq(*self, *other)
    }
    fn hint_show(&self) -> String {
        format!("{:p}", self.as_ptr())
    }
    fn hint_is_address(&self) -> bool {
        true
    }
}
impl<T: HintValue> HintValue for Option<T> {
    fn hint_eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Some(a), Some(b)) => a.hint_eq(b),
            (None, None) => true,
            _ => false,
        }
    }
    fn hint_show(&self) -> String {
        match self {
            Some(a) => format!("Some({})", a.hint_show()),
            None => "None".into(),
        }
    }
    fn hint_is_address(&self) -> bool {
        self.as_ref().is_some_and(T::hint_is_address)
    }
}

/// What the hint macros expand to; not an API.
#[doc(hidden)]
pub mod __private {
    use super::HintValue;
    use std::fmt::Debug;

    /// A value to compare: [`HintValue`] when its type has it, else `PartialEq` and `Debug`
    /// (chosen by method lookup: the first impl is on `Cmp`, the fallback on `&Cmp`).
    pub struct Cmp<'a, T>(pub &'a T);

    /// The [`HintValue`] comparison.
    pub trait ViaHintValue<T> {
        /// Same value.
        fn __jit_same(&self, other: &T) -> bool;
        /// Shown.
        fn __jit_show(&self) -> String;
    }
    impl<T: HintValue> ViaHintValue<T> for Cmp<'_, T> {
        fn __jit_same(&self, other: &T) -> bool {
            self.0.hint_eq(other)
        }
        fn __jit_show(&self) -> String {
            self.0.hint_show()
        }
    }

    /// The fallback comparison.
    pub trait ViaPartialEq<T> {
        /// Same value.
        fn __jit_same(&self, other: &T) -> bool;
        /// Shown.
        fn __jit_show(&self) -> String;
    }
    impl<T: PartialEq + Debug> ViaPartialEq<T> for &Cmp<'_, T> {
        fn __jit_same(&self, other: &T) -> bool {
            self.0 == other
        }
        fn __jit_show(&self) -> String {
            format!("{:?}", self.0)
        }
    }
}

/// The purity check of `#[elidable]` functions in checked mode (what the attribute's native
/// expansion calls; not an API). The outermost elidable call on a thread runs the function's
/// body twice with the same arguments, and, when every reference argument's target is `Clone`,
/// once more with copies of those targets at other addresses; a different result is reported
/// as a violation of `#[elidable]` at the function. Elidable calls made while a check runs are
/// not checked again (a recursive or nested elidable function would otherwise run
/// exponentially often). What this cannot catch is in the book ("Checking your hints").
#[doc(hidden)]
pub mod purity {
    use super::{report_violation, CheckedBy, HintValue, Violation};
    use std::cell::Cell;
    use std::fmt::Debug;

    /// Where the elidable function is defined.
    #[derive(Clone, Copy)]
    pub struct Site {
        /// Source file.
        pub file: &'static str,
        /// Line of its name.
        pub line: u32,
        /// Column of its name.
        pub column: u32,
        /// Its name.
        pub name: &'static str,
    }

    thread_local! {
        static CHECKING: Cell<bool> = const { Cell::new(false) };
    }

    /// Held while a purity check runs on this thread.
    pub struct Guard(());
    impl Drop for Guard {
        fn drop(&mut self) {
            CHECKING.with(|c| c.set(false));
        }
    }

    /// `Some` when no purity check is running on this thread (this call is the outermost).
    pub fn outermost() -> Option<Guard> {
        CHECKING.with(|c| (!c.replace(true)).then_some(Guard(())))
    }

    /// Reports that the function at `site` gave `first`, then `second` for the same arguments
    /// (`moved`: for copies of its reference arguments at other addresses).
    pub fn impure(site: Site, moved: bool, arguments: Vec<String>, first: String, second: String) {
        let how = if moved {
            "again with copies of its reference arguments at other addresses"
        } else {
            "twice with the same arguments"
        };
        report_violation(Violation {
            hint: "#[elidable]",
            by: CheckedBy::Native,
            file: site.file,
            line: site.line,
            column: site.column,
            call: format!("{} called {how}", site.name),
            arguments,
            claimed: first,
            actual: second,
        });
    }

    /// A result to compare ([`HintValue`], else `PartialEq` and `Debug`).
    pub struct Show<'a, T>(pub &'a T);

    /// Comparison through [`HintValue`].
    pub trait ViaHintValue<T> {
        /// Same result.
        fn __jit_same(&self, other: &T) -> bool;
        /// Same result of a call with copied arguments (a reference result is not compared:
        /// it may point into the copies).
        fn __jit_same_contents(&self, other: &T) -> bool;
        /// Shown.
        fn __jit_show(&self) -> String;
    }
    impl<T: HintValue> ViaHintValue<T> for Show<'_, T> {
        fn __jit_same(&self, other: &T) -> bool {
            self.0.hint_eq(other)
        }
        fn __jit_same_contents(&self, other: &T) -> bool {
            self.0.hint_is_address() || self.0.hint_eq(other)
        }
        fn __jit_show(&self) -> String {
            self.0.hint_show()
        }
    }
    /// Comparison through `PartialEq`.
    pub trait ViaPartialEq<T> {
        /// Same result.
        fn __jit_same(&self, other: &T) -> bool;
        /// Same result of a call with copied arguments.
        fn __jit_same_contents(&self, other: &T) -> bool;
        /// Shown.
        fn __jit_show(&self) -> String;
    }
    impl<T: PartialEq + Debug> ViaPartialEq<T> for &Show<'_, T> {
        fn __jit_same(&self, other: &T) -> bool {
            self.0 == other
        }
        fn __jit_same_contents(&self, other: &T) -> bool {
            self.0 == other
        }
        fn __jit_show(&self) -> String {
            format!("{:?}", self.0)
        }
    }

    /// An argument to show (`Debug`, else `_`).
    pub struct Arg<'a, T>(pub &'a T);
    /// Shown with `Debug`.
    pub trait ViaDebugArg {
        /// Shown.
        fn __jit_arg(&self) -> String;
    }
    impl<T: Debug> ViaDebugArg for Arg<'_, T> {
        fn __jit_arg(&self) -> String {
            format!("{:?}", self.0)
        }
    }
    /// Not shown.
    pub trait ViaAnyArg {
        /// `_`.
        fn __jit_arg(&self) -> String;
    }
    impl<T> ViaAnyArg for &Arg<'_, T> {
        fn __jit_arg(&self) -> String {
            "_".into()
        }
    }

    /// A reference argument to copy to another address (when its target is `Clone`).
    pub struct Moved<'a, T>(pub &'a T);
    /// The copy.
    pub trait ViaClone<T> {
        /// A copy at a new address.
        fn __jit_moved(&self) -> Option<Box<T>>;
    }
    impl<T: Clone> ViaClone<T> for Moved<'_, T> {
        fn __jit_moved(&self) -> Option<Box<T>> {
            Some(Box::new(self.0.clone()))
        }
    }
    /// No copy.
    pub trait ViaNoClone<T> {
        /// `None`.
        fn __jit_moved(&self) -> Option<Box<T>>;
    }
    impl<T> ViaNoClone<T> for &Moved<'_, T> {
        fn __jit_moved(&self) -> Option<Box<T>> {
            None
        }
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

#[cfg(test)]
mod tests {
    use super::HintValue;
    use crate::gc::Gc;

    #[test]
    fn gcs_compare_by_identity_not_content() {
        let (a, b) = (Gc::new(7i64), Gc::new(7i64));
        assert!(a.hint_eq(&a));
        assert!(!a.hint_eq(&b), "equal contents, two objects");
        assert!(a.hint_is_address());
        assert_eq!(a.hint_show(), format!("{:p}", a.as_ptr()));
        assert!(Some(a).hint_eq(&Some(a)) && !Some(a).hint_eq(&Some(b)));
    }
}
