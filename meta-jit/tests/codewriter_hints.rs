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

// The merge-point rule.
#[interpreter(greens(pc), reds(n))]
fn count_down(n: i64) -> i64 {
    let mut n = n;
    let mut pc = 0u8;
    let mut extra = 0i64;
    loop {
        jit_merge_point!();
        extra += 1;
        if n <= 0 {
            return extra;
        }
        n -= 1;
        pc = pc.wrapping_add(1);
    }
}

#[test]
#[should_panic(
    expected = "variable `extra` is live at jit_merge_point! but is neither a green nor a red"
)]
fn a_live_variable_that_is_neither_green_nor_red_is_named() {
    count_down::jitcode();
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
    assert_eq!(count_down(3), 4);
}
