//! Guard removal and strengthening.
//!
//! A guard whose outcome is already known goes: its condition is a constant that passes, or an
//! earlier guard established it (after `guard_true(b)` on a boolean, `b` *is* 1; after
//! `guard_value(x, c)`, `x` *is* `c`, through the union-find; after `guard_nonnull(p)` or
//! `guard_true(x)` on a non-boolean, `p`/`x` is known non-zero). A guard that must fail is kept
//! where it is and reported. Strengthening, at the same point only (never moving a failure
//! earlier, so the failing guard and its resume data stay those of the input): `guard_value`
//! on a boolean becomes `guard_true`/`guard_false`, and a guard on `int_is_true(x)` or
//! `int_is_zero(x)`, or on a boolean's negation (`b == 0`, `b ^ 1`, `!b & 1`), tests `x` or
//! `b` directly (so the backend fuses a comparison `b` into the guard's jump).
//!
//! A guard's own condition in its resume data is known when the guard fails: 0 after
//! `guard_true(x)`, 1 after `guard_false(b)` on a boolean, null after `guard_nonnull(p)`.
//! [`on_failure`] writes that constant into the resume data, so the condition is not kept
//! alive only to be saved (and the backend can fuse its comparison into the guard).

use super::fold::is_bool;
use super::{Optimizer, Step};
use crate::ir::{Op, OpRef, Opcode, Value};
use hashbrown::HashSet;

/// The value a guard on `v` may test instead, and whether the test flips: `x` for
/// `int_is_true(x)`; `x`, flipped, for `int_is_zero(x)`, and for `x == 0`, `x ^ 1` and
/// `!x & 1` on a boolean `x`.
fn tested(o: &mut Optimizer, v: OpRef) -> Option<(bool, OpRef)> {
    use Opcode::*;
    let p = o.producer(v).filter(|p| !p.args.is_empty())?;
    let (opcode, x, y) = (p.opcode, p.args[0], p.args.get(1).copied());
    let c = y.and_then(|y| o.const_value(y));
    match (opcode, c) {
        (IntIsTrue, _) => Some((false, x)),
        (IntIsZero, _) => Some((true, x)),
        (IntEq, Some(Value::Int(0))) | (IntXor, Some(Value::Int(1))) if is_bool(o, x) => {
            Some((true, x))
        }
        (IntAnd, Some(Value::Int(1))) => match o.producer(x) {
            Some(q) if q.opcode == IntInvert => {
                let b = q.args[0];
                is_bool(o, b).then_some((true, b))
            }
            _ => None,
        },
        _ => None,
    }
}

/// What earlier guards established.
#[derive(Default, Clone)]
pub struct Facts {
    nonzero: HashSet<OpRef>,
    not_invalidated: bool,
}

enum Known {
    Passes,
    Fails,
    Unknown,
}

/// The guard stage.
pub fn optimize(o: &mut Optimizer, mut op: Op) -> Step {
    use Opcode::*;
    if !op.opcode.is_guard() {
        return Step::Next(op);
    }
    // Test the operand of int_is_true / int_is_zero directly, and a boolean's negation
    // (`b == 0`, `b ^ 1`, `!b & 1`) as the boolean.
    if matches!(op.opcode, GuardTrue | GuardFalse) {
        if let Some((flip, x)) = tested(o, op.args[0]) {
            if flip && !o.opts.either_way {
                // The guard's failure says what the negation it tested was: 0 for a
                // `guard_true`, 1 for a `guard_false` (as [`on_failure`] says of `x`).
                let old = o.find(op.args[0]);
                let known = o.out.int(i64::from(op.opcode == GuardFalse));
                write_known(o, &mut op, old, known);
            }
            let now_true = (op.opcode == GuardTrue) != flip;
            op.opcode = if now_true { GuardTrue } else { GuardFalse };
            op.args[0] = x;
        }
    }
    if op.opcode == GuardValue && is_bool(o, op.args[0]) {
        match o.const_value(op.args[1]) {
            Some(Value::Int(1)) => {
                op.opcode = GuardTrue;
                op.args.pop();
            }
            Some(Value::Int(0)) => {
                op.opcode = GuardFalse;
                op.args.pop();
            }
            _ => {}
        }
    }
    let a = op.args.first().copied();
    let c = a.and_then(|a| o.const_value(a));
    let known = match (op.opcode, c) {
        (GuardTrue | GuardNonnull | GuardFalse | GuardIsnull, Some(v)) => {
            let nonzero = v.bits() != 0;
            if nonzero == matches!(op.opcode, GuardTrue | GuardNonnull) {
                Known::Passes
            } else {
                Known::Fails
            }
        }
        (GuardTrue | GuardNonnull, None) if o.guards.nonzero.contains(&a.unwrap()) => Known::Passes,
        (GuardFalse | GuardIsnull, None) if o.guards.nonzero.contains(&a.unwrap()) => Known::Fails,
        (GuardValue, Some(v)) => {
            if Some(v) == o.const_value(op.args[1]) {
                Known::Passes
            } else {
                Known::Fails
            }
        }
        (GuardValue, None) if is_bool(o, a.unwrap()) => Known::Fails, // a boolean vs. c > 1
        (GuardNotInvalidated, _) if o.guards.not_invalidated => Known::Passes,
        _ => Known::Unknown,
    };
    match known {
        Known::Passes => Step::Remove,
        Known::Fails => {
            let id = op.resume.as_ref().map_or(0, |r| r.id);
            o.report.failing_guards.push(id);
            Step::Next(op)
        }
        Known::Unknown => Step::Next(op),
    }
}

/// Learns from an emitted op.
pub fn emitted(o: &mut Optimizer, r: OpRef) {
    use Opcode::*;
    let op = &o.out.ops[r.index()];
    let (opcode, a) = (op.opcode, op.args.first().copied());
    match opcode {
        GuardTrue => {
            let a = a.unwrap();
            if is_bool(o, a) {
                let one = o.out.int(1);
                o.replace(a, one);
            } else {
                o.guards.nonzero.insert(a);
            }
        }
        GuardFalse => {
            let zero = o.out.int(0);
            o.replace(a.unwrap(), zero);
        }
        GuardValue => {
            let c = o.out.ops[r.index()].args[1];
            o.replace(a.unwrap(), c);
        }
        GuardIsnull => {
            let null = o.out.ptr(0);
            o.replace(a.unwrap(), null);
        }
        GuardNonnull => {
            o.guards.nonzero.insert(a.unwrap());
        }
        New | NewArray => {
            o.guards.nonzero.insert(r);
        }
        GuardNotInvalidated => o.guards.not_invalidated = true,
        _ if opcode.is_call() && !opcode.is_pure() => {
            let d = op.descr.expect("verified");
            let e = &o.out.get_descr(d).call().expect("verified").effects;
            if e.can_invalidate {
                o.guards.not_invalidated = false;
            }
        }
        _ => {}
    }
}

/// Forgets what is known of `values` (the loop-carried values at the label), and that the code
/// is not invalidated.
pub fn forget(o: &mut Optimizer, values: &hashbrown::HashSet<OpRef>) {
    o.guards.nonzero.retain(|v| !values.contains(v));
    o.guards.not_invalidated = false;
}

/// Writes what a guard's failure says of its condition into its resume data (see the module
/// doc).
pub fn on_failure(o: &mut Optimizer, op: &mut Op) {
    use Opcode::*;
    let Some(&c) = op.args.first() else {
        return;
    };
    let known = match op.opcode {
        GuardTrue => o.out.int(0),
        GuardFalse if is_bool(o, c) => o.out.int(1),
        GuardNonnull => o.out.ptr(0),
        _ => return,
    };
    write_known(o, op, c, known);
}

/// Writes `known` for `c` (found) into `op`'s resume data, wherever a value is `c` after
/// [`Optimizer::find`].
fn write_known(o: &mut Optimizer, op: &mut Op, c: OpRef, known: OpRef) {
    if let Some(r) = op.resume.as_deref_mut() {
        for v in r.values.iter_mut() {
            if o.find(*v) == c {
                *v = known;
            }
        }
        for virt in r.virtuals.iter_mut() {
            for f in virt.fields.iter_mut() {
                if o.find(f.1) == c {
                    f.1 = known;
                }
            }
        }
    }
}
