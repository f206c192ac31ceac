//! Constant folding and algebraic simplification.
//!
//! Rules, keyed by opcode and by which arguments are constants, each returning what the op
//! becomes. The contract of every rule: the result has the op's type and its value on every
//! input; rewrites go one way (toward fewer ops, constants on the right, `int_sub` of a
//! constant as `int_add`), so no two rules undo each other. Pure ops with constant arguments
//! are evaluated with [`crate::ir::semantics`], the interpreter's own definition; elidable
//! calls with constant arguments are called now. Loads of immutable fields of constant objects
//! (and of quasi-immutable ones, recorded in the report) read memory now.

use super::{Optimizer, Step};
use crate::ir::semantics::eval_pure;
use crate::ir::{DescrKind, Op, OpRef, Opcode, Value};

/// The fold stage.
pub fn optimize(o: &mut Optimizer, mut op: Op) -> Step {
    use Opcode::*;
    let consts: Vec<Option<Value>> = op.args.iter().map(|&a| o.const_value(a)).collect();
    let all_const = consts.iter().all(Option::is_some);
    if op.opcode.is_pure() && all_const {
        let vals: Vec<Value> = consts.iter().map(|c| c.expect("all constant")).collect();
        if let Some(v) = eval_pure(op.opcode, &vals) {
            return Step::Replace(o.out.constant(v));
        }
        if op.opcode.is_call() {
            let d = o
                .out
                .get_descr(op.descr.expect("verified"))
                .call()
                .expect("verified")
                .clone();
            // SAFETY: the trace's contract: the function keeps the contract of `crate::call`
            // with this descriptor's signature; it is elidable, so calling it now instead of
            // at run time changes nothing.
            let r = unsafe { crate::call::call(vals[0].addr(), &d, &vals[1..]) };
            return Step::Replace(o.out.constant(r.expect("pure calls return a value")));
        }
    }
    if op.opcode.flags().has(crate::ir::Flags::COMMUTATIVE)
        && consts[0].is_some()
        && consts[1].is_none()
    {
        op.args.swap(0, 1);
        return optimize(o, op);
    }
    let (a, b) = (op.args.first().copied(), op.args.get(1).copied());
    let cb = consts.get(1).copied().flatten().map(|v| v.bits() as i64);
    let same = a.is_some() && a == b;
    let int = |o: &mut Optimizer, i: i64| Step::Replace(o.out.int(i));
    match (op.opcode, cb) {
        (IntAdd | IntSub | IntOr | IntXor | IntLshift | IntRshift | UintRshift, Some(0)) => {
            Step::Replace(a.unwrap())
        }
        (IntLshift | IntRshift | UintRshift, Some(c)) if c & 63 == 0 => Step::Replace(a.unwrap()),
        (IntLshift, Some(k)) if (1..64).contains(&k) => match inner(o, a.unwrap(), IntAdd) {
            // (x + c) << k  ==>  (x << k) + (c << k), in wrapping arithmetic: the constant
            // moves out, so that addresses `p + ((i + c) << k)` share `p + (i << k)`.
            Some((x, Some(c))) => {
                let shifted = o.derived(Op::new(IntLshift, &[x, op.args[1]]));
                let c = o.out.int(c.wrapping_shl(k as u32));
                optimize(o, Op::new(IntAdd, &[shifted, c]))
            }
            _ => Step::Next(op),
        },
        (IntMul | IntFloorDiv, Some(1)) | (IntAnd, Some(-1)) => Step::Replace(a.unwrap()),
        (IntMul | IntAnd, Some(0)) | (IntMod, Some(1) | Some(-1)) => int(o, 0),
        (IntOr, Some(-1)) => int(o, -1),
        (IntSub | IntXor, _) if same => int(o, 0),
        (IntAnd | IntOr, _) if same => Step::Replace(a.unwrap()),
        (IntEq | IntLe | IntGe | UintLe | UintGe | PtrEq, _) if same => int(o, 1),
        (IntNe | IntLt | IntGt | UintLt | UintGt | PtrNe, _) if same => int(o, 0),
        (IntSub, Some(c)) => {
            // x - c  ==>  x + (-c), so that additions of constants combine.
            let nc = o.out.int(c.wrapping_neg());
            optimize(o, Op::new(IntAdd, &[a.unwrap(), nc]))
        }
        (IntAdd, Some(c2)) => {
            match inner(o, a.unwrap(), IntAdd).or_else(|| inner(o, a.unwrap(), IntAddOvf)) {
                // (x + c1) + c2  ==>  x + (c1 + c2), in wrapping arithmetic (so also when the inner
                // addition is an `int_add_ovf`, whose value is the wrapped sum too).
                Some((x, Some(c1))) => {
                    let c = o.out.int(c1.wrapping_add(c2));
                    optimize(o, Op::new(IntAdd, &[x, c]))
                }
                _ => Step::Next(op),
            }
        }
        (IntAdd, None) if consts[0].is_none() => {
            // x + (y + c)  ==>  (x + y) + c, and (y + c) + x the same way: constants move
            // out of sums, so that `x + y` is one value for every `c` (CSE), and addresses
            // built that way are one base at known displacements (the heap stage's roots).
            let (x, y) = (a.unwrap(), b.unwrap());
            let split = match inner(o, y, IntAdd) {
                Some((z, Some(c))) => Some((x, z, c)),
                _ => match inner(o, x, IntAdd) {
                    Some((z, Some(c))) => Some((z, y, c)),
                    _ => None,
                },
            };
            match split {
                Some((p, q, c)) => {
                    let sum = o.derived(Op::new(IntAdd, &[p, q]));
                    let c = o.out.int(c);
                    optimize(o, Op::new(IntAdd, &[sum, c]))
                }
                None => Step::Next(op),
            }
        }
        (IntAnd, Some(c2)) => match inner(o, a.unwrap(), IntAnd) {
            // (x & c1) & c2  ==>  x & (c1 & c2), which is (x & c1) if c2 keeps all of c1.
            Some((_, Some(c1))) if c1 & c2 == c1 => Step::Replace(a.unwrap()),
            Some((x, Some(c1))) => {
                let c = o.out.int(c1 & c2);
                optimize(o, Op::new(IntAnd, &[x, c]))
            }
            _ => Step::Next(op),
        },
        (UintMod, Some(c)) if c != 0 && (c as u64).is_power_of_two() => {
            // x % 2^k  ==>  x & (2^k - 1): an `and` instead of a `div`.
            let m = o.out.int((c as u64 - 1) as i64);
            optimize(o, Op::new(IntAnd, &[a.unwrap(), m]))
        }
        (UintFloorDiv, Some(c)) if c != 0 && (c as u64).is_power_of_two() => {
            let k = o.out.int(c.trailing_zeros() as i64);
            optimize(o, Op::new(UintRshift, &[a.unwrap(), k]))
        }
        (IntMul, Some(c)) if c > 0 && (c as u64).is_power_of_two() => {
            let k = o.out.int(c.trailing_zeros() as i64);
            optimize(o, Op::new(IntLshift, &[a.unwrap(), k]))
        }
        (IntLt | IntLe | IntGt | IntGe | UintLt | UintLe | UintGt | UintGe, _)
            if consts[0].is_some() && cb.is_none() =>
        {
            // c < x  ==>  x > c: constants on the right, for CSE.
            let flipped = match op.opcode {
                IntLt => IntGt,
                IntLe => IntGe,
                IntGt => IntLt,
                IntGe => IntLe,
                UintLt => UintGt,
                UintLe => UintGe,
                UintGt => UintLt,
                _ => UintLe,
            };
            Step::Next(Op::new(flipped, &[b.unwrap(), a.unwrap()]))
        }
        (IntNeg | IntInvert | FloatNeg, _) => match inner(o, a.unwrap(), op.opcode) {
            Some((x, None)) => Step::Replace(x),
            _ => Step::Next(op),
        },
        (SameAsI | SameAsF | SameAsR, _) => Step::Replace(a.unwrap()),
        (IntIsTrue, _) if is_bool(o, a.unwrap()) => Step::Replace(a.unwrap()),
        (FloatToBits | FloatFromBits | CastPtrToInt | CastIntToPtr, _) => {
            let undo = match op.opcode {
                FloatToBits => FloatFromBits,
                FloatFromBits => FloatToBits,
                CastPtrToInt => CastIntToPtr,
                _ => CastPtrToInt,
            };
            match inner(o, a.unwrap(), undo) {
                Some((x, None)) => Step::Replace(x),
                _ => Step::Next(op),
            }
        }
        (IntSignext, Some(n)) => match o.producer(a.unwrap()) {
            Some(p) if p.opcode == IntSignext && p.args[1] == op.args[1] => {
                Step::Replace(a.unwrap())
            }
            _ if n == 8 => Step::Replace(a.unwrap()),
            _ => Step::Next(op),
        },
        (QuasiimmutField, _) => {
            if let Some(Value::Ref(addr)) = consts[0] {
                let name = o.out.get_descr(op.descr.expect("verified")).name.clone();
                o.report.quasi_immutable.push((addr, name));
            }
            Step::Remove
        }
        (GetfieldI | GetfieldF | GetfieldR, _) => fold_constant_load(o, op, consts[0]),
        _ => Step::Next(op),
    }
}

/// If `v` is produced by `opcode`, its first argument and, if its second is a constant, that.
fn inner(o: &mut Optimizer, v: OpRef, opcode: Opcode) -> Option<(OpRef, Option<i64>)> {
    let p = o.producer(v)?;
    if p.opcode != opcode {
        return None;
    }
    let x = p.args[0];
    let c = p.args.get(1).copied();
    let c = match c {
        Some(c) => Some(o.const_value(c)?.bits() as i64),
        None => None,
    };
    Some((x, c))
}

/// Whether `v` is known to be 0 or 1 (the result of a comparison).
pub fn is_bool(o: &mut Optimizer, v: OpRef) -> bool {
    if let Some(c) = o.const_value(v) {
        return matches!(c, Value::Int(0 | 1));
    }
    o.producer(v).is_some_and(|p| p.opcode.is_comparison())
}

/// A load of an immutable (or quasi-immutable, already recorded) field of a constant object
/// reads memory now.
fn fold_constant_load(o: &mut Optimizer, op: Op, obj: Option<Value>) -> Step {
    let Some(Value::Ref(addr)) = obj else {
        return Step::Next(op);
    };
    if addr == 0 {
        return Step::Next(op);
    }
    let d = o.out.get_descr(op.descr.expect("verified"));
    let DescrKind::Field(f) = &d.kind else {
        return Step::Next(op);
    };
    let recorded = f.quasi_immutable
        && o.report
            .quasi_immutable
            .iter()
            .any(|q| q.0 == addr && q.1 == d.name);
    if !(f.immutable || recorded) {
        return Step::Next(op);
    }
    let v = crate::interp::load(addr + f.offset as usize, f.size, f.signed, op.ty());
    Step::Replace(o.out.constant(v))
}
