//! The optimizer's tests: trace text in, expected trace text out, compared after printing both
//! (the printer renames values canonically, so the comparison is modulo renaming). Traces with
//! only integer inputs are also run, optimized and not, on a few inputs in the reference
//! interpreter, which must agree.

use super::{optimize_with_report, Options, Report};
use crate::interp::{materialize, Outcome};
use crate::ir::parse::{parse_with, Env};
use crate::ir::print::print;
use crate::ir::{Trace, Type, Value};

/// Descriptors shared by every test.
const HEADER: &str = "
descr x = field(offset=0, size=8, kind=i, signed)
descr y = field(offset=8, size=8, kind=i, signed)
descr fl = field(offset=16, size=8, kind=f)
descr next = field(offset=24, size=8, kind=p)
descr imm = field(offset=32, size=8, kind=i, signed, immutable)
descr qi = field(offset=40, size=8, kind=i, signed, quasi_immutable)
descr S = size(size=48, align=8)
descr ints = array(base=0, item=8, kind=i, signed)
descr bytes = array(base=0, item=1, kind=i)
descr lower = call(args=i, ret=i, reads=none, writes=none, elidable)
descr neg = call(args=i, ret=i, reads=none, writes=none, elidable)
descr escape = call(args=i, ret=n, reads=*, writes=*, can_invalidate)
descr escape_p = call(args=p, ret=n, reads=*, writes=*)
descr writes_x = call(args=p, ret=n, reads=*, writes=[x])
descr reads_only = call(args=p, ret=i, reads=*, writes=none)
";

extern "C" fn lower(x: i64) -> i64 {
    x & !0x2020_2020_2020_2020
}
extern "C" fn neg(x: i64) -> i64 {
    x.wrapping_neg()
}
extern "C" fn escape(_: i64) {}
extern "C" fn escape_p(_: usize) {}
extern "C" fn writes_x(p: *mut i64) {
    // SAFETY: only called by tests on objects of the S layout.
    unsafe { *p += 1 }
}
extern "C" fn reads_only(p: *const i64) -> i64 {
    // SAFETY: only called by tests on objects of the S layout.
    unsafe { *p }
}

fn env() -> Env {
    Env::new()
        .func("lower", lower as *const () as usize)
        .func("neg", neg as *const () as usize)
        .func("escape", escape as *const () as usize)
        .func("escape_p", escape_p as *const () as usize)
        .func("writes_x", writes_x as *const () as usize)
        .func("reads_only", reads_only as *const () as usize)
}

fn check_with(opts: &Options, input: &str, expected: &str) -> Report {
    check_opts(opts, input, expected, true)
}

/// Checks the shape only: for traces whose hints are not true on every input.
fn check_shape(input: &str, expected: &str) -> Report {
    check_opts(&Options::all(), input, expected, false)
}

fn check_opts(opts: &Options, input: &str, expected: &str, run_both: bool) -> Report {
    let env = env();
    let t = parse_with(&format!("{HEADER}{input}"), &env).unwrap_or_else(|e| panic!("input: {e}"));
    let want = parse_with(&format!("{HEADER}{expected}"), &env)
        .unwrap_or_else(|e| panic!("expected: {e}"));
    let (got, report) = optimize_with_report(&t, opts);
    assert_eq!(print(&got), print(&want), "\ninput:\n{input}\n");
    if run_both && t.inputs().all(|r| t.type_of(r) == Type::Int) {
        // A peeled loop runs one iteration fewer (its preamble is the first), names its body's
        // guards by their preamble copies and passes only the changing inputs.
        let (got, extra, carried) = match &report.peeled {
            Some(p) => (
                crate::testing::ids_as_loop(&got, p.first_copy_id, p.id_offset),
                1,
                Some(p.carried.clone()),
            ),
            None => (got, 0, None),
        };
        // The optimized loop's own carried values come first in its `jump`; after them come
        // the locations of memory the heap stage carries.
        let own: Option<Vec<usize>> = match (&carried, t.label()) {
            (Some(c), _) => Some((0..c.len()).collect()),
            (None, Some(l)) => Some((0..t.ops[l].args.len()).collect()),
            (None, None) => None,
        };
        let samples = [0i64, 1, -1, 2, 7, 42, i64::MIN, i64::MAX, 0x6161];
        for k in 0..samples.len() {
            let inputs: Vec<Value> = (0..t.num_inputs())
                .map(|j| Value::Int(samples[(k + j) % samples.len()]))
                .collect();
            assert_eq!(
                observe(&t, &inputs, 1000 + extra, carried.as_deref()),
                observe(&got, &inputs, 1000, own.as_deref()),
                "inputs {inputs:?}"
            );
        }
    }
    report
}

/// How a run ended, comparable across optimization: a failed guard by its id and the frame
/// values it rebuilds (references blanked: their addresses differ between runs).
/// `iterations` is the run's limit; `carried`, which of the last `jump`'s values to show (a
/// peeled loop passes only the values that change, and the heap stage may add more).
fn observe(t: &Trace, inputs: &[Value], iterations: usize, carried: Option<&[usize]>) -> String {
    let blank = |v: Value| {
        if v.ty() == Type::Ref {
            Value::Ref(0)
        } else {
            v
        }
    };
    let r = crate::interp::Run {
        max_iterations: iterations,
        ..crate::interp::Run::default()
    };
    match r.run(t, inputs).unwrap() {
        Outcome::Iterations(vals) => {
            let vals: Vec<Value> = match carried {
                Some(c) => c.iter().map(|&k| vals[k]).collect(),
                None => vals,
            };
            format!("loop {:?}", vals.into_iter().map(blank).collect::<Vec<_>>())
        }
        Outcome::GuardFailed { id, op, saved } => {
            let r = t.ops[op].resume.as_ref().unwrap();
            let vals: Vec<Value> = materialize(t, r, &saved).into_iter().map(blank).collect();
            format!("guard {id} {vals:?}")
        }
        Outcome::Finish(vals) => {
            format!("end {:?}", vals.into_iter().map(blank).collect::<Vec<_>>())
        }
        other => format!("{other:?}"),
    }
}

fn check(input: &str, expected: &str) -> Report {
    check_with(&Options::all(), input, expected)
}

// ---- fold ----------------------------------------------------------------------------------

#[test]
fn fold_constants() {
    check(
        "[]\ni0 = int_add(3, 4)\ni1 = int_mul(i0, 6)\nfinish(i1)",
        "[]\nfinish(42)",
    );
}

#[test]
fn fold_add_zero_and_mul_one() {
    check(
        "[i0]\ni1 = int_add(i0, 0)\ni2 = int_mul(i1, 1)\ni3 = int_add(0, i2)\nfinish(i3)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn fold_sub_self_and_xor_self() {
    check(
        "[i0]\ni1 = int_sub(i0, i0)\ni2 = int_xor(i0, i0)\ni3 = int_or(i1, i2)\nfinish(i3)",
        "[i0]\nfinish(0)",
    );
}

#[test]
fn fold_comparisons_of_equal_values() {
    check(
        "[i0]\ni1 = int_eq(i0, i0)\ni2 = int_lt(i0, i0)\ni3 = uint_ge(i0, i0)\nfinish(i1, i2, i3)",
        "[i0]\nfinish(1, 0, 1)",
    );
}

#[test]
fn fold_float_comparison_of_itself_is_kept() {
    // NaN != NaN: a float compared with itself is not known.
    check(
        "[f0]\ni1 = float_eq(f0, f0)\nfinish(i1)",
        "[f0]\ni1 = float_eq(f0, f0)\nfinish(i1)",
    );
}

#[test]
fn fold_constant_additions_combine() {
    check(
        "[i0]\ni1 = int_add(i0, 1)\ni2 = int_add(i1, 2)\ni3 = int_sub(i2, 5)\nfinish(i3)",
        "[i0]\ni1 = int_add(i0, -2)\nfinish(i1)",
    );
}

#[test]
fn fold_constants_move_out_of_sums_and_shifts() {
    // p + ((i + 16) << 4) and p + ((i + 17) << 4): one base, `p + (i << 4)`, two displacements.
    check(
        "[i0, i1]\ni2 = int_add(i1, 16)\ni3 = int_lshift(i2, 4)\ni4 = int_add(i0, i3)\ni5 = int_add(i1, 17)\ni6 = int_mul(i5, 16)\ni7 = int_add(i6, i0)\nfinish(i4, i7)",
        "[i0, i1]\ni2 = int_lshift(i1, 4)\ni3 = int_add(i0, i2)\ni4 = int_add(i3, 256)\ni5 = int_add(i3, 272)\nfinish(i4, i5)",
    );
    // A sum whose inner part is used too keeps it: the rewrite adds an op, never a wrong one.
    check(
        "[i0, i1]\ni2 = int_add(i1, 3)\ni3 = int_add(i0, i2)\nfinish(i2, i3)",
        "[i0, i1]\ni2 = int_add(i1, 3)\ni3 = int_add(i0, i1)\ni4 = int_add(i3, 3)\nfinish(i2, i4)",
    );
}

#[test]
fn fold_sub_constant_becomes_add() {
    check(
        "[i0]\ni1 = int_sub(i0, 3)\nfinish(i1)",
        "[i0]\ni1 = int_add(i0, -3)\nfinish(i1)",
    );
}

#[test]
fn fold_constants_move_right() {
    check(
        "[i0]\ni1 = int_add(5, i0)\ni2 = int_lt(3, i1)\nfinish(i2)",
        "[i0]\ni1 = int_add(i0, 5)\ni2 = int_gt(i1, 3)\nfinish(i2)",
    );
}

#[test]
fn fold_double_negation_and_inversion() {
    check(
        "[i0, f1]\ni2 = int_neg(i0)\ni3 = int_neg(i2)\ni4 = int_invert(i3)\ni5 = int_invert(i4)\nf6 = float_neg(f1)\nf7 = float_neg(f6)\nfinish(i5, f7)",
        "[i0, f1]\nfinish(i0, f1)",
    );
}

#[test]
fn fold_mul_by_power_of_two_is_shift() {
    check(
        "[i0]\ni1 = int_mul(i0, 8)\nfinish(i1)",
        "[i0]\ni1 = int_lshift(i0, 3)\nfinish(i1)",
    );
}

#[test]
fn fold_shift_by_multiple_of_64() {
    check(
        "[i0]\ni1 = int_lshift(i0, 64)\ni2 = int_rshift(i1, 0)\nfinish(i2)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn fold_shift_semantics_of_constants() {
    check(
        "[]\ni0 = int_lshift(1, 65)\ni1 = uint_rshift(-1, 127)\nfinish(i0, i1)",
        "[]\nfinish(2, 1)",
    );
}

#[test]
fn fold_division_by_zero_is_zero() {
    check(
        "[]\ni0 = int_floordiv(7, 0)\ni1 = int_mod(7, 0)\ni2 = int_floordiv(-9223372036854775808, -1)\nfinish(i0, i1, i2)",
        "[]\nfinish(0, 0, -9223372036854775808)",
    );
}

#[test]
fn fold_float_constants() {
    check(
        "[]\nf0 = float_add(1.5, 2.25)\ni1 = cast_float_to_int(1e300)\nf2 = float_neg(0.0)\nfinish(f0, i1, f2)",
        "[]\nfinish(3.75, 9223372036854775807, -0.0)",
    );
}

#[test]
fn fold_is_true_of_boolean() {
    check(
        "[i0, i1]\ni2 = int_lt(i0, i1)\ni3 = int_is_true(i2)\nfinish(i3)",
        "[i0, i1]\ni2 = int_lt(i0, i1)\nfinish(i2)",
    );
}

#[test]
fn fold_is_true_of_non_boolean_is_kept() {
    check(
        "[i0]\ni1 = int_is_true(i0)\nfinish(i1)",
        "[i0]\ni1 = int_is_true(i0)\nfinish(i1)",
    );
}

#[test]
fn fold_same_as_and_round_trip_casts() {
    check(
        "[i0, f1]\ni2 = same_as_i(i0)\nf3 = float_from_bits(i2)\ni4 = float_to_bits(f3)\ni5 = float_to_bits(f1)\nf6 = float_from_bits(i5)\nfinish(i4, f6)",
        "[i0, f1]\nfinish(i0, f1)",
    );
}

#[test]
fn fold_signext_twice() {
    check(
        "[i0]\ni1 = int_signext(i0, 1)\ni2 = int_signext(i1, 1)\ni3 = int_signext(i2, 8)\nfinish(i3)",
        "[i0]\ni1 = int_signext(i0, 1)\nfinish(i1)",
    );
}

#[test]
fn fold_elidable_call_of_constants() {
    check(
        "[]\ni0 = call_pure_i(ConstFn(neg), 5, descr=neg)\nfinish(i0)",
        "[]\nfinish(-5)",
    );
}

#[test]
fn fold_overflow_checked_constants() {
    check(
        "[]\ni0 = int_add_ovf(40, 2)\nguard_no_overflow() []\nfinish(i0)",
        "[]\nfinish(42)",
    );
}

#[test]
fn fold_overflow_that_must_happen_keeps_a_failing_guard() {
    let r = check(
        "[]\ni0 = int_add_ovf(9223372036854775807, 1)\nguard_no_overflow() [i0]\nfinish(i0)",
        "[]\nguard_true(0) [-9223372036854775808]\nfinish(-9223372036854775808)",
    );
    assert_eq!(r.failing_guards, vec![0]);
}

#[test]
fn fold_overflow_add_zero() {
    check(
        "[i0]\ni1 = int_add_ovf(i0, 0)\nguard_no_overflow() []\nfinish(i1)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn fold_overflow_kept_when_unknown() {
    let t = "[i0]\ni1 = int_mul_ovf(i0, 3)\nguard_no_overflow() [i0]\nfinish(i1)";
    check(t, t);
}

#[test]
fn fold_immutable_field_of_constant_object() {
    let obj: &'static mut [i64; 6] = Box::leak(Box::new([0, 0, 0, 0, 77, 5]));
    let addr = obj.as_ptr() as usize;
    check(
        &format!("[]\ni0 = getfield_i(ConstPtr({addr:#x}), descr=imm)\ni1 = getfield_i(ConstPtr({addr:#x}), descr=x)\nfinish(i0, i1)"),
        &format!("[]\ni1 = getfield_i(ConstPtr({addr:#x}), descr=x)\nfinish(77, i1)"),
    );
}

#[test]
fn fold_quasi_immutable_field_is_recorded() {
    let obj: &'static mut [i64; 6] = Box::leak(Box::new([0, 0, 0, 0, 0, 9]));
    let addr = obj.as_ptr() as usize;
    let r = check(
        &format!("[]\nquasiimmut_field(ConstPtr({addr:#x}), descr=qi)\nguard_not_invalidated() []\ni0 = getfield_i(ConstPtr({addr:#x}), descr=qi)\nfinish(i0)"),
        "[]\nguard_not_invalidated() []\nfinish(9)",
    );
    assert_eq!(r.quasi_immutable, vec![(addr, "qi".to_string())]);
}

// ---- pure (CSE) ----------------------------------------------------------------------------

#[test]
fn cse_pure_ops() {
    check(
        "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_add(i0, i1)\ni4 = int_mul(i2, i3)\nfinish(i4)",
        "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_mul(i2, i2)\nfinish(i3)",
    );
}

#[test]
fn cse_commutative_after_canonical_order() {
    check(
        "[i0]\ni1 = int_add(i0, 7)\ni2 = int_add(7, i0)\nfinish(i1, i2)",
        "[i0]\ni1 = int_add(i0, 7)\nfinish(i1, i1)",
    );
}

#[test]
fn cse_sees_through_replacements() {
    check(
        "[i0]\ni1 = int_add(i0, 0)\ni2 = int_mul(i0, 3)\ni3 = int_mul(i1, 3)\nfinish(i2, i3)",
        "[i0]\ni1 = int_mul(i0, 3)\nfinish(i1, i1)",
    );
}

#[test]
fn cse_elidable_calls() {
    check(
        "[i0]\ni1 = call_pure_i(ConstFn(lower), i0, descr=lower)\ni2 = call_pure_i(ConstFn(lower), i0, descr=lower)\nfinish(i1, i2)",
        "[i0]\ni1 = call_pure_i(ConstFn(lower), i0, descr=lower)\nfinish(i1, i1)",
    );
}

#[test]
fn cse_unused_elidable_call_dies() {
    check(
        "[i0]\ni1 = call_pure_i(ConstFn(lower), i0, descr=lower)\nfinish(i0)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn cse_does_not_merge_residual_calls() {
    let t = "[p0]\ni1 = call_i(ConstFn(reads_only), p0, descr=reads_only)\ni2 = call_i(ConstFn(reads_only), p0, descr=reads_only)\nfinish(i1, i2)";
    check(t, t);
}

#[test]
fn cse_different_args_kept() {
    let t = "[i0, i1]\ni2 = int_add(i0, 1)\ni3 = int_add(i1, 1)\nfinish(i2, i3)";
    check(t, t);
}

/// The idempotent `lower` of the record_known_result post: `lower(lower(x))` keeps one call,
/// with other operations in between.
#[test]
fn known_result_idempotent_lower() {
    check(
        "[i0, i9]
        i1 = call_pure_i(ConstFn(lower), i0, descr=lower)
        record_known_result(i1, ConstFn(lower), i1, descr=lower)
        i5 = int_add(i9, 1)
        i6 = int_mul(i5, i5)
        guard_true(i6) [i1]
        i2 = call_pure_i(ConstFn(lower), i1, descr=lower)
        record_known_result(i2, ConstFn(lower), i2, descr=lower)
        finish(i1, i2, i6)",
        "[i0, i9]
        i1 = call_pure_i(ConstFn(lower), i0, descr=lower)
        i5 = int_add(i9, 1)
        i6 = int_mul(i5, i5)
        guard_true(i6) [i1]
        finish(i1, i1, i6)",
    );
}

/// The self-inverse `neg` of the post: `neg(neg(x))` becomes `x`, and the first call then dies.
#[test]
fn known_result_self_inverse_neg() {
    check(
        "[i0, i9]
        i1 = call_pure_i(ConstFn(neg), i0, descr=neg)
        record_known_result(i0, ConstFn(neg), i1, descr=neg)
        i5 = int_add(i9, 3)
        call_n(ConstFn(escape), i5, descr=escape)
        i2 = call_pure_i(ConstFn(neg), i1, descr=neg)
        record_known_result(i1, ConstFn(neg), i2, descr=neg)
        finish(i2)",
        "[i0, i9]
        i5 = int_add(i9, 3)
        call_n(ConstFn(escape), i5, descr=escape)
        finish(i0)",
    );
}

#[test]
fn known_result_ignored_when_pure_is_off() {
    let opts = Options {
        pure: false,
        ..Options::all()
    };
    check_with(
        &opts,
        "[i0]\ni1 = call_pure_i(ConstFn(neg), i0, descr=neg)\nrecord_known_result(i0, ConstFn(neg), i1, descr=neg)\ni2 = call_pure_i(ConstFn(neg), i1, descr=neg)\nfinish(i2)",
        "[i0]\ni1 = call_pure_i(ConstFn(neg), i0, descr=neg)\nrecord_known_result(i0, ConstFn(neg), i1, descr=neg)\ni2 = call_pure_i(ConstFn(neg), i1, descr=neg)\nfinish(i2)",
    );
}

#[test]
fn known_result_before_any_call() {
    check_shape(
        "[i0, i1]\nrecord_known_result(i1, ConstFn(lower), i0, descr=lower)\ni2 = call_pure_i(ConstFn(lower), i0, descr=lower)\nfinish(i2)",
        "[i0, i1]\nfinish(i1)",
    );
}

// ---- exact values --------------------------------------------------------------------------

#[test]
fn exact_value_becomes_constant_without_guard() {
    check_shape(
        "[i0]\nrecord_exact_value(i0, 5)\ni1 = int_add(i0, 1)\nfinish(i1)",
        "[i0]\nfinish(6)",
    );
}

#[test]
fn exact_value_of_a_ref_folds_immutable_loads() {
    let obj: &'static mut [i64; 6] = Box::leak(Box::new([0, 0, 0, 0, 31, 0]));
    let addr = obj.as_ptr() as usize;
    check(
        &format!("[p0]\nrecord_exact_value(p0, ConstPtr({addr:#x}))\ni1 = getfield_i(p0, descr=imm)\nfinish(i1)"),
        "[p0]\nfinish(31)",
    );
}

#[test]
fn exact_value_off_keeps_op() {
    let opts = Options {
        exact: false,
        ..Options::all()
    };
    let t = "[i0]\nrecord_exact_value(i0, 5)\ni1 = int_add(i0, 1)\nfinish(i1)";
    check_with(&opts, t, t);
}

// ---- guards --------------------------------------------------------------------------------

#[test]
fn guard_twice_is_once() {
    check(
        "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) [i0]\ni2 = int_lt(i0, 10)\nguard_true(i2) [i0]\nfinish(i2)",
        "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) [i0]\nfinish(1)",
    );
}

#[test]
fn guard_on_constant_goes() {
    check(
        "[i0]\nguard_true(1) [i0]\nguard_false(0) [i0]\nfinish(i0)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn guard_that_must_fail_is_reported() {
    let r = check(
        "[i0]\nguard_value(3, 4) [i0]\nfinish(i0)",
        "[i0]\nguard_value(3, 4) [i0]\nfinish(i0)",
    );
    assert_eq!(r.failing_guards, vec![0]);
}

#[test]
fn guard_value_makes_a_constant() {
    check(
        "[i0]\nguard_value(i0, 7) [i0]\ni1 = int_mul(i0, 6)\nguard_value(i0, 7) [i0]\nfinish(i1)",
        "[i0]\nguard_value(i0, 7) [i0]\nfinish(42)",
    );
}

#[test]
fn guard_value_on_boolean_is_strengthened() {
    check(
        "[i0, i1]\ni2 = int_lt(i0, i1)\nguard_value(i2, 1) [i0]\ni3 = int_eq(i0, i1)\nguard_value(i3, 0) [i1]\nfinish()",
        "[i0, i1]\ni2 = int_lt(i0, i1)\nguard_true(i2) [i0]\ni3 = int_eq(i0, i1)\nguard_false(i3) [i1]\nfinish()",
    );
}

#[test]
fn guard_value_on_boolean_with_other_constant_fails() {
    let r = check(
        "[i0]\ni1 = int_is_zero(i0)\nguard_value(i1, 2) []\nfinish()",
        "[i0]\ni1 = int_is_zero(i0)\nguard_value(i1, 2) []\nfinish()",
    );
    assert_eq!(r.failing_guards, vec![0]);
}

#[test]
fn guard_on_is_true_tests_operand() {
    check(
        "[i0]\ni1 = int_is_true(i0)\nguard_true(i1) []\ni2 = int_is_zero(i0)\nguard_false(i2) []\nfinish()",
        "[i0]\nguard_true(i0) []\nfinish()",
    );
}

#[test]
fn guard_on_a_negated_boolean_tests_the_boolean() {
    // `!(a < b)` as Rust lowers it (`== 0`, `^ 1`, `!x & 1`): the guard tests the comparison,
    // flipped, which the backend fuses into its jump.
    for not in ["int_eq(i2, 0)", "int_xor(i2, 1)"] {
        check(
            &format!("[f0, f1]\ni2 = float_lt(f0, f1)\ni3 = {not}\nguard_true(i3) []\nfinish()"),
            "[f0, f1]\ni2 = float_lt(f0, f1)\nguard_false(i2) []\nfinish()",
        );
    }
    check(
        "[p0]\ni1 = ptr_ne(p0, ConstPtr(0))\ni2 = int_invert(i1)\ni3 = int_and(i2, 1)\nguard_false(i3) []\nfinish()",
        "[p0]\ni1 = ptr_ne(p0, ConstPtr(0))\nguard_true(i1) []\nfinish()",
    );
    check(
        "[f0]\ni1 = float_lt(4.0, f0)\ni2 = int_eq(i1, 0)\nguard_true(i2) [i2]\nfinish()",
        "[f0]\ni1 = float_lt(4.0, f0)\nguard_false(i1) [0]\nfinish()",
    );
    // Not on a value that may be other than 0 or 1: `x ^ 1` is then no negation.
    let t = "[i0]\ni1 = int_xor(i0, 1)\nguard_true(i1) []\nfinish()";
    check(t, t);
}

#[test]
fn guard_false_makes_zero() {
    check(
        "[i0]\nguard_false(i0) [i0]\ni1 = int_add(i0, 5)\nfinish(i1)",
        "[i0]\nguard_false(i0) [i0]\nfinish(5)",
    );
}

#[test]
fn guard_true_on_non_boolean_does_not_make_one() {
    check(
        "[i0]\nguard_true(i0) []\ni1 = int_add(i0, 1)\nguard_true(i0) []\nfinish(i1)",
        "[i0]\nguard_true(i0) []\ni1 = int_add(i0, 1)\nfinish(i1)",
    );
}

#[test]
fn guard_nonnull_twice_and_isnull_after() {
    let r = check(
        "[p0]\nguard_nonnull(p0) []\nguard_nonnull(p0) []\nguard_isnull(p0) []\nfinish()",
        "[p0]\nguard_nonnull(p0) []\nguard_isnull(p0) []\nfinish()",
    );
    assert_eq!(r.failing_guards, vec![2]);
}

#[test]
fn guard_isnull_makes_null() {
    check(
        "[p0]\nguard_isnull(p0) []\ni1 = ptr_eq(p0, ConstPtr(0x0))\nfinish(i1)",
        "[p0]\nguard_isnull(p0) []\nfinish(1)",
    );
}

#[test]
fn guard_not_invalidated_once_until_a_call_may_invalidate() {
    check(
        "[i0]\nguard_not_invalidated() []\nguard_not_invalidated() []\ncall_n(ConstFn(escape), i0, descr=escape)\nguard_not_invalidated() []\nfinish()",
        "[i0]\nguard_not_invalidated() []\ncall_n(ConstFn(escape), i0, descr=escape)\nguard_not_invalidated() []\nfinish()",
    );
}

#[test]
fn guards_off_keeps_them() {
    let opts = Options {
        guards: false,
        ..Options::all()
    };
    let t = "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) [i0]\nguard_true(i1) [i0]\nfinish()";
    check_with(&opts, t, t);
}

#[test]
fn guard_resume_data_is_mapped() {
    check(
        "[i0, i1, i4]\ni2 = int_add(i0, 0)\ni3 = int_mul(i1, 1)\nguard_true(i4) [3@4: i2, i3, 9]\nfinish()",
        "[i0, i1, i4]\nguard_true(i4) [3@4: i0, i1, 9]\nfinish()",
    );
}

#[test]
fn guard_condition_in_its_own_resume_data_is_known() {
    check(
        "[i0, i1, p2]\ni3 = int_lt(i0, i1)\nguard_true(i3) [i3, i0]\ni4 = int_eq(i0, 5)\nguard_false(i4) [i4]\nguard_false(i1) [i1]\nguard_nonnull(p2) [p2]\nfinish()",
        "[i0, i1, p2]\ni3 = int_lt(i0, i1)\nguard_true(i3) [0, i0]\ni4 = int_eq(i0, 5)\nguard_false(i4) [1]\nguard_false(i1) [i1]\nguard_nonnull(p2) [ConstPtr(0x0)]\nfinish()",
    );
}

#[test]
fn bounds_a_checked_offset_covers_smaller_ones() {
    // After x >= 0, n >= 0 and x + 4 <u n: x + 5 >= 0 and x + 2 <u n are known; x + 6 <u n
    // is not.
    check(
        "[i0, i1]\ni2 = int_lt(i1, 0)\nguard_false(i2) []\ni3 = int_lt(i0, 0)\nguard_false(i3) []\ni4 = int_add(i0, 4)\ni5 = uint_lt(i4, i1)\nguard_true(i5) []\ni6 = int_add(i0, 5)\ni7 = int_lt(i6, 0)\nguard_false(i7) []\ni8 = int_add(i0, 2)\ni9 = uint_ge(i8, i1)\nguard_false(i9) []\ni10 = int_add(i0, 6)\ni11 = uint_lt(i10, i1)\nguard_true(i11) []\nfinish()",
        "[i0, i1]\ni2 = int_lt(i1, 0)\nguard_false(i2) []\ni3 = int_lt(i0, 0)\nguard_false(i3) []\ni4 = int_add(i0, 4)\ni5 = uint_lt(i4, i1)\nguard_true(i5) []\ni6 = int_add(i0, 6)\ni7 = uint_lt(i6, i1)\nguard_true(i7) []\nfinish()",
    );
}

#[test]
fn bounds_an_index_below_a_length_and_its_offsets_are_not_negative() {
    // A `length` field lies in [0, 2^57]: after x <u len, 0 <= x < 2^57, so neither x nor
    // x + 36 can be negative (the sign checks go) and x + 36 does not wrap; x + 36 <u len is
    // still checked. The same trace with a plain 8-byte field keeps both sign checks.
    let body = "i2 = getfield_i(p1, descr=DESCR)\ni3 = uint_lt(i0, i2)\nguard_true(i3) []\ni4 = int_add(i0, 36)\ni5 = int_lt(i4, 0)\nguard_false(i5) []\ni6 = uint_ge(i4, i2)\nguard_false(i6) []\ni7 = int_lt(i0, 0)\nguard_false(i7) []\nfinish(i4)";
    let len = "descr len = field(offset=48, size=8, kind=i, length)\n[i0, p1]\n";
    check(
        &format!("{len}{}", body.replace("DESCR", "len")),
        &format!("{len}i2 = getfield_i(p1, descr=len)\ni3 = uint_lt(i0, i2)\nguard_true(i3) []\ni4 = int_add(i0, 36)\ni5 = uint_ge(i4, i2)\nguard_false(i5) []\nfinish(i4)"),
    );
    let plain = format!("[i0, p1]\n{}", body.replace("DESCR", "y"));
    check(&plain, &plain);
}

#[test]
fn bounds_a_smaller_offset_that_may_be_negative_is_not_covered() {
    // x may be -3: then x + 4 <u n holds but x + 2 is -1, far above n as unsigned.
    let t = "[i0, i1]\ni2 = int_lt(i1, 0)\nguard_false(i2) []\ni3 = int_add(i0, 4)\ni4 = int_lt(i3, 0)\nguard_false(i4) []\ni5 = uint_lt(i3, i1)\nguard_true(i5) []\ni6 = int_add(i0, 2)\ni7 = uint_lt(i6, i1)\nguard_true(i7) []\nfinish()";
    check(t, t);
}

#[test]
fn bounds_ranges_of_masks_and_narrow_loads() {
    check(
        "[i0, p1]\ni2 = int_and(i0, 255)\ni3 = int_lt(i2, 256)\ni4 = getarrayitem_i(p1, 0, descr=bytes)\ni5 = int_ge(i4, 0)\ni6 = int_eq(i4, 300)\nfinish(i3, i5, i6)",
        "[i0, p1]\nfinish(1, 1, 0)",
    );
}

#[test]
fn bounds_a_register_window_index_needs_no_check() {
    // The index of a register window (depth % 64) * 4 + 3 is below 256 whatever the depth.
    check(
        "[i0]\ni1 = uint_mod(i0, 64)\ni2 = int_lshift(i1, 2)\ni3 = int_add(i2, 3)\ni4 = uint_lt(i3, 256)\nguard_true(i4) []\nfinish(i3)",
        "[i0]\ni1 = int_and(i0, 63)\ni2 = int_lshift(i1, 2)\ni3 = int_add(i2, 3)\nfinish(i3)",
    );
}

#[test]
fn fold_unsigned_division_by_a_power_of_two() {
    // x %u 2^k is x & (2^k - 1), x /u 2^k is x >>u k (2^63 included); other divisors stay.
    check(
        "[i0]\ni1 = uint_mod(i0, 64)\ni2 = uint_floordiv(i0, 8)\ni3 = uint_mod(i0, -9223372036854775808)\ni4 = uint_floordiv(i0, -9223372036854775808)\ni5 = uint_mod(i0, 6)\ni6 = uint_floordiv(i0, 1)\nfinish(i1, i2, i3, i4, i5, i6)",
        "[i0]\ni1 = int_and(i0, 63)\ni2 = uint_rshift(i0, 3)\ni3 = int_and(i0, 9223372036854775807)\ni4 = uint_rshift(i0, 63)\ni5 = uint_mod(i0, 6)\nfinish(i1, i2, i3, i4, i5, i0)",
    );
}

#[test]
fn bounds_of_remainders_shifts_and_products() {
    // A signed remainder by 64 lies in [-63, 63]; of a dividend in [0, 9], in [0, 9]; an
    // unsigned right shift by 60 is in [0, 15]; a product of [0, 9] and [-3, 4] in [-27, 36];
    // an arithmetic right shift of [-8, 6] by 2 in [-2, 1].
    check(
        "[i0, i1]\ni2 = int_mod(i0, 64)\ni3 = int_lt(i2, 64)\ni4 = int_gt(i2, -64)\ni5 = int_lt(i1, 0)\nguard_false(i5) []\ni6 = int_lt(i1, 10)\nguard_true(i6) []\ni7 = int_mod(i1, i0)\ni8 = int_le(i7, 9)\ni9 = int_ge(i7, 0)\ni10 = uint_rshift(i0, 60)\ni11 = int_lt(i10, 16)\ni12 = int_and(i0, 7)\ni13 = int_sub(i12, 3)\ni14 = int_mul(i1, i13)\ni15 = int_le(i14, 36)\ni16 = int_ge(i14, -27)\ni17 = int_sub(i12, 8)\ni18 = int_add(i17, i12)\ni19 = int_rshift(i18, 2)\ni20 = int_ge(i19, -2)\nfinish(i3, i4, i8, i9, i11, i15, i16, i20)",
        "[i0, i1]\ni2 = int_lt(i1, 0)\nguard_false(i2) []\ni3 = int_lt(i1, 10)\nguard_true(i3) []\nfinish(1, 1, 1, 1, 1, 1, 1, 1)",
    );
}

#[test]
fn bounds_know_nothing_of_a_shift_that_may_overflow_or_a_remainder_of_a_negative() {
    // x >>u 1 may be up to 2^63 - 1: shifted left by 2 it may wrap to a negative. A signed
    // remainder by 64 may be negative, so it is not below 64 as unsigned.
    let t = "[i0]\ni1 = uint_rshift(i0, 1)\ni2 = int_lshift(i1, 2)\ni3 = int_lt(i2, 0)\nguard_false(i3) []\ni4 = int_mod(i0, 64)\ni5 = uint_lt(i4, 64)\nguard_true(i5) []\nfinish()";
    check(t, t);
}

#[test]
fn bounds_an_unchecked_offset_is_not_known() {
    // x + 4 <u n says nothing of x + 4 when x + 4 may have wrapped (x unknown).
    let t = "[i0, i1]\ni2 = int_add(i0, 4)\ni3 = uint_lt(i2, i1)\nguard_true(i3) []\ni4 = int_add(i0, 2)\ni5 = uint_lt(i4, i1)\nguard_true(i5) []\nfinish()";
    check(t, t);
}

#[test]
fn bounds_know_nothing_of_a_sum_that_overflowed() {
    // After guard_overflow, i2 is the wrapped difference: it may well be >= 0.
    let t = "[i0]\ni1 = int_lt(i0, 0)\nguard_true(i1) []\ni2 = int_sub_ovf(i0, 9223372036854775807)\nguard_overflow() []\ni3 = int_lt(i2, 0)\nguard_false(i3) []\nfinish()";
    check(t, t);
}

#[test]
fn bounds_make_an_add_that_cannot_overflow_plain() {
    check(
        "[i0]\ni1 = int_lt(i0, 0)\nguard_false(i1) []\ni2 = int_lt(i0, 1000)\nguard_true(i2) []\ni3 = int_add_ovf(i0, 5)\nguard_no_overflow() []\nfinish(i3)",
        "[i0]\ni1 = int_lt(i0, 0)\nguard_false(i1) []\ni2 = int_lt(i0, 1000)\nguard_true(i2) []\ni3 = int_add(i0, 5)\nfinish(i3)",
    );
}

#[test]
fn fold_and_of_and() {
    check(
        "[i0]\ni1 = int_and(i0, 255)\ni2 = int_and(i1, 255)\ni3 = int_and(i1, 15)\nfinish(i2, i3)",
        "[i0]\ni1 = int_and(i0, 255)\ni2 = int_and(i0, 15)\nfinish(i1, i2)",
    );
}

#[test]
fn comparison_decided_by_a_guard_on_its_negation() {
    check(
        "[i0, i1]\ni2 = uint_ge(i0, i1)\nguard_false(i2) []\ni3 = uint_lt(i0, i1)\nguard_true(i3) []\ni4 = int_lt(i0, i1)\nfinish(i4)",
        "[i0, i1]\ni2 = uint_ge(i0, i1)\nguard_false(i2) []\ni3 = int_lt(i0, i1)\nfinish(i3)",
    );
}

// ---- heap ----------------------------------------------------------------------------------

#[test]
fn heap_load_after_load() {
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=x)\nfinish(i1, i2)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\nfinish(i1, i1)",
    );
}

#[test]
fn heap_load_after_store() {
    check(
        "[p0, i1]\nsetfield(p0, i1, descr=x)\ni2 = getfield_i(p0, descr=x)\nfinish(i2)",
        "[p0, i1]\nsetfield(p0, i1, descr=x)\nfinish(i1)",
    );
}

#[test]
fn heap_redundant_store_goes() {
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\nsetfield(p0, i1, descr=x)\nsetfield(p0, 5, descr=y)\nsetfield(p0, 5, descr=y)\nfinish(i1)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\nsetfield(p0, 5, descr=y)\nfinish(i1)",
    );
}

/// Descriptors that share the alias class `i64`: two fields and the items of an array.
const ALIASED: &str = "descr ax = field(offset=0, size=8, kind=i, signed, alias=i64)
descr ay = field(offset=8, size=8, kind=i, signed, alias=i64)
descr aitems = array(base=0, item=8, kind=i, signed, alias=i64)
";

#[test]
fn heap_same_class_other_descriptor_may_alias() {
    // p1 may be an inner struct of p0 whose `ay` is p0's `ax`.
    let t = format!("{ALIASED}[p0, p1, i0]\ni1 = getfield_i(p0, descr=ax)\nsetfield(p1, i0, descr=ay)\ni2 = getfield_i(p0, descr=ax)\nfinish(i1, i2)");
    check(&t, &t);
}

#[test]
fn heap_same_class_other_offset_of_the_same_object_is_apart() {
    check(
        &format!("{ALIASED}[p0, i0]\ni1 = getfield_i(p0, descr=ax)\nsetfield(p0, i0, descr=ay)\ni2 = getfield_i(p0, descr=ax)\nfinish(i2)"),
        &format!("{ALIASED}[p0, i0]\ni1 = getfield_i(p0, descr=ax)\nsetfield(p0, i0, descr=ay)\nfinish(i1)"),
    );
}

#[test]
fn heap_other_class_is_apart() {
    check(
        &format!("{ALIASED}[p0, p1, i0]\ni1 = getfield_i(p0, descr=ax)\nsetfield(p1, i0, descr=x)\nsetarrayitem(p1, i0, i0, descr=ints)\ni2 = getfield_i(p0, descr=ax)\nfinish(i2)"),
        &format!("{ALIASED}[p0, p1, i0]\ni1 = getfield_i(p0, descr=ax)\nsetfield(p1, i0, descr=x)\nsetarrayitem(p1, i0, i0, descr=ints)\nfinish(i1)"),
    );
}

#[test]
fn heap_item_and_field_of_one_class_may_alias() {
    // A reference to an array item, read as a field at offset 0.
    let t = format!("{ALIASED}[p0, p1, i0]\ni1 = getarrayitem_i(p0, 3, descr=aitems)\nsetfield(p1, i0, descr=ax)\ni2 = getarrayitem_i(p0, 3, descr=aitems)\ni3 = getfield_i(p1, descr=ax)\nsetarrayitem(p0, 3, 7, descr=aitems)\ni4 = getfield_i(p1, descr=ax)\nfinish(i1, i2, i3, i4)");
    check(
        &t,
        &format!("{ALIASED}[p0, p1, i0]\ni1 = getarrayitem_i(p0, 3, descr=aitems)\nsetfield(p1, i0, descr=ax)\ni2 = getarrayitem_i(p0, 3, descr=aitems)\nsetarrayitem(p0, 3, 7, descr=aitems)\ni4 = getfield_i(p1, descr=ax)\nfinish(i1, i2, i0, i4)"),
    );
}

/// Precise classes of the wide class `i64`: two struct fields, the items of `Vec`s, and a
/// wide field (an access through a `&mut i64` of unseen origin).
const PRECISE: &str = "descr sx = field(offset=0, size=8, kind=i, signed, alias=i64:S.x)
descr ty = field(offset=0, size=8, kind=i, signed, alias=i64:T.y)
descr vitems = array(base=0, item=8, kind=i, signed, alias=i64:Vec)
descr wide = field(offset=0, size=8, kind=i, signed, alias=i64)
";

#[test]
fn heap_precise_classes_are_apart() {
    // `S.x`, `T.y` and `Vec` items never share memory, whatever the objects.
    check(
        &format!("{PRECISE}[p0, p1, i0]\ni1 = getfield_i(p0, descr=sx)\ni2 = getarrayitem_i(p0, i0, descr=vitems)\nsetfield(p1, i0, descr=ty)\ni3 = getfield_i(p0, descr=sx)\nsetfield(p1, 7, descr=sx)\ni4 = getarrayitem_i(p0, i0, descr=vitems)\nfinish(i1, i2, i3, i4)"),
        &format!("{PRECISE}[p0, p1, i0]\ni1 = getfield_i(p0, descr=sx)\ni2 = getarrayitem_i(p0, i0, descr=vitems)\nsetfield(p1, i0, descr=ty)\nsetfield(p1, 7, descr=sx)\nfinish(i1, i2, i1, i2)"),
    );
}

#[test]
fn heap_a_wide_store_forgets_its_precise_classes() {
    // A store through a `&mut i64` may be `S.x` of p0 or an item: both load again; a field of
    // another wide class stays.
    let t = format!("{PRECISE}[p0, p1, i0]\ni1 = getfield_i(p0, descr=sx)\ni2 = getarrayitem_i(p0, i0, descr=vitems)\ni5 = getfield_i(p0, descr=x)\nsetfield(p1, 5, descr=wide)\ni3 = getfield_i(p0, descr=sx)\ni4 = getarrayitem_i(p0, i0, descr=vitems)\ni6 = getfield_i(p0, descr=x)\nfinish(i1, i2, i3, i4, i5, i6)");
    check(
        &t,
        &format!("{PRECISE}[p0, p1, i0]\ni1 = getfield_i(p0, descr=sx)\ni2 = getarrayitem_i(p0, i0, descr=vitems)\ni5 = getfield_i(p0, descr=x)\nsetfield(p1, 5, descr=wide)\ni3 = getfield_i(p0, descr=sx)\ni4 = getarrayitem_i(p0, i0, descr=vitems)\nfinish(i1, i2, i3, i4, i5, i5)"),
    );
}

#[test]
fn heap_a_precise_store_forgets_the_wide_class() {
    // p1 may point at p0's `S.x`: what was read through it loads again.
    let t = format!("{PRECISE}[p0, p1, i0]\ni1 = getfield_i(p1, descr=wide)\nsetfield(p0, i0, descr=sx)\ni2 = getfield_i(p1, descr=wide)\nfinish(i1, i2)");
    check(&t, &t);
}

#[test]
fn heap_fields_at_known_displacements_of_one_object_are_apart() {
    // Two items of an array of 24-byte structs, addressed as fields (as the tracer does).
    let t = format!("{PRECISE}[p0, i0]\ni1 = cast_ptr_to_int(p0)\ni2 = int_add(i1, 24)\np3 = cast_int_to_ptr(i2)\ni4 = getfield_i(p3, descr=sx)\nsetfield(p0, i0, descr=sx)\ni5 = getfield_i(p3, descr=sx)\ni6 = int_add(i1, 16)\np7 = cast_int_to_ptr(i6)\nsetfield(p7, i0, descr=wide)\ni8 = getfield_i(p3, descr=sx)\nfinish(i4, i5, i8)");
    let want = format!("{PRECISE}[p0, i0]\ni1 = cast_ptr_to_int(p0)\ni2 = int_add(i1, 24)\np3 = cast_int_to_ptr(i2)\ni4 = getfield_i(p3, descr=sx)\nsetfield(p0, i0, descr=sx)\ni6 = int_add(i1, 16)\np7 = cast_int_to_ptr(i6)\nsetfield(p7, i0, descr=wide)\nfinish(i4, i4, i4)");
    check(&t, &want);
    // At a displacement that overlaps (p0 + 20 and p0 + 24 share 4 bytes), it loads again.
    let t = format!("{PRECISE}[p0, i0]\ni1 = cast_ptr_to_int(p0)\ni2 = int_add(i1, 24)\np3 = cast_int_to_ptr(i2)\ni4 = getfield_i(p3, descr=sx)\ni6 = int_add(i1, 20)\np7 = cast_int_to_ptr(i6)\nsetfield(p7, i0, descr=wide)\ni8 = getfield_i(p3, descr=sx)\nfinish(i4, i8)");
    check(&t, &t);
}

#[test]
fn heap_addresses_from_one_integer_base_are_apart_at_distinct_displacements() {
    // Two 16-byte slots of a register window, `base + ((i + 2) << 4)` and `base + ((i + 3) <<
    // 4)`, where the base is no object's address in the trace: a store to one keeps what is
    // known of the other.
    let slots = "[p0, i0, i1, i2]\ni3 = cast_ptr_to_int(p0)\ni4 = int_add(i0, 2)\ni5 = int_lshift(i4, 4)\ni6 = int_add(i3, i5)\np7 = cast_int_to_ptr(i6)\ni8 = int_add(i0, 3)\ni9 = int_lshift(i8, 4)\ni10 = int_add(i3, i9)\np11 = cast_int_to_ptr(i10)\nsetfield(p7, i1, descr=sx)\nsetfield(p11, i2, descr=sx)\ni12 = getfield_i(p7, descr=sx)\n";
    let t = format!("{PRECISE}{slots}finish(i12)");
    let want = format!("{PRECISE}[p0, i0, i1, i2]\ni3 = cast_ptr_to_int(p0)\ni4 = int_lshift(i0, 4)\ni5 = int_add(i3, i4)\ni6 = int_add(i5, 32)\np7 = cast_int_to_ptr(i6)\ni8 = int_add(i5, 48)\np9 = cast_int_to_ptr(i8)\nsetfield(p7, i1, descr=sx)\nsetfield(p9, i2, descr=sx)\nfinish(i1)");
    check(&t, &want);
    // Slots 2 and 2.5 (8 bytes apart, 8-byte fields at offset 0 and 4) overlap: load again.
    let t = format!("{PRECISE}[p0, i0, i1, i2]\ni3 = cast_ptr_to_int(p0)\ni4 = int_lshift(i0, 4)\ni5 = int_add(i3, i4)\ni6 = int_add(i5, 32)\np7 = cast_int_to_ptr(i6)\ni8 = int_add(i5, 36)\np9 = cast_int_to_ptr(i8)\nsetfield(p7, i1, descr=sx)\nsetfield(p9, i2, descr=sx)\ni10 = getfield_i(p7, descr=sx)\nfinish(i10)");
    check(&t, &t);
    // Another index: no known displacement, load again.
    let t = format!("{PRECISE}[p0, i0, i1, i2]\ni3 = cast_ptr_to_int(p0)\ni4 = int_lshift(i0, 4)\ni5 = int_add(i3, i4)\np6 = cast_int_to_ptr(i5)\ni7 = int_lshift(i1, 4)\ni8 = int_add(i3, i7)\np9 = cast_int_to_ptr(i8)\nsetfield(p6, i1, descr=sx)\nsetfield(p9, i2, descr=sx)\ni10 = getfield_i(p6, descr=sx)\nfinish(i10)");
    check(&t, &t);
}

#[test]
fn heap_the_same_bytes_through_a_displaced_object_are_forwarded() {
    // A store at offset 0 of p0 + 8 and a load at offset 8 of p0 (same class, size and kind).
    let t = format!("{PRECISE}descr sx8 = field(offset=8, size=8, kind=i, signed, alias=i64:S.x)\ndescr sx4 = field(offset=8, size=4, kind=i, signed, alias=i64:S.x)\n[p0, i0]\ni1 = cast_ptr_to_int(p0)\ni2 = int_add(i1, 8)\np3 = cast_int_to_ptr(i2)\nsetfield(p3, i0, descr=sx)\ni4 = getfield_i(p0, descr=sx8)\ni5 = getfield_i(p0, descr=sx4)\nfinish(i4, i5)");
    let want = format!("{PRECISE}descr sx8 = field(offset=8, size=8, kind=i, signed, alias=i64:S.x)\ndescr sx4 = field(offset=8, size=4, kind=i, signed, alias=i64:S.x)\n[p0, i0]\ni1 = cast_ptr_to_int(p0)\ni2 = int_add(i1, 8)\np3 = cast_int_to_ptr(i2)\nsetfield(p3, i0, descr=sx)\ni5 = getfield_i(p0, descr=sx4)\nfinish(i0, i5)");
    check(&t, &want);
}

#[test]
fn dead_store_overwritten_before_any_read_goes() {
    check(
        "[p0, i0, i1]\nsetfield(p0, i0, descr=x)\ni2 = int_add(i0, i1)\nsetfield(p0, i2, descr=x)\nsetarrayitem(p0, i1, i0, descr=ints)\nsetarrayitem(p0, i1, i2, descr=ints)\nfinish(i2)",
        "[p0, i0, i1]\ni2 = int_add(i0, i1)\nsetfield(p0, i2, descr=x)\nsetarrayitem(p0, i1, i2, descr=ints)\nfinish(i2)",
    );
}

#[test]
fn dead_store_stays_before_a_guard_a_call_or_a_load_that_may_read_it() {
    // A guard between: the interpreter sees the first store if the guard fails.
    let t = "[p0, i0, i1]\nsetfield(p0, i0, descr=x)\nguard_true(i1) []\nsetfield(p0, i1, descr=x)\nfinish()";
    check(t, t);
    // A call between may read it.
    let t = "[p0, i0, i1]\nsetfield(p0, i0, descr=x)\ncall_n(ConstFn(escape), i1, descr=escape)\nsetfield(p0, i1, descr=x)\nfinish()";
    check(t, t);
    // A load of the same class (another object: it may be p0) reads it.
    let t = "[p0, p1, i0, i1]\nsetfield(p0, i0, descr=x)\ni2 = getfield_i(p1, descr=x)\nsetfield(p0, i1, descr=x)\nfinish(i2)";
    check(t, t);
    // A load of another class does not.
    check(
        "[p0, p1, i0, i1]\nsetfield(p0, i0, descr=x)\ni2 = getfield_i(p1, descr=y)\nsetfield(p0, i1, descr=x)\nfinish(i2)",
        "[p0, p1, i0, i1]\ni2 = getfield_i(p1, descr=y)\nsetfield(p0, i1, descr=x)\nfinish(i2)",
    );
    // Another object: not the same location.
    let t = "[p0, p1, i0, i1]\nsetfield(p0, i0, descr=x)\nsetfield(p1, i1, descr=x)\nfinish()";
    check(t, t);
}

#[test]
fn heap_items_at_index_plus_constant_are_apart() {
    check(
        "[p0, i0, i1]\ni2 = int_add(i0, 1)\ni3 = getarrayitem_i(p0, i0, descr=ints)\nsetarrayitem(p0, i2, i1, descr=ints)\ni4 = int_sub(i0, 1)\nsetarrayitem(p0, i4, i1, descr=ints)\ni5 = getarrayitem_i(p0, i0, descr=ints)\ni6 = getarrayitem_i(p0, i2, descr=ints)\nfinish(i5, i6)",
        "[p0, i0, i1]\ni2 = int_add(i0, 1)\ni3 = getarrayitem_i(p0, i0, descr=ints)\nsetarrayitem(p0, i2, i1, descr=ints)\ni4 = int_add(i0, -1)\nsetarrayitem(p0, i4, i1, descr=ints)\nfinish(i3, i1)",
    );
}

#[test]
fn heap_item_at_a_constant_and_at_index_plus_constant_may_alias() {
    // i0 + 1 may be 3.
    let t = "[p0, i0, i1]\ni2 = getarrayitem_i(p0, 3, descr=ints)\ni3 = int_add(i0, 1)\nsetarrayitem(p0, i3, i1, descr=ints)\ni4 = getarrayitem_i(p0, 3, descr=ints)\nfinish(i2, i4)";
    check(t, t);
}

/// An enum's payload is one path read as each variant's type: a store of an `i64` payload
/// forgets the `f64` payload known at the same place. (An interpreter loop stored an integer, then a
/// float, into one register; the body's float store was dropped as already done, and the
/// register read back the integer's bits as a float.)
#[test]
fn heap_payloads_of_one_enum_path_overlap_whatever_their_type() {
    let descrs = "descr ip = field(offset=8, size=8, kind=i, signed, alias=i64:E.payload)\ndescr fp = field(offset=8, size=8, kind=f, alias=f64:E.payload)\n";
    // The float's second store stays; its first is dead (overwritten, nothing reads it).
    check(
        &format!("{descrs}[p0, i0, f0]\nsetfield(p0, f0, descr=fp)\nsetfield(p0, i0, descr=ip)\nsetfield(p0, f0, descr=fp)\nfinish()"),
        &format!("{descrs}[p0, i0, f0]\nsetfield(p0, i0, descr=ip)\nsetfield(p0, f0, descr=fp)\nfinish()"),
    );
    // A load of the float after the integer's store reads memory.
    let t = format!("{descrs}[p0, i0, f0]\nsetfield(p0, f0, descr=fp)\nsetfield(p0, i0, descr=ip)\nf1 = getfield_f(p0, descr=fp)\nfinish(f1)");
    check(&t, &t);
    // In a loop: the body stores the integer, then the float; both stay in the body.
    let t = format!("{descrs}[p0, i0]\nlabel(p0, i0)\nsetfield(p0, i0, descr=ip)\nsetfield(p0, 0.001, descr=fp)\ni1 = int_add(i0, 1)\njump(p0, i1)");
    let (got, _) = optimize_with_report(&parse_with(&format!("{HEADER}{t}"), &env()).unwrap(), &Options::all());
    let text = got.to_string();
    let body = text.rsplit("label(").next().unwrap();
    assert!(body.contains("descr=fp)") && body.contains("descr=ip)"), "{text}");
}

/// A virtual object's payload written as an `i64` and read as an `f64` (another descriptor
/// over the same bytes) is no zero: the load forces the object and reads memory. Written as an
/// `f64` over the `i64`, the object keeps only the `f64`.
#[test]
fn virtual_payload_read_as_another_type_forces_the_object() {
    let descrs = "descr E = size(size=16, align=8)\ndescr ip = field(offset=8, size=8, kind=i, signed, alias=i64:E.payload)\ndescr fp = field(offset=8, size=8, kind=f, alias=f64:E.payload)\n";
    let t = format!("{descrs}[i0]\np1 = new(descr=E)\nsetfield(p1, i0, descr=ip)\nf2 = getfield_f(p1, descr=fp)\nfinish(f2)");
    let (got, _) = optimize_with_report(&parse_with(&format!("{HEADER}{t}"), &env()).unwrap(), &Options::all());
    let text = got.to_string();
    assert!(text.contains("new(descr=E)") && text.contains("getfield_f("), "{text}");
    // The float replaces the integer: a load of it is the float, and nothing is allocated.
    let t = format!("{descrs}[i0, f0]\np1 = new(descr=E)\nsetfield(p1, i0, descr=ip)\nsetfield(p1, f0, descr=fp)\nf2 = getfield_f(p1, descr=fp)\nfinish(f2)");
    let (got, _) = optimize_with_report(&parse_with(&format!("{HEADER}{t}"), &env()).unwrap(), &Options::all());
    let text = got.to_string();
    assert!(!text.contains("new(") && text.contains("finish(f1)"), "{text}");
}

#[test]
fn heap_a_loop_value_may_be_an_object_allocated_before_the_label() {
    // p0 is p1 from the second iteration on: the store through p0 may change p1's field.
    let t = "[p0]\np1 = new(descr=S)\nsetfield(p1, p1, descr=next)\nlabel(p0)\np2 = getfield_r(p1, descr=next)\np3 = new(descr=S)\nsetfield(p0, p3, descr=next)\njump(p2)";
    let opts = Options {
        virtuals: false,
        ..Options::all()
    };
    let (got, _) =
        optimize_with_report(&parse_with(&format!("{HEADER}{t}"), &env()).unwrap(), &opts);
    let text = got.to_string();
    let body = text.split("label(").nth(1).unwrap();
    assert!(body.contains("getfield_r(p"), "{text}");
}

/// Seed 1047 of the heap-stage property, shrunk: p2's first value is a `new` before the
/// label, but from the second iteration on it is p0, so the store through p2 may change p0's
/// field. Heap stage alone, then every stage: the load of p0's field stays in the body.
#[test]
fn heap_a_loop_value_first_allocated_before_the_label_may_alias_older_objects() {
    let t = "[]\np0 = new(descr=S)\nsetfield(p0, p0, descr=next)\np1 = new(descr=S)\nsetfield(p1, p1, descr=next)\nlabel(p1)\np2 = new(descr=S)\nsetfield(p1, p2, descr=next)\np3 = getfield_r(p0, descr=next)\njump(p3)";
    let heap_only = Options {
        heap: true,
        ..Options::none()
    };
    // The body stores p0's field only through p1, so the loop carries it: the label gets
    // its first value, the jump what the load reads.
    let want = "[]\np0 = new(descr=S)\nsetfield(p0, p0, descr=next)\np1 = new(descr=S)\nsetfield(p1, p1, descr=next)\np2 = same_as_r(p0)\nlabel(p1, p2)\np3 = new(descr=S)\nsetfield(p1, p3, descr=next)\np4 = getfield_r(p0, descr=next)\njump(p4, p4)";
    check_with(&heap_only, t, want);
    let (got, _) = optimize_with_report(
        &parse_with(&format!("{HEADER}{t}"), &env()).unwrap(),
        &Options::all(),
    );
    let text = got.to_string();
    let body = text.rsplit("label(").next().unwrap();
    assert!(body.contains("getfield_r(p"), "{text}");
}

/// Seeds 1034 and 1052 of the full-pipeline property, shrunk to their cause: as above, with
/// an integer field (176 came out instead of 0 when the load was forwarded).
#[test]
fn heap_a_loop_value_first_allocated_before_the_label_may_alias_an_int_field() {
    let t = "[i0]\np0 = new(descr=S)\nsetfield(p0, 0, descr=x)\np1 = new(descr=S)\nlabel(p1, i0)\nsetfield(p1, i0, descr=x)\ni1 = getfield_i(p0, descr=x)\njump(p0, i1)";
    let heap_only = Options {
        heap: true,
        ..Options::none()
    };
    let want = "[i0]\np0 = new(descr=S)\nsetfield(p0, 0, descr=x)\np1 = new(descr=S)\ni1 = same_as_i(0)\nlabel(p1, i0, i1)\nsetfield(p1, i0, descr=x)\ni2 = getfield_i(p0, descr=x)\njump(p0, i2, i2)";
    check_with(&heap_only, t, want);
}

#[test]
fn heap_items_at_unrelated_indices_may_alias() {
    let t = "[p0, i0, i1, i2]\ni3 = getarrayitem_i(p0, i0, descr=ints)\nsetarrayitem(p0, i1, i2, descr=ints)\ni4 = getarrayitem_i(p0, i0, descr=ints)\nfinish(i3, i4)";
    check(t, t);
}

#[test]
fn heap_store_to_other_object_may_alias() {
    let t = "[p0, p1]\ni2 = getfield_i(p0, descr=x)\nsetfield(p1, 3, descr=x)\ni3 = getfield_i(p0, descr=x)\nfinish(i2, i3)";
    check(t, t);
}

#[test]
fn heap_other_descriptor_does_not_alias() {
    check(
        "[p0, p1]\ni2 = getfield_i(p0, descr=x)\nsetfield(p1, 3, descr=y)\ni3 = getfield_i(p0, descr=x)\nfinish(i2, i3)",
        "[p0, p1]\ni2 = getfield_i(p0, descr=x)\nsetfield(p1, 3, descr=y)\nfinish(i2, i2)",
    );
}

#[test]
fn heap_call_forgets_what_it_writes() {
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=y)\ncall_n(ConstFn(writes_x), p0, descr=writes_x)\ni3 = getfield_i(p0, descr=x)\ni4 = getfield_i(p0, descr=y)\nfinish(i1, i2, i3, i4)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=y)\ncall_n(ConstFn(writes_x), p0, descr=writes_x)\ni3 = getfield_i(p0, descr=x)\nfinish(i1, i2, i3, i2)",
    );
}

#[test]
fn heap_call_that_writes_everything() {
    let t = "[p0]\ni1 = getfield_i(p0, descr=x)\ncall_n(ConstFn(escape_p), p0, descr=escape_p)\ni2 = getfield_i(p0, descr=x)\nfinish(i1, i2)";
    check(t, t);
}

#[test]
fn heap_read_only_call_keeps_cache() {
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = call_i(ConstFn(reads_only), p0, descr=reads_only)\ni3 = getfield_i(p0, descr=x)\nfinish(i1, i2, i3)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = call_i(ConstFn(reads_only), p0, descr=reads_only)\nfinish(i1, i2, i1)",
    );
}

#[test]
fn heap_immutable_field_survives_calls() {
    check(
        "[p0]\ni1 = getfield_i(p0, descr=imm)\ncall_n(ConstFn(escape_p), p0, descr=escape_p)\ni2 = getfield_i(p0, descr=imm)\nfinish(i1, i2)",
        "[p0]\ni1 = getfield_i(p0, descr=imm)\ncall_n(ConstFn(escape_p), p0, descr=escape_p)\nfinish(i1, i1)",
    );
}

#[test]
fn heap_array_items_with_constant_indices() {
    check(
        "[p0, i1]\nsetarrayitem(p0, 0, i1, descr=ints)\nsetarrayitem(p0, 1, 5, descr=ints)\ni2 = getarrayitem_i(p0, 0, descr=ints)\ni3 = getarrayitem_i(p0, 1, descr=ints)\nfinish(i2, i3)",
        "[p0, i1]\nsetarrayitem(p0, 0, i1, descr=ints)\nsetarrayitem(p0, 1, 5, descr=ints)\nfinish(i1, 5)",
    );
}

#[test]
fn heap_array_store_at_unknown_index_forgets() {
    let t = "[p0, i1]\ni2 = getarrayitem_i(p0, 0, descr=ints)\nsetarrayitem(p0, i1, 9, descr=ints)\ni3 = getarrayitem_i(p0, 0, descr=ints)\nfinish(i2, i3)";
    check(t, t);
}

#[test]
fn heap_array_load_at_same_variable_index() {
    check(
        "[p0, i1]\ni2 = getarrayitem_i(p0, i1, descr=bytes)\ni3 = int_add(i1, 0)\ni4 = getarrayitem_i(p0, i3, descr=bytes)\nfinish(i2, i4)",
        "[p0, i1]\ni2 = getarrayitem_i(p0, i1, descr=bytes)\nfinish(i2, i2)",
    );
}

#[test]
fn heap_off_keeps_loads() {
    let opts = Options {
        heap: false,
        ..Options::all()
    };
    let t = "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=x)\nfinish(i1, i2)";
    check_with(&opts, t, t);
}

#[test]
fn heap_unused_load_dies() {
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\nfinish()",
        "[p0]\nfinish()",
    );
}

// ---- virtuals ------------------------------------------------------------------------------

#[test]
fn virtual_that_never_escapes_disappears() {
    check(
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\ni2 = getfield_i(p1, descr=x)\ni3 = getfield_i(p1, descr=y)\ni4 = int_add(i2, i3)\nfinish(i4)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn virtual_escaping_is_materialized_where_it_escapes() {
    check(
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\nsetfield(p1, 0, descr=y)\ni2 = int_add(i0, 1)\ncall_n(ConstFn(escape_p), p1, descr=escape_p)\nfinish(i2)",
        "[i0]\ni2 = int_add(i0, 1)\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\ncall_n(ConstFn(escape_p), p1, descr=escape_p)\nfinish(i2)",
    );
}

#[test]
fn virtual_in_guard_resume_data() {
    check(
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\nguard_true(i0) [p1, i0]\ni2 = getfield_i(p1, descr=x)\nfinish(i2)",
        // When the guard fails, i0 is 0.
        "[i0]\nguard_true(i0) [v0, 0] {v0 = S(x=0)}\nfinish(i0)",
    );
}

#[test]
fn virtual_nested_in_resume_data() {
    check(
        "[i0, p9]\np1 = new(descr=S)\np2 = new(descr=S)\nsetfield(p1, p2, descr=next)\nsetfield(p2, p1, descr=next)\nsetfield(p2, 4, descr=y)\nguard_true(i0) [p1]\nfinish()",
        "[i0, p9]\nguard_true(i0) [v0] {v0 = S(next=v1), v1 = S(next=v0, y=4)}\nfinish()",
    );
}

#[test]
fn virtual_stored_into_real_object_escapes_with_fields() {
    check(
        "[p0, f1]\np2 = new(descr=S)\nsetfield(p2, f1, descr=fl)\nsetfield(p0, p2, descr=next)\nfinish()",
        "[p0, f1]\np2 = new(descr=S)\nsetfield(p2, f1, descr=fl)\nsetfield(p0, p2, descr=next)\nfinish()",
    );
}

#[test]
fn virtual_cycle_escapes() {
    check(
        "[]\np1 = new(descr=S)\np2 = new(descr=S)\nsetfield(p1, p2, descr=next)\nsetfield(p2, p1, descr=next)\nfinish(p1)",
        "[]\np1 = new(descr=S)\np2 = new(descr=S)\nsetfield(p2, p1, descr=next)\nsetfield(p1, p2, descr=next)\nfinish(p1)",
    );
}

#[test]
fn virtual_is_never_equal_to_other_pointers() {
    check(
        "[p0]\np1 = new(descr=S)\ni2 = ptr_eq(p1, p0)\ni3 = ptr_ne(p1, p0)\ni4 = ptr_eq(p1, p1)\nguard_nonnull(p1) []\nfinish(i2, i3, i4)",
        "[p0]\nfinish(0, 1, 1)",
    );
}

#[test]
fn virtual_array_with_constant_indices() {
    check(
        "[i0]\np1 = new_array(3, descr=ints)\nsetarrayitem(p1, 2, i0, descr=ints)\ni2 = getarrayitem_i(p1, 2, descr=ints)\ni3 = getarrayitem_i(p1, 0, descr=ints)\nguard_true(i0) [p1]\nfinish(i2, i3)",
        // When the guard fails, i0 is 0.
        "[i0]\nguard_true(i0) [v0] {v0 = ints[0, 0, 0]}\nfinish(i0, 0)",
    );
}

#[test]
fn virtual_array_forced_by_variable_index() {
    check(
        "[i0]\ni1 = int_and(i0, 1)\np2 = new_array(2, descr=ints)\nsetarrayitem(p2, 0, 5, descr=ints)\ni3 = getarrayitem_i(p2, i1, descr=ints)\nfinish(i3)",
        "[i0]\ni1 = int_and(i0, 1)\np2 = new_array(2, descr=ints)\nsetarrayitem(p2, 0, 5, descr=ints)\ni3 = getarrayitem_i(p2, i1, descr=ints)\nfinish(i3)",
    );
}

#[test]
fn virtual_forced_then_heap_knows_fields() {
    check(
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\ncall_n(ConstFn(escape_p), p1, descr=escape_p)\ni2 = getfield_i(p1, descr=y)\nsetfield(p1, 1, descr=y)\ni3 = getfield_i(p1, descr=y)\nfinish(i2, i3)",
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\ncall_n(ConstFn(escape_p), p1, descr=escape_p)\ni2 = getfield_i(p1, descr=y)\nsetfield(p1, 1, descr=y)\nfinish(i2, 1)",
    );
}

#[test]
fn virtuals_off_keeps_allocation() {
    let opts = Options {
        virtuals: false,
        ..Options::all()
    };
    check_with(
        &opts,
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\ni2 = getfield_i(p1, descr=x)\nfinish(i2)",
        "[i0]\np1 = new(descr=S)\nsetfield(p1, i0, descr=x)\nfinish(i0)",
    );
}

#[test]
fn virtual_jump_argument_is_carried_as_its_fields() {
    // A list that grows by one cell per iteration: the label carries the newest cell's `next`
    // (the cell itself stays virtual), and the body allocates the cell before it, which the
    // new cell points to: still one allocation per iteration, none in the preamble.
    check(
        "[p0]\np1 = new(descr=S)\nsetfield(p1, p0, descr=next)\njump(p1)",
        "[p0]\nlabel(p0)\np1 = new(descr=S)\nsetfield(p1, p0, descr=next)\njump(p1)",
    );
}

#[test]
fn a_boxed_counter_is_carried_without_allocation() {
    // The box the iteration builds is the next iteration's input: the label carries its
    // field, and the loop allocates nothing.
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = int_add(i1, 1)\np3 = new(descr=S)\nsetfield(p3, i2, descr=x)\njump(p3)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = int_add(i1, 1)\nlabel(i2)\ni3 = int_add(i2, 1)\njump(i3)",
    );
}

#[test]
fn a_carried_box_keeps_a_constant_field_out_of_the_label() {
    // The box's `y` is 7 at the end of every iteration: the label carries only `x`, and the
    // body knows `y`, so its guard on it goes.
    check_shape(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=y)\nguard_value(i2, 7) [i1]\ni3 = int_add(i1, 1)\np4 = new(descr=S)\nsetfield(p4, i3, descr=x)\nsetfield(p4, 7, descr=y)\njump(p4)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=y)\nguard_value(i2, 7) [i1]\ni3 = int_add(i1, 1)\nlabel(i3)\ni4 = int_add(i3, 1)\njump(i4)",
    );
}

#[test]
fn a_field_constant_at_the_label_but_not_at_the_jump_is_carried() {
    // `y` is 1 after the first iteration but 2 after the second: assuming it constant would
    // break at the `jump`, so the loop is optimized again with `y` a label argument (which
    // the body's guard then knows to be 0 on the path that reaches the `jump`).
    let r = check_shape(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=y)\nguard_value(i2, 0) [i1]\ni3 = int_add(i2, 1)\np4 = new(descr=S)\nsetfield(p4, i1, descr=x)\nsetfield(p4, i3, descr=y)\njump(p4)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = getfield_i(p0, descr=y)\nguard_value(i2, 0) [i1]\ni3 = same_as_i(1)\nlabel(i1, i3)\nguard_value(i3, 0) [i1]\njump(i1, 1)",
    );
    assert!(r.rounds >= 2, "{r:?}");
}

#[test]
fn a_box_that_escapes_is_not_carried() {
    // The iteration passes its new box to a call: the box is allocated in both copies and the
    // label carries the object itself.
    check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\np3 = new(descr=S)\nsetfield(p3, i1, descr=x)\ncall_n(ConstFn(escape_p), p3, descr=escape_p)\njump(p3)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\np2 = new(descr=S)\nsetfield(p2, i1, descr=x)\ncall_n(ConstFn(escape_p), p2, descr=escape_p)\np3 = same_as_r(p2)\nlabel(p3)\ni4 = getfield_i(p3, descr=x)\np5 = new(descr=S)\nsetfield(p5, i4, descr=x)\ncall_n(ConstFn(escape_p), p5, descr=escape_p)\njump(p5)",
    );
}

#[test]
fn heap_an_unfolded_constant_sum_is_not_a_constant_index() {
    // With folding off, `7 + 3` stays an op. Its parts must not be (constant 7, 3): constant
    // indices share one base in the heap cache, and the pool's first slot (here 7) would make
    // it look like item 3, apart from item 10, which the store writes.
    let t = "[p0, i1]\ni2 = int_add(7, 3)\ni3 = getarrayitem_i(p0, i2, descr=ints)\nsetarrayitem(p0, 10, i1, descr=ints)\ni4 = getarrayitem_i(p0, i2, descr=ints)\nfinish(i3, i4)";
    let opts = Options {
        fold: false,
        ..Options::all()
    };
    check_with(&opts, t, t);
}

// ---- loops and labels ----------------------------------------------------------------------

#[test]
fn label_forgets_facts_about_loop_values() {
    check(
        "[i0]\nguard_value(i0, 3) []\nlabel(i0)\ni1 = int_add(i0, 1)\njump(i1)",
        "[i0]\nguard_value(i0, 3) []\ni1 = same_as_i(3)\nlabel(i1)\ni2 = int_add(i1, 1)\njump(i2)",
    );
}

#[test]
fn label_assumes_a_loop_value_keeps_its_first_range_when_the_jump_shows_it() {
    // i0 is in [0, 255] on entry and `(i0 + 1) & 255` is too: inside the loop `i0 < 0` is
    // false.
    check(
        "[i0]\ni1 = uint_lt(i0, 256)\nguard_true(i1) []\nlabel(i0)\ni2 = int_lt(i0, 0)\nguard_false(i2) []\ni3 = int_add(i0, 1)\ni4 = int_and(i3, 255)\njump(i4)",
        "[i0]\ni1 = uint_lt(i0, 256)\nguard_true(i1) []\nlabel(i0)\ni2 = int_add(i0, 1)\ni3 = int_and(i2, 255)\njump(i3)",
    );
}

#[test]
fn label_drops_an_assumed_range_the_jump_does_not_keep() {
    // `i0 - 1` may leave [0, 255]: the loop is optimized again without assuming it, and the
    // guard stays.
    let input = "[i0]\ni1 = uint_lt(i0, 256)\nguard_true(i1) []\nlabel(i0)\ni2 = int_lt(i0, 0)\nguard_false(i2) []\ni3 = int_add(i0, -1)\njump(i3)";
    check(input, input);
}

#[test]
fn label_keeps_loop_invariant_facts() {
    check(
        "[i0, i1]\ni2 = int_mul(i1, 4)\nlabel(i0)\ni3 = int_mul(i1, 4)\ni4 = int_add(i0, i3)\njump(i4)",
        "[i0, i1]\ni2 = int_lshift(i1, 2)\nlabel(i0)\ni3 = int_add(i0, i2)\njump(i3)",
    );
}

#[test]
fn label_argument_shared_with_an_invariant_gets_its_own_box() {
    // i2 is i0 before the loop, but only i2 is a loop variable.
    check(
        "[i0]\ni2 = int_add(i0, 0)\nlabel(i2)\ni3 = int_add(i2, i0)\njump(i3)",
        "[i0]\ni1 = same_as_i(i0)\nlabel(i1)\ni2 = int_add(i1, i0)\njump(i2)",
    );
}

#[test]
fn label_heap_cache_is_forgotten() {
    let t = "[p0]\ni1 = getfield_i(p0, descr=x)\nlabel(p0)\ni2 = getfield_i(p0, descr=x)\nsetfield(p0, i2, descr=y)\njump(p0)";
    check(
        t,
        "[p0]\nlabel(p0)\ni1 = getfield_i(p0, descr=x)\nsetfield(p0, i1, descr=y)\njump(p0)",
    );
}

#[test]
fn label_forces_virtuals_mutated_in_the_loop() {
    check(
        "[i0]\np1 = new(descr=S)\nlabel(i0)\ni2 = getfield_i(p1, descr=x)\ni3 = int_add(i2, i0)\nsetfield(p1, i3, descr=x)\njump(i3)",
        "[i0]\np1 = new(descr=S)\nlabel(i0)\ni2 = getfield_i(p1, descr=x)\ni3 = int_add(i2, i0)\nsetfield(p1, i3, descr=x)\njump(i3)",
    );
}

#[test]
fn loop_without_label_optimizes_each_iteration() {
    let t = "[i0, i1]\ni2 = int_add(i0, 1)\ni3 = int_add(i0, 1)\ni4 = int_lt(i2, i1)\nguard_true(i4) [i2]\njump(i3, i1)";
    check_with(
        &Options {
            unroll: false,
            ..Options::all()
        },
        t,
        "[i0, i1]\ni2 = int_add(i0, 1)\ni3 = int_lt(i2, i1)\nguard_true(i3) [i2]\njump(i2, i1)",
    );
    // Peeled: the invariant i1 is not carried.
    check(
        t,
        "[i0, i1]\ni2 = int_add(i0, 1)\ni3 = int_lt(i2, i1)\nguard_true(i3) [i2]\ni4 = same_as_i(i2)\nlabel(i4)\ni5 = int_add(i4, 1)\ni6 = int_lt(i5, i1)\nguard_true(i6) [i5]\njump(i5)",
    );
}

#[test]
fn label_imports_what_memory_holds_of_invariant_objects() {
    // The load from p0 (not loop-carried) is hoisted: the body never writes x.
    check(
        "[p0, i0]\ni1 = getfield_i(p0, descr=x)\nlabel(i0)\ni2 = getfield_i(p0, descr=x)\ni3 = int_add(i0, i2)\nsetfield(p0, i3, descr=y)\njump(i3)",
        "[p0, i0]\ni1 = getfield_i(p0, descr=x)\nlabel(i0)\ni3 = int_add(i0, i1)\nsetfield(p0, i3, descr=y)\njump(i3)",
    );
}

#[test]
fn label_carries_what_the_body_stores() {
    // The body writes x: the next iteration finds what it stored, passed in a label argument.
    check(
        "[p0, i0]\ni1 = getfield_i(p0, descr=x)\nlabel(i0)\ni2 = getfield_i(p0, descr=x)\ni3 = int_add(i0, i2)\nsetfield(p0, i3, descr=x)\njump(i3)",
        "[p0, i0]\ni1 = getfield_i(p0, descr=x)\ni2 = same_as_i(i1)\nlabel(i0, i2)\ni3 = int_add(i0, i2)\nsetfield(p0, i3, descr=x)\njump(i3, i3)",
    );
}

#[test]
fn peeled_loop_carries_a_counter_in_memory_in_one_round() {
    // The preamble stores a value it computed from x: the body will too, so the label carries
    // x at once instead of learning it in a second round.
    let report = check(
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = int_add(i1, 1)\nsetfield(p0, i2, descr=x)\njump(p0)",
        "[p0]\ni1 = getfield_i(p0, descr=x)\ni2 = int_add(i1, 1)\nsetfield(p0, i2, descr=x)\ni3 = same_as_i(i2)\nlabel(i3)\ni4 = int_add(i3, 1)\nsetfield(p0, i4, descr=x)\njump(i4)",
    );
    assert_eq!(report.rounds, 1);
}

#[test]
fn peeled_loop_drops_a_wrong_guess_of_what_it_carries() {
    // The preamble stores a computed value, but one the body computes again the same (CSE):
    // the guess is checked at the jump, and the second round imports x instead (its store in
    // the body is then redundant).
    let report = check(
        "[p0, i0]\ni1 = int_mul(i0, 3)\nsetfield(p0, i1, descr=x)\njump(p0, i0)",
        "[p0, i0]\ni1 = int_mul(i0, 3)\nsetfield(p0, i1, descr=x)\nlabel()\njump()",
    );
    assert_eq!(report.rounds, 2);
}

#[test]
fn label_does_not_import_what_a_call_in_the_body_may_change() {
    check(
        "[p0, i0]\ni1 = getfield_i(p0, descr=x)\nlabel(i0)\ni2 = getfield_i(p0, descr=x)\ncall_n(ConstFn(escape), i2, descr=escape)\njump(i0)",
        "[p0, i0]\nlabel(i0)\ni2 = getfield_i(p0, descr=x)\ncall_n(ConstFn(escape), i2, descr=escape)\njump(i0)",
    );
}

#[test]
fn label_imports_invariant_array_items_and_carries_changed_ones() {
    // Item 0 is only read (its load leaves the loop), item 1 is written by the body (its value
    // goes around the loop in a label argument).
    check(
        "[p0, i0]\ni1 = getarrayitem_i(p0, 0, descr=ints)\ni2 = getarrayitem_i(p0, 1, descr=ints)\nlabel(i0)\ni3 = getarrayitem_i(p0, 0, descr=ints)\ni4 = getarrayitem_i(p0, 1, descr=ints)\ni5 = int_add(i3, i4)\nsetarrayitem(p0, 1, i5, descr=ints)\njump(i5)",
        "[p0, i0]\ni1 = getarrayitem_i(p0, 0, descr=ints)\ni2 = getarrayitem_i(p0, 1, descr=ints)\ni3 = same_as_i(i2)\nlabel(i0, i3)\ni5 = int_add(i1, i3)\nsetarrayitem(p0, 1, i5, descr=ints)\njump(i5, i5)",
    );
}

#[test]
fn label_does_not_import_what_a_later_call_may_change() {
    // The body stores x, then a call may change it: the value at the jump is unknown, so x
    // is neither imported nor carried.
    check(
        "[p0, i0]\ni1 = getfield_i(p0, descr=x)\nlabel(i0)\ni2 = getfield_i(p0, descr=x)\ni3 = int_add(i0, i2)\nsetfield(p0, i3, descr=x)\ncall_n(ConstFn(escape), i3, descr=escape)\njump(i3)",
        "[p0, i0]\nlabel(i0)\ni2 = getfield_i(p0, descr=x)\ni3 = int_add(i0, i2)\nsetfield(p0, i3, descr=x)\ncall_n(ConstFn(escape), i3, descr=escape)\njump(i3)",
    );
}

// ---- dce and options -----------------------------------------------------------------------

#[test]
fn dce_keeps_effects_and_guard_inputs() {
    check(
        "[i0, p1]\ni2 = int_add(i0, 1)\ni3 = int_mul(i0, 2)\nguard_true(i0) [i3]\nsetfield(p1, i2, descr=x)\ni4 = int_sub(i0, 9)\nfinish()",
        "[i0, p1]\ni2 = int_add(i0, 1)\ni3 = int_lshift(i0, 1)\nguard_true(i0) [i3]\nsetfield(p1, i2, descr=x)\nfinish()",
    );
}

#[test]
fn dce_off_keeps_dead_ops() {
    let opts = Options {
        dce: false,
        ..Options::all()
    };
    check_with(
        &opts,
        "[i0]\ni1 = int_add(i0, 1)\nfinish(i0)",
        "[i0]\ni1 = int_add(i0, 1)\nfinish(i0)",
    );
}

#[test]
fn no_options_is_identity() {
    let t = "[i0]\ni1 = int_add(i0, 0)\ni2 = int_add(i0, 0)\nguard_true(1) []\nfinish(i1, i2)";
    check_with(&Options::none(), t, t);
}

#[test]
fn options_parse() {
    assert_eq!(Options::parse("all"), Ok(Options::all()));
    let o = Options::parse("fold:dce").unwrap();
    assert!(o.fold && o.dce && !o.pure && !o.heap);
    assert!(Options::parse("fold:nope").is_err());
}

#[test]
fn virtual_in_known_result_is_not_forced() {
    check(
        "[i0]\np1 = new(descr=S)\nrecord_known_result(i0, ConstFn(reads_only), p1, descr=reads_only)\nsetfield(p1, i0, descr=x)\ni2 = getfield_i(p1, descr=x)\nfinish(i2)",
        "[i0]\nfinish(i0)",
    );
}

#[test]
fn heap_narrow_store_then_load_is_narrowed() {
    let d = "descr b = field(offset=0, size=1, kind=i, signed)\ndescr u = field(offset=8, size=2, kind=i)\n";
    check(
        &format!("{d}[p0, i1]\nsetfield(p0, 238, descr=b)\ni2 = getfield_i(p0, descr=b)\nsetfield(p0, i1, descr=u)\ni3 = getfield_i(p0, descr=u)\nfinish(i2, i3)"),
        &format!("{d}[p0, i1]\nsetfield(p0, 238, descr=b)\nsetfield(p0, i1, descr=u)\ni2 = int_and(i1, 65535)\nfinish(-18, i2)"),
    );
}

#[test]
fn label_invariant_computed_from_loop_value_is_opaque() {
    // i2 is the first iteration's test of i0; after the label, i0 is a new value each time.
    let t = "[i0]\ni2 = int_is_zero(i0)\nlabel(i0)\nguard_true(i2) []\njump(i2)";
    check(t, t);
}

#[test]
fn either_way_keeps_a_guards_condition_in_its_own_resume_data() {
    // By default a guard's failure says its condition is 0, and its resume data says so.
    let t = "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) [i1, i0]\nfinish(i0)";
    check_with(
        &Options::all(),
        t,
        "[i0]\ni1 = int_lt(i0, 10)\nguard_true(i1) [0, i0]\nfinish(i0)",
    );
    // With `either_way`, the resume data holds whichever way the guard goes (for the
    // tracer's inlining, which may take up the interpreter's state where the guard passes).
    let either = Options {
        either_way: true,
        ..Options::all()
    };
    check_with(&either, t, t);
}
