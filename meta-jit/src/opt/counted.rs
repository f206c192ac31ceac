//! Counted loops: a peeled loop whose only way out is one integer induction variable reaching
//! a constant skips straight to its last iteration. This is what a static compiler's
//! final-value replacement does to `while (*p) { *p -= 1; p[1] += 1; }`: the loop runs `*p`
//! times, so it computes every variable's value after `*p - 1` turns at once, and runs the body
//! one last time, whose guard exits.
//!
//! The loop body (the ops between `label` and `jump`) qualifies when:
//!
//! - every label argument `x` is an integer *induction variable*: the `jump` passes back
//!   `(x + s) mod 2^w` of it, for a constant step `s` and a width `w` of 1 to 64 bits
//!   (`mod 2^w` is an `int_and` with `2^w - 1`, or nothing for `w = 64`), and its value at the
//!   label is below `2^w` already (so that after `k` turns it is `(x + k s) mod 2^w`, for every
//!   `k` including 0);
//! - its one guard exits when `(x + a) mod 2^v` equals a constant `c`, for an induction
//!   variable `x` of width at least `v` whose step is odd: then the turns' values of
//!   `(x + a) mod 2^v` are all different for `2^v` turns, and the exit comes at turn
//!   `k = (c - a - x) / s mod 2^v` (the division is the multiplication by the inverse of `s`
//!   modulo `2^v`);
//! - its other ops are pure ops (not elidable calls: skipping a call may skip its panic), and
//!   stores to addresses that are the same in every turn (computed before the label, or by
//!   pure ops from those), all before the guard.
//!
//! Then the turns before the last have no effect the last does not redo: they write the same
//! addresses in the same order as the last, they read no memory, and their guard passes. So
//! the body may run once, on the variables as they are at turn `k`. The rewritten loop
//! computes `k` and those values right after the label and then runs the original body on
//! them; its guard fails (the exit with the right values in its resume data), and were it ever
//! to pass, the loop would go round and compute the next exit the same way. The exit's own
//! variable, when its width is the exit's, is the constant `target - a` at turn `k` whatever
//! `k` is, and the copied body's pure ops on constants fold.
//!
//! A loop that may never exit (an even step, or a constant the variable never takes) is left
//! alone. One whose exit is up to 2^64 turns away (a 64-bit counter) is rewritten too: the
//! loop would end there with the same values.
//!
//! Owns: recognizing counted loops and rewriting them. Must not know: how the trace was
//! optimized before (it reads the optimized trace, nothing of the stages' tables).

use crate::ir::{Op, OpRef, Opcode, Trace, Type, Value};

/// The value of a body op in terms of one label argument: `(arg + add) mod 2^bits`. `exact`
/// says the value *is* that number in `0..2^bits` (after an `int_and`, or when `bits` is 64);
/// otherwise it is only congruent to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Affine {
    arg: usize,
    add: u64,
    bits: u32,
    exact: bool,
}

/// An induction variable: the `jump` passes back `(x + step) mod 2^bits`.
#[derive(Copy, Clone, Debug)]
struct Induction {
    step: u64,
    bits: u32,
}

/// The loop's exit: the guard fails at the turn where `(x_arg + add) mod 2^bits == target`.
#[derive(Copy, Clone, Debug)]
struct Exit {
    arg: usize,
    add: u64,
    bits: u32,
    target: u64,
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The width `w` of a constant mask `2^w - 1` (1 to 63 bits).
fn mask_width(m: i64) -> Option<u32> {
    let w = 64 - (m as u64).leading_zeros();
    (m > 0 && (m as u64) == mask(w) && w < 64).then_some(w)
}

/// The inverse of an odd `s` modulo 2^64 (Newton's iteration; each step doubles the correct
/// low bits, and `s` itself is right to 3 bits).
fn inverse(s: u64) -> u64 {
    debug_assert!(s & 1 == 1);
    let mut x = s;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(s.wrapping_mul(x)));
    }
    x
}

/// Rewrites a counted loop to skip to its last turn; `None` when `t` is not a peeled loop or
/// its body does not qualify (see the module doc).
pub fn skip_to_last_turn(t: &Trace) -> Option<Trace> {
    let label_at = t.label()?;
    let jump_at = t.ops.len() - 1;
    let jump = &t.ops[jump_at];
    if jump.opcode != Opcode::Jump || jump.descr.is_some() {
        return None;
    }
    let args = &t.ops[label_at].args;
    if args.is_empty()
        || args.len() != jump.args.len()
        || args
            .iter()
            .any(|a| !a.is_op() || t.type_of(*a) != Type::Int)
    {
        return None;
    }
    let in_body = |r: OpRef| r.is_op() && r.index() > label_at;
    let position: hashbrown::HashMap<OpRef, usize> =
        args.iter().enumerate().map(|(j, &a)| (a, j)).collect();
    let int = |r: OpRef| match t.const_value(r) {
        Some(Value::Int(i)) => Some(i),
        _ => None,
    };
    // What each value is in terms of a label argument, where it is one.
    let affine = |forms: &[Option<Affine>], r: OpRef| -> Option<Affine> {
        if let Some(&j) = position.get(&r) {
            return Some(Affine {
                arg: j,
                add: 0,
                bits: 64,
                exact: true,
            });
        }
        if in_body(r) {
            forms[r.index()]
        } else {
            None
        }
    };
    let mut forms: Vec<Option<Affine>> = vec![None; t.ops.len()];
    // Body values that are the same in every turn: pure ops of values from before the label.
    let mut invariant = vec![false; t.ops.len()];
    let same_every_turn = |invariant: &[bool], r: OpRef| {
        !position.contains_key(&r) && (!in_body(r) || invariant[r.index()])
    };
    let mut exit = None;
    let mut guard_seen = false;
    for i in label_at + 1..jump_at {
        let op = &t.ops[i];
        let a = |k: usize| affine(&forms, op.args[k]);
        let c = |k: usize| int(op.args[k]);
        forms[i] = match op.opcode {
            Opcode::IntAdd => match (a(0), c(1), c(0), a(1)) {
                (Some(f), Some(n), _, _) | (_, _, Some(n), Some(f)) => Some(Affine {
                    add: f.add.wrapping_add(n as u64),
                    exact: f.bits == 64,
                    ..f
                }),
                _ => None,
            },
            Opcode::IntSub => match (a(0), c(1)) {
                (Some(f), Some(n)) => Some(Affine {
                    add: f.add.wrapping_sub(n as u64),
                    exact: f.bits == 64,
                    ..f
                }),
                _ => None,
            },
            Opcode::IntAnd => {
                let (f, m) = match (a(0), c(1), c(0), a(1)) {
                    (Some(f), Some(m), _, _) | (_, _, Some(m), Some(f)) => (Some(f), m),
                    _ => (None, 0),
                };
                match (f, mask_width(m)) {
                    (Some(f), Some(w)) if f.bits >= w => Some(Affine {
                        bits: w,
                        exact: true,
                        ..f
                    }),
                    _ => None,
                }
            }
            Opcode::SameAsI => a(0),
            _ => None,
        };
        match op.opcode {
            Opcode::CallPureI | Opcode::CallPureF | Opcode::CallPureR => return None,
            o if o.is_pure() => {
                invariant[i] = op.args.iter().all(|r| same_every_turn(&invariant, *r));
            }
            Opcode::Setfield | Opcode::Setarrayitem => {
                let (_value, address) = op.args.split_last().expect("stores take args");
                if guard_seen || !address.iter().all(|r| same_every_turn(&invariant, *r)) {
                    return None;
                }
            }
            Opcode::GuardTrue | Opcode::GuardFalse if !guard_seen => {
                guard_seen = true;
                let cond = op.args[0];
                if !in_body(cond) {
                    return None;
                }
                let cmp = &t.ops[cond.index()];
                // It exits when the compared values are equal.
                if !matches!(
                    (op.opcode, cmp.opcode),
                    (Opcode::GuardTrue, Opcode::IntNe) | (Opcode::GuardFalse, Opcode::IntEq)
                ) {
                    return None;
                }
                let (f, target) = match (
                    affine(&forms, cmp.args[0]),
                    int(cmp.args[1]),
                    int(cmp.args[0]),
                    affine(&forms, cmp.args[1]),
                ) {
                    (Some(f), Some(n), _, _) | (_, _, Some(n), Some(f)) => (f, n as u64),
                    _ => return None,
                };
                // An inexact value equal to `target` says nothing of `(x + a) mod 2^v`; a
                // target out of range is never reached.
                if !f.exact || target & !mask(f.bits) != 0 {
                    return None;
                }
                exit = Some(Exit {
                    arg: f.arg,
                    add: f.add,
                    bits: f.bits,
                    target,
                });
            }
            _ => return None,
        }
    }
    let exit = exit?;
    // Every label argument an induction variable, its first value in range.
    let mut steps = Vec::with_capacity(args.len());
    for (j, &next) in jump.args.iter().enumerate() {
        let f = affine(&forms, next)?;
        if f.arg != j || !f.exact || !below(t, args[j], f.bits, label_at) {
            return None;
        }
        steps.push(Induction {
            step: f.add,
            bits: f.bits,
        });
    }
    let x = steps[exit.arg];
    if x.bits < exit.bits || (x.step & mask(exit.bits)) & 1 == 0 {
        return None;
    }
    Some(rewrite(t, label_at, &steps, exit))
}

/// Whether `r`, defined before the label, is known to be below `2^bits` (as an unsigned
/// number): a constant, a mask, a comparison, a zero-extending load that narrow, or a copy of
/// one.
fn below(t: &Trace, r: OpRef, bits: u32, label_at: usize) -> bool {
    if bits >= 64 {
        return true;
    }
    if let Some(Value::Int(i)) = t.const_value(r) {
        return (i as u64) <= mask(bits);
    }
    if !r.is_op() || r.index() >= label_at {
        return false;
    }
    let op = t.op(r);
    let narrow = |size: u8, signed: bool| !signed && u32::from(size) * 8 <= bits;
    match op.opcode {
        Opcode::SameAsI => below(t, op.args[0], bits, label_at),
        Opcode::IntAnd => op
            .args
            .iter()
            .any(|a| matches!(t.const_value(*a), Some(Value::Int(m)) if m >= 0 && (m as u64) <= mask(bits))),
        o if o.is_comparison() => true,
        Opcode::GetarrayitemI => op
            .descr
            .and_then(|d| t.get_descr(d).array().map(|a| narrow(a.item_size, a.signed)))
            .unwrap_or(false),
        Opcode::GetfieldI => op
            .descr
            .and_then(|d| t.get_descr(d).field().map(|f| narrow(f.size, f.signed)))
            .unwrap_or(false),
        _ => false,
    }
}

/// The loop with `k`, the exit turn, and the variables at turn `k` computed right after the
/// label, and its body running on those.
fn rewrite(t: &Trace, label_at: usize, steps: &[Induction], exit: Exit) -> Trace {
    let mut out = Trace::with_tables_of(t);
    out.ops.extend(t.ops[..=label_at].iter().cloned());
    let args = t.ops[label_at].args.clone();
    let emit = |out: &mut Trace, opcode: Opcode, a: OpRef, b: u64| {
        let b = out.int(b as i64);
        out.push(Op::new(opcode, &[a, b]))
    };
    // k = (target - add - x) * s^-1 mod 2^v, computed if a variable needs it.
    let mut k: Option<OpRef> = None;
    let mut turns = |out: &mut Trace| -> OpRef {
        *k.get_or_insert_with(|| {
            let x = args[exit.arg];
            let s = steps[exit.arg].step;
            let base = exit.target.wrapping_sub(exit.add);
            let inv = inverse(s) & mask(exit.bits);
            // A step of 1 or -1 (mod 2^v) is its own inverse: no multiplication.
            let k = if inv == 1 {
                let base = out.int(base as i64);
                out.push(Op::new(Opcode::IntSub, &[base, x]))
            } else if inv == mask(exit.bits) {
                emit(out, Opcode::IntAdd, x, base.wrapping_neg())
            } else {
                let base = out.int(base as i64);
                let diff = out.push(Op::new(Opcode::IntSub, &[base, x]));
                emit(out, Opcode::IntMul, diff, inv)
            };
            if exit.bits < 64 {
                emit(out, Opcode::IntAnd, k, mask(exit.bits))
            } else {
                k
            }
        })
    };
    let mut at_k: Vec<OpRef> = Vec::with_capacity(args.len());
    for (j, (&a, ind)) in args.iter().zip(steps).enumerate() {
        if ind.step & mask(ind.bits) == 0 {
            at_k.push(a);
            continue;
        }
        if j == exit.arg && ind.bits == exit.bits {
            // At the exit turn, `(x + add) mod 2^v` is `target`, and `x` is below `2^v`: it
            // is `target - add` there, whatever `k` is.
            let c = exit.target.wrapping_sub(exit.add) & mask(exit.bits);
            at_k.push(out.int(c as i64));
            continue;
        }
        let k = turns(&mut out);
        let moved = if ind.step == 1 {
            k
        } else {
            emit(&mut out, Opcode::IntMul, k, ind.step)
        };
        let mut v = out.push(Op::new(Opcode::IntAdd, &[a, moved]));
        if ind.bits < 64 {
            v = emit(&mut out, Opcode::IntAnd, v, mask(ind.bits));
        }
        at_k.push(v);
    }
    // The body, on the variables at turn k.
    let mut map: Vec<OpRef> = (0..t.ops.len()).map(OpRef::op).collect();
    for (a, v) in args.iter().zip(&at_k) {
        map[a.index()] = *v;
    }
    for i in label_at + 1..t.ops.len() {
        let mut op = t.ops[i].clone();
        op.map_ops(|r| map[r.index()]);
        map[i] = match fold(&mut out, &op) {
            Some(c) => c,
            None => out.push(op),
        };
    }
    out
}

/// The constant a pure op of the copied body computes when its arguments are all constants
/// (the exit variable at its last turn is one).
fn fold(out: &mut Trace, op: &Op) -> Option<OpRef> {
    if !op.opcode.is_pure() || op.opcode.is_call() {
        return None;
    }
    let args: Option<Vec<Value>> = op.args.iter().map(|&a| out.const_value(a)).collect();
    let v = crate::ir::semantics::eval_pure(op.opcode, &args?)?;
    Some(out.constant(v))
}

#[cfg(test)]
mod tests {
    use super::{inverse, skip_to_last_turn};
    use crate::interp::{Outcome, Run};
    use crate::ir::parse::parse;
    use crate::ir::print::print;
    use crate::ir::{Trace, Value};
    use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
    use std::fmt::Write as _;

    const DESCRS: &str = "descr bytes = array(base=0, item=1, kind=i)\n\
                          descr words = array(base=0, item=8, kind=i, signed)\n";

    fn trace(text: &str) -> Trace {
        parse(&format!("{DESCRS}{text}")).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A loop that moves one byte counter into another, as the optimizer leaves it: two byte
    /// counters carried, one counting down to 0.
    const MOVE: &str = "[p0, i1, i2]
i3 = int_and(i1, 255)
i4 = int_and(i2, 255)
i5 = same_as_i(i3)
i6 = same_as_i(i4)
label(i5, i6)
i7 = int_add(i5, 255)
i8 = int_and(i7, 255)
setarrayitem(p0, 0, i8, descr=bytes)
i9 = int_add(i6, 1)
i10 = int_and(i9, 255)
setarrayitem(p0, 1, i10, descr=bytes)
i11 = int_ne(i8, 0)
guard_true(i11) [i5, i6]
jump(i8, i10)";

    #[test]
    fn inverse_is_the_inverse() {
        for s in [1u64, 3, 5, 255, 0xdead_beef, u64::MAX, 12345678901] {
            let s = s | 1;
            assert_eq!(s.wrapping_mul(inverse(s)), 1, "{s}");
        }
    }

    #[test]
    fn a_move_loop_skips_to_its_last_turn() {
        let got = skip_to_last_turn(&trace(MOVE)).expect("a counted loop");
        // k = (0 - 255 - i5) * 255^-1 mod 256, which is i5 + 255 mod 256 (255 is its own
        // inverse, -1); the other counter moves k steps. The exit counter is 1 at its last
        // turn whatever k is (its `- 1` then gives the exit's 0), so the body's ops on it
        // fold: the store writes 0 and the guard always fails.
        let want = trace(
            "[p0, i1, i2]
i3 = int_and(i1, 255)
i4 = int_and(i2, 255)
i5 = same_as_i(i3)
i6 = same_as_i(i4)
label(i5, i6)
i7 = int_add(i5, 255)
i8 = int_and(i7, 255)
i9 = int_add(i6, i8)
i10 = int_and(i9, 255)
setarrayitem(p0, 0, 0, descr=bytes)
i11 = int_add(i10, 1)
i12 = int_and(i11, 255)
setarrayitem(p0, 1, i12, descr=bytes)
guard_true(0) [1, i10]
jump(0, i12)",
        );
        assert_eq!(print(&got), print(&want));
    }

    /// Each change makes the loop not counted (or not provably so); it is left alone.
    #[test]
    fn loops_that_do_not_qualify_are_left_alone() {
        let cases = [
            // An even step: the counter may never reach 0.
            ("i7 = int_add(i5, 255)", "i7 = int_add(i5, 254)"),
            // A store after the guard would be one turn behind.
            (
                "guard_true(i11) [i5, i6]",
                "guard_true(i11) [i5, i6]\nsetarrayitem(p0, 2, i8, descr=bytes)",
            ),
            // A store whose address moves.
            (
                "setarrayitem(p0, 1, i10, descr=bytes)",
                "setarrayitem(p0, i6, i10, descr=bytes)",
            ),
            // A store whose address the body computes from a moving value.
            (
                "setarrayitem(p0, 1, i10, descr=bytes)",
                "i32 = int_add(i10, 1)\nsetarrayitem(p0, i32, i10, descr=bytes)",
            ),
            // A load reads what earlier turns wrote.
            (
                "i9 = int_add(i6, 1)",
                "i30 = getarrayitem_i(p0, 5, descr=bytes)\ni9 = int_add(i6, i30)",
            ),
            // A second guard.
            (
                "guard_true(i11) [i5, i6]",
                "guard_true(i11) [i5, i6]\ni31 = int_ne(i10, 7)\nguard_true(i31) [i5]",
            ),
            // A counter that is not masked back into its width.
            ("i10 = int_and(i9, 255)", "i10 = int_xor(i9, 255)"),
            // A first value not known to be a byte.
            ("i4 = int_and(i2, 255)", "i4 = int_or(i2, 255)"),
            // An exit on a value the counter never takes.
            ("i11 = int_ne(i8, 0)", "i11 = int_ne(i8, 256)"),
            // An exit on a comparison that is not equality.
            ("i11 = int_ne(i8, 0)", "i11 = int_lt(i8, 9)"),
        ];
        assert!(skip_to_last_turn(&trace(MOVE)).is_some());
        for (from, to) in cases {
            assert!(MOVE.contains(from), "{from}");
            let t = trace(&MOVE.replace(from, to));
            assert!(skip_to_last_turn(&t).is_none(), "rewrote:\n{t}");
        }
    }

    /// A random counted loop: variables of random widths and steps, stores of them (or of
    /// pure functions of them) to fixed places, an exit on one, and inputs to start from.
    #[derive(Clone, Debug)]
    struct Case {
        text: String,
        inputs: Vec<i64>,
    }

    fn pick<T: Copy>(g: &mut Gen, xs: &[T]) -> T {
        *g.choose(xs).expect("not empty")
    }

    impl Arbitrary for Case {
        fn arbitrary(g: &mut Gen) -> Case {
            let n = 1 + usize::arbitrary(g) % 3;
            let widths: Vec<u32> = (0..n).map(|_| pick(g, &[1, 3, 8, 8, 8, 12, 64])).collect();
            let exit = usize::arbitrary(g) % n;
            let mask = |w: u32| if w >= 64 { -1 } else { (1i64 << w) - 1 };
            let steps: Vec<i64> = (0..n)
                .map(|j| {
                    let s = pick(g, &[1, -1, 3, -5, 0, 7, 254, 255, 1 << 40]);
                    if j == exit && widths[j] == 64 {
                        pick(g, &[1, -1])
                    } else {
                        s
                    }
                })
                .collect();
            let mut t = String::from("[p0");
            for j in 0..n {
                let _ = write!(t, ", i{}", j + 1);
            }
            t.push_str("]\n");
            let mut v = n + 1;
            let mut fresh = || {
                v += 1;
                format!("i{}", v - 1)
            };
            // An index in 0..8, the same in every turn.
            let base = fresh();
            let _ = writeln!(t, "{base} = int_and(i1, 7)");
            let mut labels = Vec::new();
            for (j, &w) in widths.iter().enumerate() {
                let start = if w < 64 {
                    let m = fresh();
                    let _ = writeln!(t, "{m} = int_and(i{}, {})", j + 1, mask(w));
                    m
                } else {
                    format!("i{}", j + 1)
                };
                let l = fresh();
                let _ = writeln!(t, "{l} = same_as_i({start})");
                labels.push(l);
            }
            let _ = writeln!(t, "label({})", labels.join(", "));
            let mut next = Vec::new();
            let mut stored = 0;
            for j in 0..n {
                let a = fresh();
                let _ = writeln!(t, "{a} = int_add({}, {})", labels[j], steps[j]);
                let x = if widths[j] < 64 {
                    let m = fresh();
                    let _ = writeln!(t, "{m} = int_and({a}, {})", mask(widths[j]));
                    m
                } else {
                    a
                };
                if bool::arbitrary(g) {
                    let y = fresh();
                    let _ = writeln!(t, "{y} = int_mul({x}, {})", pick(g, &[3, -1, 17]));
                    let _ = writeln!(t, "setarrayitem(p0, {stored}, {y}, descr=words)");
                    stored += 1;
                }
                if bool::arbitrary(g) {
                    // Maybe at the same place as the last store: the last one wins.
                    let at = stored.min(7);
                    let _ = writeln!(t, "setarrayitem(p0, {}, {x}, descr=bytes)", 8 * at + 1);
                } else if bool::arbitrary(g) {
                    // At an address the body computes from invariant values.
                    let at = fresh();
                    let _ = writeln!(t, "{at} = int_add({base}, 40)");
                    let _ = writeln!(t, "setarrayitem(p0, {at}, {x}, descr=bytes)");
                }
                next.push(x);
            }
            // The exit: (x + a) mod 2^v == c, for v at most the variable's width.
            let w = widths[exit];
            let v_bits = if w == 64 {
                pick(g, &[64, 8])
            } else {
                w.min(pick(g, &[w, 1, 2]))
            };
            let a = pick(g, &[0i64, 1, -3, 100]);
            let c = i64::arbitrary(g) & mask(v_bits);
            let e = fresh();
            let _ = writeln!(t, "{e} = int_add({}, {a})", labels[exit]);
            let e = if v_bits < 64 {
                let m = fresh();
                let _ = writeln!(t, "{m} = int_and({e}, {})", mask(v_bits));
                m
            } else {
                e
            };
            let cmp = fresh();
            let eq = bool::arbitrary(g);
            let _ = writeln!(t, "{cmp} = int_{}({e}, {c})", if eq { "eq" } else { "ne" });
            let _ = writeln!(
                t,
                "guard_{}({cmp}) [{}, {e}]",
                if eq { "false" } else { "true" },
                labels.join(", ")
            );
            // Sometimes a store after the guard, which disqualifies the loop (the property
            // checks that nothing rewrites it wrongly).
            if u8::arbitrary(g) % 8 == 0 {
                let _ = writeln!(t, "setarrayitem(p0, 7, {}, descr=words)", next[0]);
            }
            // A pure op after the guard, feeding the jump.
            let last = fresh();
            let _ = writeln!(t, "{last} = same_as_i({})", next[n - 1]);
            next[n - 1] = last;
            let _ = writeln!(t, "jump({})", next.join(", "));
            let mut inputs: Vec<i64> = (0..n).map(|_| i64::arbitrary(g)).collect();
            if w == 64 && v_bits == 64 {
                // Start a few turns from the exit: x0 + a + d s == c.
                let d = i64::from(u8::arbitrary(g));
                inputs[exit] = c.wrapping_sub(a).wrapping_sub(d.wrapping_mul(steps[exit]));
            }
            Case { text: t, inputs }
        }
    }

    /// How the run of `t` on `case`'s inputs ended (the failing guard's id and the values of
    /// its resume data, constants included), and the memory it wrote; `None` if it did not
    /// end.
    fn observe(t: &Trace, case: &Case) -> Option<(u32, Vec<Value>, [u64; 8])> {
        let mut mem = [0u64; 8];
        let mut inputs = vec![Value::Ref(mem.as_mut_ptr() as usize)];
        inputs.extend(case.inputs.iter().map(|&i| Value::Int(i)));
        let run = Run {
            max_iterations: (1 << 12) + 300,
            ..Run::default()
        };
        match run.run(t, &inputs).expect("runs") {
            Outcome::GuardFailed { id, op, saved } => {
                let r = t.ops[op].resume.as_ref().expect("a guard");
                Some((id, crate::interp::materialize(t, r, &saved), mem))
            }
            Outcome::Iterations(_) => None,
            other => panic!("a loop ended with {other:?}"),
        }
    }

    #[test]
    fn skipping_runs_like_looping() {
        fn prop(case: Case) -> TestResult {
            let t = trace(&case.text);
            let Some(skipping) = skip_to_last_turn(&t) else {
                return TestResult::discard();
            };
            assert_eq!(crate::ir::verify::verify(&skipping), Ok(()), "{skipping}");
            let Some(looped) = observe(&t, &case) else {
                return TestResult::discard();
            };
            let skipped = observe(&skipping, &case).expect("the rewritten loop exits");
            if looped != skipped {
                eprintln!(
                    "{}\ninputs {:?}\nlooped {looped:?}\nskipped {skipped:?}\n{skipping}",
                    case.text, case.inputs
                );
            }
            TestResult::from_bool(looped == skipped)
        }
        QuickCheck::new()
            .tests(2000)
            .max_tests(20000)
            .quickcheck(prop as fn(Case) -> TestResult);
    }

    /// The generator makes counted loops most of the time (so the property above tests the
    /// rewrite, not the discarding).
    #[test]
    fn most_generated_loops_are_counted() {
        let mut g = Gen::new(100);
        let counted = (0..1000)
            .filter(|_| skip_to_last_turn(&trace(&Case::arbitrary(&mut g).text)).is_some())
            .count();
        assert!(counted > 500, "{counted} of 1000");
    }
}
