//! The tracer's heap cache, end to end: a small stack machine whose every step reads a `Vec`'s
//! buffer and length. Repeated reads of a field or an item record one load, and a bounds test
//! settles the bounds check that follows it; a residual call that pushes (the length
//! changes, the buffer may move) and a store through the vector make the next read load
//! again. The JIT must agree with the interpreter, and in debug builds the tracer asserts that
//! every load it shares still reads what memory holds.

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `acc += items[0] + items[len - 1] + count`
    Peek,
    /// `items.push(acc & 7)` (residual: the length changes, the buffer may move)
    Push,
    /// `items[0] += 1` (a store into the buffer)
    Bump,
    /// `acc += 1` if `count >= len`, else `acc += items[count]` (a bounds test, then an
    /// access whose own bounds check is the test's negation)
    Checked,
    /// `count += 1` (a store into a field)
    Count,
    /// `acc += promote!(count)`
    AddCount,
    /// `n -= 1`, back to op `t` while `n > 0`
    Again(u32),
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

#[derive(JitLayout)]
pub struct Stack {
    pub items: Vec<i64>,
    pub count: i64,
}

#[dont_look_inside]
fn push(s: &mut Stack, v: i64) {
    s.items.push(v);
}

#[jit::interpreter(greens(pc, code), reds(acc, n, s))]
pub fn run(code: &Code, s: &mut Stack, mut n: i64) -> i64 {
    let mut pc: usize = 0;
    let mut acc: i64 = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Peek => {
                let last = s.items.len() - 1;
                acc = acc.wrapping_add(s.items[0]).wrapping_add(s.items[last]);
                acc = acc.wrapping_add(s.count);
            }
            Ins::Push => push(s, acc & 7),
            Ins::Bump => s.items[0] += 1,
            Ins::Checked => {
                let i = s.count as usize;
                if i >= s.items.len() {
                    acc = acc.wrapping_add(1);
                } else {
                    acc = acc.wrapping_add(s.items[i]);
                }
            }
            Ins::Count => s.count += 1,
            Ins::AddCount => {
                let k = promote!(s.count);
                acc = acc.wrapping_add(k);
            }
            Ins::Again(t) => {
                n -= 1;
                if n > 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return acc,
        }
        pc += 1;
    }
}

fn go(params: &str, ops: &[Ins], n: i64) -> (i64, Vec<i64>, i64) {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2,keep_recorded=1,keep_optimized=1")
            .unwrap();
        d.set_params(params).unwrap();
    });
    let code = Code { ops: ops.to_vec() };
    let mut s = Stack {
        items: vec![1],
        count: 0,
    };
    let r = run(&code, &mut s, n);
    (r, s.items, s.count)
}

/// Runs `ops` for `n` turns with the JIT off and on, checks that both end the same (result,
/// stack, count), and returns the first loop trace as recorded.
fn recorded(ops: &[Ins], n: i64) -> String {
    let off = go("off", ops, n);
    let on = go("on", ops, n);
    assert_eq!(on, off);
    run::with_driver(|d| d.with_stats(|s| s.traces[0].recorded.as_ref().expect("kept").to_string()))
}

/// How many loads of a field (by the start of its descriptor's name) a trace has.
fn loads(trace: &str, field: &str) -> usize {
    trace
        .lines()
        .filter(|l| l.contains("getfield") && l.contains(&format!("descr={field}")))
        .count()
}

fn vec_loads(trace: &str) -> (usize, usize) {
    (loads(trace, "Vec_ptr"), loads(trace, "Vec_len"))
}

#[test]
fn repeated_reads_of_a_field_record_one_load() {
    // Three peeks per turn read the buffer and the length three times each (more with the
    // bounds checks): one load of each is recorded.
    let t = recorded(
        &[Ins::Peek, Ins::Peek, Ins::Peek, Ins::Again(0), Ins::Halt],
        100,
    );
    assert_eq!(vec_loads(&t), (1, 1), "{t}");
    // So are the items: `items[0]` and `items[len - 1]` are loaded once.
    assert_eq!(t.matches("getarrayitem_i").count(), 2, "{t}");
    // The bounds checks and `len - 1` of the second and third peek are those of the first:
    // the turn records three guards for the peeks (one for `len - 1`, two for the bounds)
    // and two for the loop's own test. A release build checks no arithmetic for overflow:
    // neither `len - 1` nor the loop's `n - 1` has a guard there.
    let overflow_checks = if cfg!(debug_assertions) { 2 } else { 0 };
    assert_eq!(t.matches("guard_").count(), 3 + overflow_checks, "{t}");
    // One `len - 1` (and, in a release build, the loop's `n - 1`, which debug builds record
    // as an `int_sub_ovf`).
    let loop_sub = if cfg!(debug_assertions) { 0 } else { 1 };
    assert_eq!(t.matches("int_sub(").count(), 1 + loop_sub, "{t}");
}

#[test]
fn a_residual_call_makes_the_next_read_load_again() {
    // Each turn peeks, pushes (a call: the length grows, the buffer moves now and then) and
    // peeks again: the second peek must load the new buffer and length.
    let t = recorded(
        &[Ins::Peek, Ins::Push, Ins::Peek, Ins::Again(0), Ins::Halt],
        300,
    );
    assert_eq!(vec_loads(&t), (2, 2), "{t}");
}

#[test]
fn a_store_into_the_buffer_keeps_the_vectors_fields() {
    // `items[0] += 1` writes an item, not the `Vec`'s fields: they stay shared across it.
    // The first peek loads two items and the bump reuses `items[0]`; the store forgets every
    // item, so the second peek loads both again.
    let t = recorded(
        &[Ins::Peek, Ins::Bump, Ins::Peek, Ins::Again(0), Ins::Halt],
        100,
    );
    assert_eq!(vec_loads(&t), (1, 1), "{t}");
    assert_eq!(t.matches("getarrayitem_i").count(), 4, "{t}");
}

#[test]
fn a_bounds_test_settles_the_bounds_check_after_it() {
    // `count >= len` is false on the traced path: its guard makes `count < len`, the
    // indexing's bounds check, the constant 1, so no `uint_lt` and no second guard.
    let t = recorded(&[Ins::Checked, Ins::Again(0), Ins::Halt], 100);
    assert_eq!(t.matches("uint_ge(").count(), 1, "{t}");
    assert_eq!(t.matches("uint_lt(").count(), 0, "{t}");
    // One guard for the test, two for the loop's own (`n - 1` overflow, in debug builds
    // only, and `n > 0`).
    let overflow_checks = if cfg!(debug_assertions) { 1 } else { 0 };
    assert_eq!(t.matches("guard_").count(), 2 + overflow_checks, "{t}");
}

#[test]
fn a_store_into_a_field_makes_the_next_read_load_it_again() {
    // `count += 1` reads `count` (shared with the first peek's read) and writes it: the
    // second peek loads it again.
    let t = recorded(
        &[Ins::Peek, Ins::Count, Ins::Peek, Ins::Again(0), Ins::Halt],
        100,
    );
    assert_eq!(loads(&t, "count_"), 2, "{t}");
}

#[test]
fn a_value_promoted_twice_is_guarded_once() {
    // Both reads of `count` are one load, so the second `promote!` promotes a value the
    // first one already guarded.
    let t = recorded(
        &[Ins::AddCount, Ins::AddCount, Ins::Again(0), Ins::Halt],
        100,
    );
    assert_eq!(loads(&t, "count_"), 1, "{t}");
    assert_eq!(t.matches("guard_value").count(), 1, "{t}");
}
