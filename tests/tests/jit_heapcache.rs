//! The tracer's heap cache, end to end: a small stack machine whose every step reads a `Vec`'s
//! buffer and length. Repeated reads record one load; a residual call that pushes (the length
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
    /// `count += 1` (a store into a field)
    Count,
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
            Ins::Count => s.count += 1,
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

fn go(params: &str, ops: &[Ins], n: i64) -> (i64, Vec<i64>, i64, meta_jit::warm::Stats) {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2").unwrap();
        d.set_params(params).unwrap();
    });
    let code = Code { ops: ops.to_vec() };
    let mut s = Stack {
        items: vec![1],
        count: 0,
    };
    let r = run(&code, &mut s, n);
    (r, s.items, s.count, run::with_driver(|d| d.stats()))
}

/// How many loads of a field (by the start of its descriptor's name) the first loop trace
/// recorded.
fn loads(stats: &meta_jit::warm::Stats, field: &str) -> usize {
    let t = stats.traces[0].recorded.to_string();
    t.lines()
        .filter(|l| l.contains("getfield") && l.contains(&format!("descr={field}")))
        .count()
}

fn vec_loads(stats: &meta_jit::warm::Stats) -> (usize, usize) {
    (loads(stats, "Vec_ptr"), loads(stats, "Vec_len"))
}

#[test]
fn repeated_reads_of_a_field_record_one_load() {
    // Three peeks per turn read the buffer and the length three times each (more with the
    // bounds checks): one load of each is recorded.
    let ops = [Ins::Peek, Ins::Peek, Ins::Peek, Ins::Again(0), Ins::Halt];
    let off = go("off", &ops, 100);
    let on = go("on", &ops, 100);
    assert_eq!(on.0..=on.2, off.0..=off.2);
    assert_eq!(
        (&on.1, vec_loads(&on.3)),
        (&off.1, (1, 1)),
        "{}",
        on.3.traces[0].recorded
    );
    // The bounds checks and `len - 1` of the second and third peek are those of the first:
    // the turn records three guards for the peeks (one for `len - 1`, two for the bounds)
    // and two for the loop's own test.
    let t = on.3.traces[0].recorded.to_string();
    assert_eq!(t.matches("guard_").count(), 5, "{t}");
    assert_eq!(t.matches("int_sub(").count(), 1, "{t}");
}

#[test]
fn a_residual_call_makes_the_next_read_load_again() {
    // Each turn peeks, pushes (a call: the length grows, the buffer moves now and then) and
    // peeks again: the second peek must load the new buffer and length.
    let ops = [Ins::Peek, Ins::Push, Ins::Peek, Ins::Again(0), Ins::Halt];
    let off = go("off", &ops, 300);
    let on = go("on", &ops, 300);
    assert_eq!(on.0..=on.2, off.0..=off.2);
    assert_eq!(
        (&on.1, vec_loads(&on.3)),
        (&off.1, (2, 2)),
        "{}",
        on.3.traces[0].recorded
    );
}

#[test]
fn a_store_into_the_buffer_keeps_the_vectors_fields() {
    // `items[0] += 1` writes an item, not the `Vec`'s fields: they stay shared across it,
    // and the item itself is read again after the store.
    let ops = [Ins::Peek, Ins::Bump, Ins::Peek, Ins::Again(0), Ins::Halt];
    let off = go("off", &ops, 100);
    let on = go("on", &ops, 100);
    assert_eq!(on.0..=on.2, off.0..=off.2);
    assert_eq!(
        (&on.1, vec_loads(&on.3)),
        (&off.1, (1, 1)),
        "{}",
        on.3.traces[0].recorded
    );
    let t = on.3.traces[0].recorded.to_string();
    assert!(t.matches("getarrayitem_i").count() >= 3, "{t}");
}

#[test]
fn a_store_into_a_field_makes_the_next_read_load_it_again() {
    // `count += 1` reads `count` (shared with the first peek's read) and writes it: the
    // second peek loads it again.
    let ops = [Ins::Peek, Ins::Count, Ins::Peek, Ins::Again(0), Ins::Halt];
    let off = go("off", &ops, 100);
    let on = go("on", &ops, 100);
    assert_eq!(on.0..=on.2, off.0..=off.2);
    assert_eq!(on.1, off.1);
    assert_eq!(loads(&on.3, "count_"), 2, "{}", on.3.traces[0].recorded);
}
