//! Lowering of small functions, run in the jitcode-only mode against the native function on
//! quickcheck-generated arguments. A panic (overflow, division by zero, bounds) must happen in
//! both or neither, with the same message.
// The functions below exercise constructs on purpose, in the forms clippy would rewrite.
#![allow(
    clippy::nonminimal_bool,
    clippy::never_loop,
    clippy::unnecessary_cast,
    clippy::manual_range_patterns,
    clippy::neg_cmp_op_on_partial_ord
)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use meta_jit::hints::*;
use meta_jit::testing::panic_message;
use quickcheck::{QuickCheck, TestResult};

/// Runs both and compares results or panic messages.
fn same<R: PartialEq + std::fmt::Debug>(
    native: impl FnOnce() -> R,
    jit: impl FnOnce() -> R,
) -> TestResult {
    let n = catch_unwind(AssertUnwindSafe(native)).map_err(|e| panic_message(&*e));
    let j = catch_unwind(AssertUnwindSafe(jit)).map_err(|e| panic_message(&*e));
    if n == j {
        TestResult::passed()
    } else {
        TestResult::error(format!("native {n:?} vs jitcode {j:?}"))
    }
}

/// Whether this crate is built with overflow checks (a debug build): an overflowing `+` or `*`
/// then panics, in native code and in its jitcode alike; in a release build both wrap.
fn overflow_checks() -> bool {
    catch_unwind(|| std::hint::black_box(i64::MAX) + std::hint::black_box(1)).is_err()
}

/// A fixed seed, so CI runs the same cases; `METAJIT_PROP_SEED` and `METAJIT_PROP_CASES`
/// explore others.
fn qc() -> QuickCheck {
    meta_jit::testing::prop_runner(0x6c6f77, 0, 500)
}

#[look_inside]
fn arith(a: i64, b: i64) -> i64 {
    let c = a * 3 + b;
    if c > 10 {
        c - a / (b | 1)
    } else {
        -c % 7
    }
}

#[test]
fn arithmetic_with_overflow_checks() {
    fn p(a: i64, b: i64) -> TestResult {
        same(|| arith(a, b), || arith::run_jitcode(a, b))
    }
    qc().quickcheck(p as fn(i64, i64) -> TestResult);
    // Overflow panics in both with overflow checks, and wraps in both without.
    let r = same(|| arith(i64::MAX, 1), || arith::run_jitcode(i64::MAX, 1));
    assert!(!r.is_error() && !r.is_failure());
    assert_eq!(
        catch_unwind(|| arith::run_jitcode(i64::MAX / 2, 0)).is_err(),
        overflow_checks()
    );
}

#[look_inside]
fn narrow(a: u8, b: i16, s: u32) -> i64 {
    let x = a.wrapping_add(200) as i64;
    let y = (b as i32) << (s % 16);
    let z = (a as i8) as i64 ^ (y >> 3) as i64;
    let w = !a & 0x5a | (b as u8);
    x + z + w as i64 + (a as u64 / 3) as i64
}

#[test]
fn narrow_integers_and_casts() {
    fn p(a: u8, b: i16, s: u32) -> TestResult {
        same(|| narrow(a, b, s), || narrow::run_jitcode(a, b, s))
    }
    qc().quickcheck(p as fn(u8, i16, u32) -> TestResult);
}

#[look_inside]
fn floats(x: f64, y: f64, n: i32) -> f64 {
    let a = x * 2.5 - y / 3.0;
    let b = if a < y && !(x >= 0.0) { a.abs() } else { -a };
    let c = (b as i32) as f64 + n as f64;
    c % 4.0 + (x as u8) as f64
}

#[test]
fn float_arithmetic_and_saturating_casts() {
    fn p(x: f64, y: f64, n: i32) -> TestResult {
        let (nv, jv) = (floats(x, y, n), floats::run_jitcode(x, y, n));
        TestResult::from_bool(nv.to_bits() == jv.to_bits() || (nv.is_nan() && jv.is_nan()))
    }
    qc().quickcheck(p as fn(f64, f64, i32) -> TestResult);
}

#[look_inside]
fn unsigned(a: u64, b: u64) -> u64 {
    // Division and remainder by 0 and a checked product that overflows panic.
    let q = a / b;
    let r = a % (b | 1);
    let p = a.wrapping_add(1) * (b >> 40);
    q ^ r.wrapping_mul(31) ^ p.wrapping_mul(1_000_003)
}

#[test]
fn unsigned_64_bit_division_remainder_and_checked_product() {
    fn p(a: u64, b: u64) -> TestResult {
        same(|| unsigned(a, b), || unsigned::run_jitcode(a, b))
    }
    qc().quickcheck(p as fn(u64, u64) -> TestResult);
    let edges = [
        (5, 0),
        (u64::MAX - 1, 1 << 40),
        (u64::MAX - 1, 1 << 41),
        (1 << 62, 3 << 40),
    ];
    for (a, b) in edges {
        let r = p(a, b);
        assert!(!r.is_error() && !r.is_failure(), "{a} {b}");
    }
    assert!(catch_unwind(|| unsigned::run_jitcode(5, 0)).is_err());
    assert_eq!(
        catch_unwind(|| unsigned::run_jitcode(u64::MAX - 1, 1 << 41)).is_err(),
        overflow_checks()
    );
    assert_eq!(
        unsigned::run_jitcode(u64::MAX - 1, 1 << 40),
        unsigned(u64::MAX - 1, 1 << 40)
    );
}

#[look_inside]
fn to_int(x: f64, k: u8) -> i64 {
    match k % 8 {
        0 => x as u8 as i64,
        1 => x as i8 as i64,
        2 => x as u16 as i64,
        3 => x as i16 as i64,
        4 => x as u32 as i64,
        5 => x as i32 as i64,
        6 => x as u64 as i64,
        _ => x as usize as i64,
    }
}

#[look_inside]
fn to_float(n: u64) -> f64 {
    n as f64
}

#[look_inside]
fn remainder(x: f64, y: f64) -> f64 {
    x % y
}

#[test]
fn float_to_every_integer_type_u64_to_float_and_float_remainder() {
    fn p(x: f64, n: u64, k: u8) -> TestResult {
        let same_float = |u: f64, v: f64| u.to_bits() == v.to_bits() || (u.is_nan() && v.is_nan());
        let y = n as f64 - 1e18;
        TestResult::from_bool(
            to_int(x, k) == to_int::run_jitcode(x, k)
                && same_float(to_float(n), to_float::run_jitcode(n))
                && same_float(remainder(x, y), remainder::run_jitcode(x, y)),
        )
    }
    qc().quickcheck(p as fn(f64, u64, u8) -> TestResult);
    let xs = [
        f64::NAN,
        -0.9,
        255.9,
        256.0,
        -129.0,
        4e9,
        -3e9,
        1.9e19,
        2e19,
        f64::INFINITY,
    ];
    for x in xs {
        for n in [0, 1 << 63, u64::MAX, (1 << 63) | 0x401] {
            for k in 0..8 {
                assert!(!p(x, n, k).is_failure(), "{x} {n} {k}");
            }
        }
    }
}

#[look_inside]
fn logic(a: bool, b: bool, x: i32) -> bool {
    let c = a && x > 3 || !b && x != 0;
    (c ^ a) | (b & (x < 0))
}

#[test]
fn booleans_short_circuit() {
    fn p(a: bool, b: bool, x: i32) -> TestResult {
        same(|| logic(a, b, x), || logic::run_jitcode(a, b, x))
    }
    qc().quickcheck(p as fn(bool, bool, i32) -> TestResult);
}

#[unroll_safe]
fn loops(n: u8, k: i64) -> i64 {
    let mut acc = 0i64;
    let mut i = 0;
    while i < n {
        i += 1;
        if i % 3 == 0 {
            continue;
        }
        acc = acc.wrapping_mul(31).wrapping_add(k);
        if acc > 1_000_000 {
            break;
        }
    }
    for j in 0..n / 2 {
        acc -= j as i64;
    }
    for j in 1..=3u8 {
        acc += j as i64;
    }
    let found = 'outer: loop {
        let mut m = 0;
        loop {
            m += 1;
            if m > 4 {
                break 'outer m * 10;
            }
            if m as i64 == k {
                break 'outer -1;
            }
        }
    };
    acc + found
}

#[test]
fn loops_break_continue_labels() {
    fn p(n: u8, k: i64) -> TestResult {
        same(|| loops(n, k), || loops::run_jitcode(n, k))
    }
    qc().quickcheck(p as fn(u8, i64) -> TestResult);
}

#[look_inside]
fn classify(x: i64) -> i64 {
    match x {
        0 => 100,
        1 | 2 | 3 => 200,
        -5..=-1 => 300,
        10..20 => 400,
        n if n > 1000 => n / 1000,
        _ => {
            if x < -100 {
                return -1;
            }
            x * 2
        }
    }
}

#[test]
fn match_on_integers_with_ranges_guards_and_return() {
    fn p(x: i64) -> TestResult {
        same(|| classify(x), || classify::run_jitcode(x))
    }
    qc().quickcheck(p as fn(i64) -> TestResult);
    for x in -200..1200 {
        assert_eq!(classify(x), classify::run_jitcode(x), "x = {x}");
    }
}

#[look_inside]
fn digit(c: u8) -> u32 {
    match c {
        b'0'..=b'9' => (c - b'0') as u32,
        b'a' | b'A' => 10,
        _ => 99,
    }
}

#[test]
fn match_switch_on_bytes() {
    for c in 0..=255u8 {
        assert_eq!(digit(c), digit::run_jitcode(c));
    }
}

// Standard scalar methods as built-ins (elidable calls of meta-jit's shims).
#[look_inside]
fn int_builtins(x: i64, y: i64, e: u32) -> i64 {
    let mut acc = x.min(y).wrapping_add(x.max(y));
    acc = acc.wrapping_add(x.abs_diff(y) as i64);
    acc = acc.wrapping_add(x.wrapping_abs() ^ y.wrapping_neg());
    acc = acc.wrapping_add(x.signum() + x.is_positive() as i64 - y.is_negative() as i64);
    acc = acc.wrapping_add(x.count_ones() as i64 + y.leading_zeros() as i64);
    acc = acc.wrapping_add(x.trailing_zeros() as i64 + y.count_zeros() as i64);
    acc = acc.wrapping_add(x.saturating_add(y) ^ x.saturating_sub(y) ^ x.saturating_mul(y));
    acc = acc.wrapping_add(x.wrapping_pow(e) ^ x.saturating_pow(e));
    acc = acc.wrapping_add(x.rotate_left(e) ^ y.rotate_right(e) ^ x.swap_bytes());
    if let Some(s) = x.checked_add(y) {
        acc = acc.wrapping_add(s);
    } else {
        acc = acc.wrapping_add(1);
    }
    match x.checked_mul(y) {
        Some(p) => acc = acc.wrapping_sub(p),
        None => acc = acc.wrapping_sub(2),
    }
    acc = acc.wrapping_add(or(x.checked_div(y), 3) ^ or(x.checked_rem(y), 4));
    acc = acc.wrapping_add(or(x.checked_sub(y), 5) ^ or(x.checked_pow(e), 6));
    acc.wrapping_add(or(x.checked_neg(), 7) ^ or(x.checked_abs(), 8))
}

#[look_inside]
fn or(v: Option<i64>, d: i64) -> i64 {
    match v {
        Some(x) => x,
        None => d,
    }
}

#[look_inside]
fn small_int_builtins(x: u8, y: u8, z: i16) -> i64 {
    let a = x.min(y) as i64 + x.max(y) as i64 + x.count_ones() as i64 + y.leading_zeros() as i64;
    let b = x.saturating_sub(y) as i64 + z.abs() as i64 + z.pow(2) as i64;
    let c = x.is_power_of_two() as i64
        + match x.checked_add(y) {
            Some(s) => s as i64,
            None => -1,
        };
    a * 1000 + b * 10 + c
}

#[look_inside]
fn float_builtins(x: f64, y: f64, n: i32) -> f64 {
    let mut acc = x.abs().sqrt() + x.floor() + x.ceil() + x.round() + x.trunc() + x.fract();
    acc += x.min(y) + x.max(y) + x.signum() + x.powi(n) + x.abs().powf(0.5);
    acc += x.copysign(y) + x.atan2(y) + x.hypot(y) + x.sin() + x.cos();
    acc += (x.abs() + 1.0).ln() + (x.abs() + 1.0).log2() + x.exp().min(1e300);
    if x.is_nan() || y.is_infinite() || !x.is_finite() || y.is_sign_negative() {
        acc += 1.0;
    }
    acc + f64::from_bits(x.to_bits() ^ 1)
}

#[test]
fn std_scalar_methods_are_built_ins() {
    let ints = [i64::MIN, -1000, -3, -1, 0, 1, 2, 7, 1 << 40, i64::MAX];
    for &x in &ints {
        for &y in &ints {
            for e in [0u32, 1, 3, 63, 64] {
                assert_eq!(
                    int_builtins::run_jitcode(x, y, e),
                    int_builtins(x, y, e),
                    "{x} {y} {e}"
                );
            }
        }
    }
    for x in (0..=255u8).step_by(7) {
        for y in [0u8, 1, 128, 255] {
            for z in [-181i16, -5, 0, 181] {
                assert_eq!(
                    small_int_builtins::run_jitcode(x, y, z),
                    small_int_builtins(x, y, z)
                );
            }
        }
    }
    let floats = [-2.5, -0.0, 0.0, 0.75, 3.0, 1e10, f64::NAN, f64::INFINITY];
    for &x in &floats {
        for &y in &floats {
            let (a, b) = (
                float_builtins::run_jitcode(x, y, 3),
                float_builtins(x, y, 3),
            );
            // (NaN payloads of the sums may differ with the order rustc folds them in.)
            assert!(
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan(),
                "{x} {y}: {a} {b}"
            );
        }
    }
    // They are elidable calls in the jitcode, not residual ones.
    let text = int_builtins::jitcode().to_string();
    assert!(text.contains("meta_jit::builtin_int"), "{text}");
}
