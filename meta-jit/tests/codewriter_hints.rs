//! Checked mode: RPython's `record_known_result` examples verified on thousands of generated
//! inputs, a wrong hint caught with a shrunk counterexample and the hint's location, and the
//! merge-point rule (every live variable is a green or a red).

use meta_jit::check::{check_hints, violations_of, Failure};
use meta_jit::hints::*;
use quickcheck::Arbitrary;

// `neg` declared its own inverse: neg_helper(neg_helper(x)) == x.
#[elidable]
fn neg_helper(x: i64) -> i64 {
    x.wrapping_neg()
}

#[look_inside]
fn neg(x: i64) -> i64 {
    let r = neg_helper(x);
    record_known_result!(x, neg_helper, r);
    r
}

// Eight ASCII bytes packed in a `u64`: a string the shim ABI can pass.
fn map_bytes(s: u64, f: fn(u8) -> u8) -> u64 {
    let mut out = 0u64;
    for i in 0..8 {
        let b = (s >> (8 * i)) as u8;
        out |= (f(b) as u64) << (8 * i);
    }
    out
}

#[elidable]
fn lower_helper(s: u64) -> u64 {
    map_bytes(s, |b| b.to_ascii_lowercase())
}

#[elidable]
fn upper_helper(s: u64) -> u64 {
    map_bytes(s, |b| b.to_ascii_uppercase())
}

// `lower` declared idempotent: lower_helper(lower_helper(s)) == lower_helper(s).
#[look_inside]
fn lower(s: u64) -> u64 {
    let r = lower_helper(s);
    record_known_result!(r, lower_helper, r);
    r
}

// A wrong hint: it claims upper(lower(s)) == s.
fn lower_wrong(s: u64) -> u64 {
    let r = lower_helper(s);
    record_known_result!(s, upper_helper, r);
    r
}

#[look_inside]
fn exact(x: u8) -> u8 {
    let y = x & 0x0f;
    if y == 3 {
        record_exact_value!(y, 3);
        return y * 2;
    }
    y
}

fn exact_wrong(x: u8) -> u8 {
    record_exact_value!(x, 7);
    x
}

fn line_of(needle: &str) -> u32 {
    let src = include_str!("codewriter_hints.rs");
    src.lines()
        .position(|l| l.contains(needle) && !l.contains("line_of"))
        .expect("hint in source") as u32
        + 1
}

#[test]
fn neg_is_its_own_inverse() {
    assert_eq!(check_hints(5000, neg).map_err(|c| c.to_string()), Ok(5000));
    // The jitcode records the hint and agrees with the native function.
    assert!(neg::jitcode()
        .to_string()
        .contains("record_known_result %i"));
    for x in [0, 1, -1, i64::MIN, i64::MAX, 12345] {
        assert_eq!(neg::run_jitcode(x), neg(x));
    }
}

#[test]
fn lower_is_idempotent() {
    assert_eq!(
        check_hints(5000, lower).map_err(|c| c.to_string()),
        Ok(5000)
    );
    assert_eq!(
        lower(u64::from_le_bytes(*b"HeLLo 42")),
        u64::from_le_bytes(*b"hello 42")
    );
    assert_eq!(
        lower::run_jitcode(u64::from_le_bytes(*b"ABCdefGH")),
        u64::from_le_bytes(*b"abcdefgh")
    );
}

#[test]
fn a_wrong_hint_is_caught_with_a_shrunk_counterexample_and_its_location() {
    let c = check_hints(5000, lower_wrong).expect_err("the hint is wrong");
    let Failure::Hint(v) = &c.failure else {
        panic!("expected a hint violation, got {:?}", c.failure)
    };
    assert_eq!(v.hint, "record_known_result!");
    assert!(v.file.ends_with("codewriter_hints.rs"), "{}", v.file);
    assert_eq!(v.line, line_of("record_known_result!(s, upper_helper, r)"));
    assert_eq!(v.call, "upper_helper(r)");
    // The counterexample still fails, and no shrink of it does: it is a local minimum.
    let again = violations_of(|| lower_wrong(c.input)).0;
    assert_eq!(again.len(), 1);
    for smaller in c.input.shrink() {
        assert!(
            violations_of(|| lower_wrong(smaller)).0.is_empty(),
            "{smaller} still fails"
        );
    }
    // upper(lower(s)) == s fails exactly when s has a lowercase letter.
    assert!(
        c.input.to_le_bytes().iter().any(u8::is_ascii_lowercase),
        "shrunk to {:#x}",
        c.input
    );
    assert!(c.input <= c.original);
    assert!(c.shrink_steps > 0 || c.original == c.input);
    let report = c.to_string();
    assert!(
        report.contains("codewriter_hints.rs:") && report.contains("counterexample"),
        "{report}"
    );
}

#[test]
fn record_exact_value_is_checked() {
    assert_eq!(
        check_hints(2000, exact).map_err(|c| c.to_string()),
        Ok(2000)
    );
    for x in 0..=255u8 {
        assert_eq!(exact::run_jitcode(x), exact(x));
    }
    let c = check_hints(2000, exact_wrong).expect_err("wrong claim");
    let Failure::Hint(v) = &c.failure else {
        panic!()
    };
    assert_eq!(v.hint, "record_exact_value!");
    assert_eq!(v.line, line_of("record_exact_value!(x, 7)"));
    assert_eq!(c.input, 0, "shrinks to the smallest value that is not 7");
}

#[test]
#[should_panic(expected = "record_known_result! at")]
fn outside_check_hints_a_violation_panics() {
    lower_wrong(u64::from(b'q'));
}

#[elidable]
fn add_helper(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

fn add_commutes(a: i64, b: i64) -> i64 {
    let r = add_helper(a, b);
    record_known_result!(r, add_helper, b, a);
    r
}

#[test]
fn several_arguments_as_a_tuple() {
    assert!(check_hints(2000, |(a, b)| add_commutes(a, b)).is_ok());
}

// The merge-point rule, in a case the macro cannot see (`extra` is read only after the loop):
// the jitcode builder names the variable and the merge point.
#[interpreter(greens(pc), reds(n))]
fn count_down(n: i64) -> i64 {
    let mut n = n;
    let mut pc = 0u8;
    let extra = n * 2;
    loop {
        jit_merge_point!();
        if n <= 0 {
            break;
        }
        n -= 1;
        pc = pc.wrapping_add(1);
    }
    extra
}

#[test]
fn a_live_variable_that_is_neither_green_nor_red_is_named() {
    let e = std::panic::catch_unwind(count_down::jitcode).expect_err("the rule is broken");
    let msg = e.downcast_ref::<String>().expect("a message");
    let expected = format!(
        "variable `extra` is live at jit_merge_point!() at meta-jit/tests/codewriter_hints.rs:{}:9 but is neither a green nor a red",
        line_of("fn count_down(n: i64) -> i64 {") + 5
    );
    assert!(msg.contains(&expected), "{msg}\nexpected: {expected}");
}

#[interpreter(greens(pc), reds(n, acc))]
fn count_down_ok(n: i64) -> i64 {
    let mut n = n;
    let mut pc = 0u8;
    let mut acc = 0i64;
    loop {
        jit_merge_point!();
        acc += n;
        if n <= 0 {
            return acc;
        }
        n -= 1;
        pc = pc.wrapping_add(1);
    }
}

#[test]
fn greens_and_reds_cover_the_live_variables() {
    for n in [-3, 0, 1, 10, 100] {
        assert_eq!(count_down_ok::run_jitcode(n), count_down_ok(n));
    }
    assert_eq!(count_down(3), 6);
}

// ---- Hints checked wherever they run (issue 19) ----

use meta_jit::check::{CheckedBy, Violation};

#[elidable]
fn double_helper(x: i64) -> i64 {
    x.wrapping_mul(2)
}

/// Claims double(x) == double(x) + 1: wrong on every call.
#[look_inside]
fn always_wrong(x: i64) -> i64 {
    let r = double_helper(x);
    record_known_result!(r + 1, double_helper, x);
    r
}

/// Wrong only when `x == k`.
#[look_inside]
fn wrong_at(x: i64, k: i64) -> i64 {
    let r = double_helper(x);
    if x == k {
        record_known_result!(r - 1, double_helper, x);
    }
    r
}

/// A loop that passes `always_wrong` twice per iteration (`every == 1`) or `wrong_at(i, k)`
/// once (`every == 0`).
#[interpreter(greens(pc), reds(i, n, k, every, acc))]
fn hinted_loop(n: i64, k: i64, every: i64) -> i64 {
    let mut i = 0i64;
    let mut acc = 0i64;
    #[allow(unused_mut)]
    let mut pc = 0u8;
    loop {
        jit_merge_point!();
        if i >= n {
            return acc + pc as i64;
        }
        if every == 1 {
            acc = acc.wrapping_add(always_wrong(i));
            acc = acc.wrapping_add(always_wrong(i + 1000));
        } else {
            acc = acc.wrapping_add(wrong_at(i, k));
        }
        i += 1;
        can_enter_jit!();
    }
}

fn by(vs: &[Violation], checker: CheckedBy) -> usize {
    vs.iter().filter(|v| v.by == checker).count()
}

fn assert_at(vs: &[Violation], needle: &str) {
    let line = line_of(needle);
    for v in vs {
        assert!(v.file.ends_with("codewriter_hints.rs"), "{v}");
        assert_eq!(v.line, line, "{v}");
        assert!(v.column > 0, "{v}");
    }
}

#[test]
fn the_jitcode_runner_checks_hints() {
    let (vs, panic) = violations_of(|| always_wrong::run_jitcode(21));
    assert_eq!(panic, None);
    assert_eq!(vs.len(), 1, "{vs:?}");
    assert_eq!(vs[0].by, CheckedBy::Runner);
    assert_eq!(vs[0].hint, "record_known_result!");
    assert_eq!(vs[0].call, "double_helper(x)");
    assert_eq!(vs[0].arguments, vec!["x = 21".to_string()]);
    assert_eq!(
        (vs[0].claimed.as_str(), vs[0].actual.as_str()),
        ("43", "42")
    );
    assert_at(&vs, "record_known_result!(r + 1, double_helper, x)");
    // Outside a collector it panics with the location.
    let msg = std::panic::catch_unwind(|| always_wrong::run_jitcode(1)).unwrap_err();
    let msg = msg.downcast_ref::<String>().expect("a formatted panic");
    assert!(
        msg.contains("codewriter_hints.rs:") && msg.contains("(jitcode runner)"),
        "{msg}"
    );
}

#[test]
fn the_tracer_reports_every_occurrence_and_compiled_code_checks_with_check_hints() {
    // 40 iterations, two wrong hints each: every one of the 80 is reported, by checked mode
    // before the loop is hot, by the tracer on the traced iteration, by compiled code after.
    hinted_loop::with_driver(|d| d.set_params("on,threshold=3,check_hints=1").unwrap());
    let (vs, panic) = violations_of(|| hinted_loop(40, -1, 1));
    assert_eq!(panic, None);
    assert_at(&vs, "record_known_result!(r + 1, double_helper, x)");
    assert_eq!(
        vs.len(),
        80,
        "{:?}",
        vs.iter().map(|v| v.by).collect::<Vec<_>>()
    );
    assert_eq!(
        by(&vs, CheckedBy::Tracer),
        2,
        "both hints of the traced iteration"
    );
    assert!(by(&vs, CheckedBy::Native) >= 2);
    assert!(
        by(&vs, CheckedBy::Compiled) >= 60,
        "{}",
        by(&vs, CheckedBy::Compiled)
    );
    assert_eq!(
        by(&vs, CheckedBy::Native) + by(&vs, CheckedBy::Tracer) + by(&vs, CheckedBy::Compiled),
        80
    );
    // Compiled code checked the real arguments: the last iteration's are 39 and 1039.
    let last: Vec<&Violation> = vs.iter().rev().take(2).collect();
    assert_eq!(last[0].arguments, vec!["x = 1039".to_string()]);
    assert_eq!(last[1].arguments, vec!["x = 39".to_string()]);
    // Without the parameter (a new thread: a new driver, nothing compiled yet) compiled code
    // checks nothing.
    let unchecked = std::thread::spawn(|| {
        hinted_loop::with_driver(|d| d.set_params("on,threshold=3").unwrap());
        violations_of(|| hinted_loop(40, -1, 1)).0
    });
    let vs = unchecked.join().unwrap();
    assert_eq!(by(&vs, CheckedBy::Tracer), 2);
    assert_eq!(by(&vs, CheckedBy::Compiled), 0);
}

#[test]
fn the_blackhole_interpreter_checks_hints() {
    // The trace takes `x != k`; at x == k its guard fails and the blackhole interpreter runs
    // the rest of the iteration, wrong hint included.
    hinted_loop::with_driver(|d| d.set_params("on,threshold=3").unwrap());
    let (vs, panic) = violations_of(|| hinted_loop(60, 30, 0));
    assert_eq!(panic, None);
    assert_eq!(vs.len(), 1, "{vs:?}");
    assert_eq!(vs[0].by, CheckedBy::Blackhole, "{}", vs[0]);
    assert_eq!(vs[0].arguments, vec!["x = 30".to_string()]);
    assert_at(&vs, "record_known_result!(r - 1, double_helper, x)");
    let expected: i64 = (0..60).map(|i| 2 * i).sum();
    assert_eq!(violations_of(|| hinted_loop(60, 30, 0)).0.len(), 1);
    assert_eq!(violations_of(|| hinted_loop(60, -1, 0)), (vec![], None));
    assert_eq!(hinted_loop(60, -1, 0), expected);
}

// Floats compare by bits: a NaN result equals itself.
#[elidable]
fn nan_helper(x: f64) -> f64 {
    (-(x * x) - 1.0).sqrt()
}

#[look_inside]
fn nan_hint(x: f64) -> f64 {
    let r = nan_helper(x);
    record_known_result!(r, nan_helper, x);
    r + 1.0
}

#[test]
fn a_nan_result_is_accepted() {
    assert_eq!(
        check_hints(500, nan_hint).map_err(|c| c.to_string()),
        Ok(500)
    );
    for x in [0.0, 1.5, -3.0, f64::INFINITY] {
        let (vs, panic) = violations_of(|| nan_hint::run_jitcode(x));
        assert!(vs.is_empty() && panic.is_none(), "{vs:?} {panic:?}");
        assert!(nan_hint(x).is_nan());
    }
}

// Expression arguments: this is the code that failed in release builds with E0515 (the
// expansion borrowed a temporary); the expansion is now the same code in every build.
#[elidable]
fn widen_helper(x: i64) -> i64 {
    x.wrapping_mul(3)
}

const ZERO: i32 = 0;

fn expression_arguments(x: i32) -> i64 {
    let r = widen_helper(x as i64);
    record_known_result!(r, widen_helper, x as i64);
    record_known_result!(widen_helper(x as i64), widen_helper, (x as i64) + 1 - 1);
    record_exact_value!((x as i64).wrapping_mul(3) % 3, ZERO as i64);
    r
}

#[test]
fn expression_arguments_compile_and_are_checked() {
    assert_eq!(
        check_hints(500, expression_arguments).map_err(|c| c.to_string()),
        Ok(500)
    );
}

// record_exact_value! on a reference: identity.
#[derive(JitLayout, Debug, PartialEq)]
pub struct Settings {
    pub v: i64,
}

pub static DEFAULT_SETTINGS: Settings = Settings { v: 7 };

#[look_inside]
fn settings_value(s: &Settings, is_default: bool) -> i64 {
    if is_default {
        record_exact_value!(s, &DEFAULT_SETTINGS);
    }
    s.v
}

#[test]
fn record_exact_value_of_a_reference_is_identity() {
    let same = || settings_value(&DEFAULT_SETTINGS, true);
    assert_eq!(violations_of(same).0, vec![]);
    assert_eq!(
        violations_of(|| settings_value::run_jitcode(&DEFAULT_SETTINGS, true)).0,
        vec![]
    );
    // Equal contents at another address: the claim is false (the JIT would fold the static).
    let copy = Settings { v: 7 };
    let native = violations_of(|| settings_value(&copy, true)).0;
    let runner = violations_of(|| settings_value::run_jitcode(&copy, true)).0;
    assert_eq!((native.len(), runner.len()), (1, 1));
    assert_eq!(
        (native[0].by, runner[0].by),
        (CheckedBy::Native, CheckedBy::Runner)
    );
    assert_at(&native, "record_exact_value!(s, &DEFAULT_SETTINGS)");
    assert_at(&runner, "record_exact_value!(s, &DEFAULT_SETTINGS)");
}

// Purity of #[elidable].
static BUMPS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// Not pure: bumps a global counter (the 1040-instead-of-100000 loop).
#[elidable]
fn bumping(x: i64) -> i64 {
    x + BUMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

#[derive(Clone, Debug, PartialEq)]
pub struct Boxed {
    pub v: i64,
}

/// Not pure either: its result depends on its argument's address.
#[elidable]
fn address_of(b: &Boxed) -> i64 {
    (b as *const Boxed as i64) & 0xff0 | (b.v & 0xf)
}

/// Pure, with a reference argument and a reference result into it.
#[elidable]
fn inner_of(b: &Boxed) -> &i64 {
    &b.v
}

#[test]
fn an_impure_elidable_function_is_caught() {
    let c = check_hints(100, bumping).expect_err("impure");
    let Failure::Hint(v) = &c.failure else {
        panic!("{c}")
    };
    assert_eq!(v.hint, "#[elidable]");
    assert_eq!(v.line, line_of("fn bumping(x: i64)"));
    assert!(
        v.to_string()
            .contains("bumping called twice with the same arguments"),
        "{v}"
    );
    let heap = Boxed { v: 3 };
    let (vs, _) = violations_of(|| address_of(&heap));
    assert_eq!(vs.len(), 1, "{vs:?}");
    assert!(vs[0].call.contains("at other addresses"), "{}", vs[0]);
    // Pure functions pass, a reference result into a copied argument included.
    let (vs, panic) = violations_of(|| (*inner_of(&heap), double_helper(4), nan_helper(1.0)));
    assert_eq!((vs, panic), (vec![], None));
}

#[test]
fn check_hints_output_and_collection_are_bounded() {
    // A panicking function: the first counterexample, shrunk, and nothing printed per input.
    let c = check_hints(1_000_000, |x: u32| {
        assert!(x < 10, "too big: {x}");
    })
    .expect_err("panics");
    assert_eq!(c.input, 10, "shrunk to the smallest failing input");
    assert!(matches!(&c.failure, Failure::Panic(m) if m.contains("too big: 10")));
    // A wrong hint passed 5000 times: the collection keeps the first MAX_COLLECTED.
    let (vs, _) = violations_of(|| (0..5000).map(always_wrong).sum::<i64>());
    assert_eq!(vs.len(), meta_jit::check::MAX_COLLECTED);
}

// #[loop_invariant]: called once per loop, in the preamble, and reused by the loop body.
static LIMIT_CALLS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

#[loop_invariant]
fn current_limit() -> i64 {
    LIMIT_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    1_000_000
}

#[interpreter(greens(pc), reds(i, n, acc))]
fn limited_sum(n: i64) -> i64 {
    let mut i = 0i64;
    let mut acc = 0i64;
    #[allow(unused_mut)]
    let mut pc = 0u8;
    loop {
        jit_merge_point!();
        if i >= n {
            return acc + pc as i64;
        }
        if i < current_limit() {
            acc += i;
        }
        i += 1;
        can_enter_jit!();
    }
}

#[test]
fn a_loop_invariant_call_leaves_the_loop_body() {
    let expected: i64 = (0..2000).sum();
    limited_sum::with_driver(|d| d.set_params("on,threshold=3,keep_optimized=1").unwrap());
    let before = LIMIT_CALLS.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(limited_sum(2000), expected);
    let calls = LIMIT_CALLS.load(std::sync::atomic::Ordering::Relaxed) - before;
    let trace = limited_sum::with_driver(|d| d.with_stats(|s| s.traces[0].optimized().to_string()));
    let lines: Vec<&str> = trace.lines().collect();
    let label = lines
        .iter()
        .position(|l| l.contains("label("))
        .unwrap_or_else(|| panic!("a peeled loop:\n{trace}"));
    let calls_in = |ls: &[&str]| {
        ls.iter()
            .filter(|l| l.contains("ConstFn(current_limit)"))
            .count()
    };
    assert_eq!(
        calls_in(&lines[..label]),
        1,
        "one call in the preamble:\n{trace}"
    );
    assert_eq!(
        calls_in(&lines[label..]),
        0,
        "none in the loop body:\n{trace}"
    );
    // 2000 iterations: a few natively before the loop is hot, one while tracing, one per
    // entry into the compiled loop (a bridge, which this loop does not have, would call it
    // again each time it runs).
    assert!(calls < 10, "{calls} calls");
}

// Purity of #[elidable] methods.
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Counter {
    pub base: i64,
}

static METHOD_BUMPS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

#[meta_jit::hints::methods]
impl Counter {
    /// Pure.
    #[elidable]
    pub fn plus(&self, x: i64) -> i64 {
        self.base.wrapping_add(x)
    }
    /// Not pure.
    #[elidable]
    pub fn bumped(&self, x: i64) -> i64 {
        x + self.base + METHOD_BUMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

#[test]
fn an_impure_elidable_method_is_caught() {
    let c = Counter { base: 5 };
    assert_eq!(violations_of(|| c.plus(3)), (vec![], None));
    assert_eq!(c.plus(3), 8);
    let (vs, _) = violations_of(|| c.bumped(1));
    assert_eq!(vs.len(), 1, "{vs:?}");
    assert_eq!(vs[0].hint, "#[elidable]");
    assert!(
        vs[0].call.starts_with("Counter::bumped called twice"),
        "{}",
        vs[0]
    );
    assert_eq!(vs[0].line, line_of("pub fn bumped(&self, x: i64)"));
}

#[elidable]
fn weigh6(a: i64, b: i64, c: i64, d: i64, e: i64, f: f64) -> i64 {
    a + 2 * b + 3 * c + 4 * d + 5 * e + f as i64
}

/// A loop whose hint has six arguments (more than the check call takes in registers) and
/// claims one too many.
#[interpreter(greens(pc), reds(i, n, acc))]
fn six_arguments_loop(n: i64) -> i64 {
    let mut i = 0i64;
    let mut acc = 0i64;
    #[allow(unused_mut)]
    let mut pc = 0u8;
    loop {
        jit_merge_point!();
        if i >= n {
            return acc + pc as i64;
        }
        let w = weigh6(i, i + 1, i + 2, i + 3, i + 4, 0.5);
        record_known_result!(w + 1, weigh6, i, i + 1, i + 2, i + 3, i + 4, 0.5);
        acc = acc.wrapping_add(w);
        i += 1;
        can_enter_jit!();
    }
}

#[test]
fn compiled_code_checks_hints_with_more_arguments_than_registers() {
    six_arguments_loop::with_driver(|d| d.set_params("on,threshold=3,check_hints=1").unwrap());
    let (vs, panic) = violations_of(|| six_arguments_loop(30));
    assert_eq!(panic, None);
    assert_eq!(
        vs.len(),
        30,
        "{:?}",
        vs.iter().map(|v| v.by).collect::<Vec<_>>()
    );
    assert!(
        by(&vs, CheckedBy::Compiled) >= 20,
        "{}",
        by(&vs, CheckedBy::Compiled)
    );
    // The last iteration's arguments, the stashed ones (the fifth and the float) included.
    let last = vs.last().unwrap();
    assert_eq!(last.by, CheckedBy::Compiled);
    assert_eq!(
        last.arguments,
        [
            "i = 29",
            "i + 1 = 30",
            "i + 2 = 31",
            "i + 3 = 32",
            "i + 4 = 33",
            "0.5 = 0.5 (bits 0x3fe0000000000000)"
        ]
        .map(String::from)
        .to_vec()
    );
    let w = 29 + 2 * 30 + 3 * 31 + 4 * 32 + 5 * 33;
    assert_eq!(
        (last.claimed.as_str(), last.actual.as_str()),
        (format!("{}", w + 1).as_str(), format!("{w}").as_str())
    );
}
