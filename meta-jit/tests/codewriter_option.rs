//! `Option`/`Result` of scalars in registers: construction, `match`, `if let`, and `?`, run in the
//! jitcode-only mode against the native functions.
// `c >= a && c <= b` exercises `&&` and comparisons on purpose.
#![allow(clippy::manual_range_contains)]

use meta_jit::hints::*;

#[look_inside]
fn checked_div(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    if a == i64::MIN && b == -1 {
        None
    } else {
        Some(a / b)
    }
}

#[look_inside]
fn div_then_add(a: i64, b: i64, c: i64) -> Option<i64> {
    let q = checked_div(a, b)?;
    let r = checked_div(q, c)?;
    Some(r.wrapping_add(1))
}

#[look_inside]
fn or_default(a: i64, b: i64) -> i64 {
    match div_then_add(a, b, 3) {
        Some(0) => -100,
        Some(v) if v > 10 => v * 2,
        Some(v) => v,
        None => 7,
    }
}

#[look_inside]
fn parse_digit(c: u8) -> Result<u8, u32> {
    if c >= b'0' && c <= b'9' {
        Ok(c - b'0')
    } else {
        Err(c as u32 + 1000)
    }
}

#[look_inside]
fn two_digits(a: u8, b: u8) -> Result<u8, u32> {
    let x = parse_digit(a)?;
    let y = parse_digit(b)?;
    Ok(x * 10 + y)
}

#[look_inside]
fn describe(a: u8, b: u8) -> i64 {
    if let Ok(v) = two_digits(a, b) {
        v as i64
    } else {
        match two_digits(a, b) {
            Err(e) => -(e as i64),
            Ok(_) => 0,
        }
    }
}

#[test]
fn option_question_mark_and_match() {
    fn p(a: i64, b: i64, c: i64) -> bool {
        div_then_add(a, b, c) == div_then_add::run_jitcode(a, b, c)
            && or_default(a, b) == or_default::run_jitcode(a, b)
    }
    meta_jit::testing::prop_runner(0x6f7074, 0, 2000).quickcheck(p as fn(i64, i64, i64) -> bool);
    for (a, b, c) in [
        (10, 0, 1),
        (10, 2, 0),
        (i64::MIN, -1, 1),
        (100, 3, 3),
        (0, 5, 5),
    ] {
        assert_eq!(div_then_add::run_jitcode(a, b, c), div_then_add(a, b, c));
    }
}

#[test]
fn result_question_mark_and_if_let() {
    for a in 0..=255u8 {
        for b in [b'0', b'7', b'x', 0, 255] {
            assert_eq!(two_digits::run_jitcode(a, b), two_digits(a, b));
            assert_eq!(describe::run_jitcode(a, b), describe(a, b));
        }
    }
}

#[test]
fn question_mark_is_an_early_return() {
    let text = div_then_add::jitcode().to_string();
    // Two `?`: two conditional exits, each returning the `None` constant (tag 0).
    assert_eq!(text.matches("return $0, ").count(), 2, "{text}");
    assert_eq!(div_then_add::run_jitcode(7, 0, 1), None);
    assert_eq!(div_then_add::run_jitcode(7, 1, 0), None);
    assert_eq!(div_then_add::run_jitcode(7, 1, 1), Some(8));
}
