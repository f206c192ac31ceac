//! Integer bounds (RPython's `intbounds`, in a small form): what the trace knows of the range
//! of integer values, and of which values are below which, decides comparisons, so that the
//! guards on them go.
//!
//! A value's range comes from its producer (a constant, `x & c`, a narrow load, a comparison,
//! `x + c` without overflow, a remainder, a shift by a constant, a product that cannot
//! overflow) and from the guards that passed on comparisons with constants
//! (after `guard_false(int_lt(x, 0))`, `x >= 0`); what is learnt of `x + c` is learnt of `x`
//! too. Relations come from guards on unsigned comparisons: after `x + c <u n` passed, with
//! `x + c >= 0`, every `x + d` with `0 <= x + d` and `d <= c` is below `n` too (a bounds check
//! of the largest offset covers the smaller ones).
//!
//! Facts are about values; at a loop's label the loop-carried values get new meanings, and
//! what was known of them is forgotten ([`forget`]). Their ranges are then *assumed*
//! ([`assume_at_label`]): each loop-carried value keeps the range its first value had at the
//! label, and the loop's `jump` must show that the value it passes back lies in that range too
//! ([`check_at_jump`]). Then the range holds on every iteration, by induction. When the jump
//! cannot show it, the loop is optimized again without that assumption ([`Facts::broken`]),
//! as the heap cache does for what it imports (RPython keeps integer bounds in the loop's
//! virtual state for the same purpose).
//!
//! Bounds checks are assumed at the label the same way ([`below_at_label`]): a loop-carried
//! index known below a value from before the label (a length, which cannot change: it is
//! not a loop variable) keeps that relation in the loop if the `jump` shows it of the index
//! it passes back. A loop that walks an array and checks each next index before the `jump`
//! then does not check it again after the label.
//!
//! Owns: ranges and relations of integers. Must not know: memory, guests.

use super::{Optimizer, Step};
use crate::ir::{Op, OpRef, Opcode, Value};
use hashbrown::HashMap;

/// What guards established about integers.
#[derive(Default, Clone)]
pub struct Facts {
    /// Ranges learnt from guards, by value.
    ranges: HashMap<OpRef, (i64, i64)>,
    /// `(x, n) -> c`: `x + c <u n` is known, and `x + c >= 0`.
    below: HashMap<(OpRef, OpRef), i64>,
    /// The ranges assumed at the label: (position among the label's arguments, its range).
    assumed: Vec<(usize, (i64, i64))>,
    /// The bounds checks assumed at the label: `(k, n, e)` for `arg_k + e <u n` with
    /// `arg_k + e >= 0`, `n` a value from before the label (see [`below_at_label`]).
    assumed_below: Vec<(usize, OpRef, i64)>,
    /// Positions of label arguments whose range is not assumed (set by the caller between
    /// rounds); [`BELOW`] plus a position: its bounds checks are not assumed.
    pub banned: hashbrown::HashSet<usize>,
    /// Positions whose assumed range the `jump` did not keep, and [`BELOW`] plus positions
    /// whose assumed bounds checks it did not show: optimize again with them banned.
    pub broken: Vec<usize>,
}

/// Added to a label position in [`Facts::banned`] and [`Facts::broken`]: the bounds checks
/// of that position (not its range) are meant. Keeps a range that holds assumed when a
/// bounds check does not.
pub const BELOW: usize = 1 << 40;

const FULL: (i64, i64) = (i64::MIN, i64::MAX);

/// The range of an integer value.
pub fn range(o: &mut Optimizer, v: OpRef) -> (i64, i64) {
    range_at(o, v, 4)
}

fn range_at(o: &mut Optimizer, v: OpRef, depth: u32) -> (i64, i64) {
    if let Some(Value::Int(c)) = o.const_value(v) {
        return (c, c);
    }
    let v = o.find(v);
    let learnt = o.bounds.ranges.get(&v).copied().unwrap_or(FULL);
    let from_producer = if depth == 0 {
        FULL
    } else {
        producer_range(o, v, depth - 1)
    };
    intersect(learnt, from_producer)
}

fn intersect(a: (i64, i64), b: (i64, i64)) -> (i64, i64) {
    (a.0.max(b.0), a.1.min(b.1))
}

fn producer_range(o: &mut Optimizer, v: OpRef, depth: u32) -> (i64, i64) {
    use Opcode::*;
    let Some(p) = o.producer(v) else {
        return FULL;
    };
    let (opcode, descr) = (p.opcode, p.descr);
    let arg = |k: usize| p.args.get(k).copied().unwrap_or(OpRef::constant(0));
    let args = [arg(0), arg(1)];
    if opcode.is_comparison() {
        return (0, 1);
    }
    match opcode {
        IntAnd => {
            let (a, b) = (range_at(o, args[0], depth), range_at(o, args[1], depth));
            match (a.0 >= 0, b.0 >= 0) {
                (true, true) => (0, a.1.min(b.1)),
                (true, false) => (0, a.1),
                (false, true) => (0, b.1),
                _ => FULL,
            }
        }
        IntAdd | IntSub => {
            let (a, b) = (range_at(o, args[0], depth), range_at(o, args[1], depth));
            add_or_sub(opcode == IntAdd, a, b).unwrap_or(FULL)
        }
        IntAddOvf | IntSubOvf
            if o.out.ops.get(v.index() + 1).map(|g| g.opcode) == Some(GuardNoOverflow) =>
        {
            // Its `guard_no_overflow` passed (or the code after it never runs): the true
            // result, which lies in the sum of the ranges clipped to what an i64 holds. (After
            // a `guard_overflow` the value wrapped: nothing is known.)
            let (a, b) = (range_at(o, args[0], depth), range_at(o, args[1], depth));
            if opcode == IntAddOvf {
                (a.0.saturating_add(b.0), a.1.saturating_add(b.1))
            } else {
                (a.0.saturating_sub(b.1), a.1.saturating_sub(b.0))
            }
        }
        UintMod | IntMod => {
            let (a, b) = (range_at(o, args[0], depth), range_at(o, args[1], depth));
            remainder_range(opcode == UintMod, a, b)
        }
        IntLshift | IntRshift | UintRshift => {
            let (a, b) = (range_at(o, args[0], depth), range_at(o, args[1], depth));
            shift_range(opcode, a, b)
        }
        IntMul => {
            let (a, b) = (range_at(o, args[0], depth), range_at(o, args[1], depth));
            product_range(a, b).unwrap_or(FULL)
        }
        GetfieldI | GetarrayitemI => {
            let d = o.out.get_descr(descr.expect("verified"));
            let (size, signed) = match (d.field(), d.array()) {
                (Some(f), _) if f.length => return (0, crate::ir::LENGTH_MAX),
                (Some(f), _) => (f.size, f.signed),
                (_, Some(a)) => (a.item_size, a.signed),
                _ => return FULL,
            };
            if size >= 8 {
                FULL
            } else if signed {
                let h = 1i64 << (8 * size - 1);
                (-h, h - 1)
            } else {
                (0, (1i64 << (8 * size)) - 1)
            }
        }
        _ => FULL,
    }
}

/// Whether `a <u b` is known.
fn known_below(o: &mut Optimizer, a: OpRef, b: OpRef) -> bool {
    let (ra, rb) = (range(o, a), range(o, b));
    if ra.0 >= 0 && rb.0 >= 0 && ra.1 < rb.0 {
        return true;
    }
    let (x, d) = o.offset_parts(a);
    let n = o.find(b);
    match o.bounds.below.get(&(x, n)).copied() {
        Some(c) => {
            let rx = range(o, x);
            d <= c && rx.0.checked_add(d).is_some_and(|lo| lo >= 0)
        }
        None => false,
    }
}

/// Decides a comparison from ranges and relations: `Some(true/false)` if known.
fn decide(o: &mut Optimizer, opcode: Opcode, a: OpRef, b: OpRef) -> Option<bool> {
    use Opcode::*;
    let (ra, rb) = (range(o, a), range(o, b));
    let signed = |lt: bool, le: bool| -> Option<bool> {
        // a < b (lt) or a <= b (le) by ranges.
        if lt {
            if ra.1 < rb.0 {
                Some(true)
            } else if ra.0 >= rb.1 {
                Some(false)
            } else {
                None
            }
        } else if le {
            if ra.1 <= rb.0 {
                Some(true)
            } else if ra.0 > rb.1 {
                Some(false)
            } else {
                None
            }
        } else {
            None
        }
    };
    match opcode {
        IntLt => signed(true, false),
        IntLe => signed(false, true),
        IntGt => decide(o, IntLt, b, a),
        IntGe => decide(o, IntLe, b, a),
        IntEq | IntNe => {
            let apart = ra.1 < rb.0 || rb.1 < ra.0;
            apart.then_some(opcode == IntNe)
        }
        UintLt => known_below(o, a, b).then_some(true).or_else(|| {
            let nonneg = ra.0 >= 0 && rb.0 >= 0;
            nonneg.then(|| signed(true, false)).flatten()
        }),
        UintGe => decide(o, UintLt, a, b).map(|t| !t),
        UintGt => decide(o, UintLt, b, a),
        UintLe => decide(o, UintGt, a, b).map(|t| !t),
        _ => None,
    }
}

/// The bounds stage: a comparison the facts decide becomes a constant.
pub fn optimize(o: &mut Optimizer, op: Op) -> Step {
    let assumes = !o.bounds.assumed.is_empty() || !o.bounds.assumed_below.is_empty();
    if op.opcode == Opcode::Jump && op.descr.is_none() && assumes {
        check_at_jump(o, &op.args);
        return Step::Next(op);
    }
    if !op.opcode.is_comparison() || op.args.len() != 2 {
        return Step::Next(op);
    }
    if o.type_of(op.args[0]) != crate::ir::Type::Int {
        return Step::Next(op);
    }
    match decide(o, op.opcode, op.args[0], op.args[1]) {
        Some(t) => Step::Replace(o.out.int(i64::from(t))),
        None => Step::Next(op),
    }
}

/// Learns from an emitted guard on a comparison (called before the guard stage makes the
/// comparison a constant).
pub fn emitted(o: &mut Optimizer, r: OpRef) {
    use Opcode::*;
    let op = &o.out.ops[r.index()];
    let holds = match op.opcode {
        GuardTrue => true,
        GuardFalse => false,
        _ => return,
    };
    let c = op.args[0];
    let Some(p) = o.producer(c) else {
        return;
    };
    if p.args.len() != 2 || !p.opcode.is_comparison() {
        return;
    }
    let (opcode, a, b) = (p.opcode, p.args[0], p.args[1]);
    if o.type_of(a) != crate::ir::Type::Int {
        return;
    }
    // Normalize to a true `a OP b`.
    let opcode = if holds {
        opcode
    } else {
        match opcode.negated() {
            Some(n) => n,
            None => return,
        }
    };
    learn(o, opcode, a, b);
}

fn learn(o: &mut Optimizer, opcode: Opcode, a: OpRef, b: OpRef) {
    use Opcode::*;
    let (ra, rb) = (range(o, a), range(o, b));
    match opcode {
        IntLt => {
            // a < b: a <= b.hi - 1, b >= a.lo + 1
            if let Some(hi) = rb.1.checked_sub(1) {
                narrow(o, a, (i64::MIN, hi));
            }
            if let Some(lo) = ra.0.checked_add(1) {
                narrow(o, b, (lo, i64::MAX));
            }
        }
        IntLe => {
            narrow(o, a, (i64::MIN, rb.1));
            narrow(o, b, (ra.0, i64::MAX));
        }
        IntGt => learn(o, IntLt, b, a),
        IntGe => learn(o, IntLe, b, a),
        IntEq => {
            narrow(o, a, rb);
            narrow(o, b, ra);
        }
        UintLt => {
            // a <u b with b >= 0 (as signed): 0 <= a < b.
            if rb.0 >= 0 {
                narrow(o, a, (0, rb.1.saturating_sub(1)));
            }
            // The relation holds of the true sums if `x + c` did not wrap: `x + c >= 0`.
            let (x, c) = o.offset_parts(a);
            let n = o.find(b);
            let rx = range(o, x);
            if rx.0.checked_add(c).is_some_and(|lo| lo >= 0) {
                let e = o.bounds.below.entry((x, n)).or_insert(c);
                *e = (*e).max(c);
            }
        }
        UintGt => learn(o, UintLt, b, a),
        _ => {}
    }
}

/// `v` is in `r`; so is `x` in `r - c` if `v` is `x + c` (when `r - c` does not overflow,
/// `x` is `v - c` exactly), `r` first cut to what `x + c` reaches when that cannot wrap.
fn narrow(o: &mut Optimizer, v: OpRef, r: (i64, i64)) {
    if o.const_value(v).is_some() {
        return;
    }
    let v = o.find(v);
    let now = o.bounds.ranges.get(&v).copied().unwrap_or(FULL);
    o.bounds.ranges.insert(v, intersect(now, r));
    let (x, c) = o.offset_parts(v);
    if x != v && r != FULL && o.const_value(x).is_none() {
        // When `x + c` cannot wrap by `x`'s range, `v` is the true sum: only the part of `r`
        // that `x + c` reaches matters (`v >= 0` after `v = x - 3` with `x` in
        // `[0, 2^57]` says `x >= 3` although `i64::MAX + 3` overflows).
        let reach = add_or_sub(true, range(o, x), (c, c));
        let r = reach.map_or(r, |s| intersect(r, s));
        if let (Some(lo), Some(hi)) = (r.0.checked_sub(c), r.1.checked_sub(c)) {
            if lo <= hi {
                let now = o.bounds.ranges.get(&x).copied().unwrap_or(FULL);
                o.bounds.ranges.insert(x, intersect(now, (lo, hi)));
            }
        }
    }
}

/// At a loop's label, before [`forget`]: the bounds checks known of the loop-carried
/// `values` (the label's arguments, a `same_as` box seen through) on entering the loop, as
/// `(k, n, e)`: `values[k] + e <u n` and `values[k] + e >= 0` (true sums), where `n` is not
/// negative, not a constant (ranges cover those) and not a loop-carried value. For
/// [`assume_at_label`].
pub fn below_at_label(o: &mut Optimizer, values: &[OpRef]) -> Vec<(usize, OpRef, i64)> {
    let mut out = Vec::new();
    let carried: hashbrown::HashSet<OpRef> = values.iter().map(|&v| o.find(v)).collect();
    for (k, &v) in values.iter().enumerate() {
        if !v.is_op() || o.type_of(v) != crate::ir::Type::Int {
            continue;
        }
        let v = match o.producer(v) {
            Some(p) if p.opcode == Opcode::SameAsI => p.args[0],
            _ => v,
        };
        let (x, d) = o.offset_parts(v);
        let known: Vec<(OpRef, i64)> = o
            .bounds
            .below
            .iter()
            .filter(|((y, n), _)| *y == x && n.is_op() && !carried.contains(n))
            .map(|(&(_, n), &c)| (n, c))
            .collect();
        for (n, c) in known {
            // `v` is `x + d` as a true sum when `x + d >= 0` and `x + d <= x + c < n`;
            // `n >= 0` rules out a wrapped `x + c` (it would be negative, not below `n`).
            let no_wrap = range(o, x).0.checked_add(d).is_some_and(|lo| lo >= 0);
            if d <= c && no_wrap && range(o, n).0 >= 0 {
                out.push((k, n, c - d));
            }
        }
    }
    out
}

/// At a loop's label, after [`forget`]: the loop-carried `values` (the label's first
/// arguments, in order) get the ranges `first` their values had on entering the loop (the
/// full range for what is not an integer), and the bounds checks `below` they passed (see
/// [`below_at_label`]), except those banned.
pub fn assume_at_label(
    o: &mut Optimizer,
    values: &[OpRef],
    first: &[(i64, i64)],
    below: Vec<(usize, OpRef, i64)>,
) {
    for (k, (&v, &r)) in values.iter().zip(first).enumerate() {
        if r == FULL || o.bounds.banned.contains(&k) {
            continue;
        }
        o.bounds.ranges.insert(v, r);
        o.bounds.assumed.push((k, r));
    }
    for (k, n, e) in below {
        if o.bounds.banned.contains(&(BELOW + k)) {
            continue;
        }
        let v = o.find(values[k]);
        let slot = o.bounds.below.entry((v, n)).or_insert(e);
        *slot = (*slot).min(e);
        o.bounds.assumed_below.push((k, n, e));
    }
}

/// At the loop's `jump` with `args`: every assumed range must hold of the value passed back,
/// and every assumed bounds check (`arg + e <u n`, `arg + e >= 0`) too.
pub fn check_at_jump(o: &mut Optimizer, args: &[OpRef]) {
    let assumed = std::mem::take(&mut o.bounds.assumed);
    for (k, r) in assumed {
        let now = args.get(k).map_or(FULL, |&a| range(o, a));
        if now.0 < r.0 || now.1 > r.1 {
            o.bounds.broken.push(k);
        }
    }
    let assumed = std::mem::take(&mut o.bounds.assumed_below);
    for (k, n, e) in assumed {
        let holds = args.get(k).is_some_and(|&a| {
            // By ranges (a constant length), or by a bounds check in the loop.
            let (ra, rn) = (range(o, a), range(o, n));
            let by_range = ra.0.checked_add(e).is_some_and(|lo| lo >= 0)
                && ra.1.checked_add(e).is_some_and(|hi| hi < rn.0);
            if by_range {
                return true;
            }
            let (x, d) = o.offset_parts(a);
            let Some(de) = d.checked_add(e) else {
                return false;
            };
            let n = o.find(n);
            let c = o.bounds.below.get(&(x, n)).copied();
            c.is_some_and(|c| de <= c)
                && range(o, x).0.checked_add(de).is_some_and(|lo| lo >= 0)
        });
        if !holds && !o.bounds.broken.contains(&(BELOW + k)) {
            o.bounds.broken.push(BELOW + k);
        }
    }
}

/// At a loop's label: forgets what is known of the loop-carried `values`.
pub fn forget(o: &mut Optimizer, values: &hashbrown::HashSet<OpRef>) {
    o.bounds.ranges.retain(|v, _| !values.contains(v));
    o.bounds
        .below
        .retain(|(x, n), _| !values.contains(x) && !values.contains(n));
}

/// Whether `a + b` (`add`) or `a - b` cannot overflow, by the ranges.
pub fn cannot_overflow(o: &mut Optimizer, add: bool, a: OpRef, b: OpRef) -> bool {
    let (ra, rb) = (range(o, a), range(o, b));
    add_or_sub(add, ra, rb).is_some()
}

/// The range of `a + b` (`add`) or `a - b` for values in ranges `a` and `b`; `None` if some
/// of them overflow.
/// The range of `a % b` (`unsigned`: both read as `u64`), where `b == 0` gives 0: below a
/// divisor known to be in `[0, hi]`, and within `[0, a]` for a dividend known not negative.
fn remainder_range(unsigned: bool, a: (i64, i64), b: (i64, i64)) -> (i64, i64) {
    // A divisor in [0, hi]: the remainder is below it, or 0 when it is 0.
    let by_divisor = (b.0 >= 0).then(|| (0, (b.1 - 1).max(0)));
    // A dividend in [0, hi] is at least its remainder (signed: the remainder has the
    // dividend's sign; unsigned: both are below 2^63).
    let by_dividend = (a.0 >= 0).then_some((0, a.1));
    match (by_divisor, by_dividend) {
        // A signed remainder of a negative dividend is negative: the divisor alone says
        // nothing of its sign.
        (Some(d), None) if !unsigned => (-d.1, d.1),
        (Some(d), None) => d,
        (None, Some(a)) => a,
        (Some(d), Some(a)) => intersect(d, a),
        (None, None) => FULL,
    }
}

/// The range of a shift of `a` by `b` (the amount taken modulo 64), when `b` is known.
fn shift_range(opcode: Opcode, a: (i64, i64), b: (i64, i64)) -> (i64, i64) {
    if b.0 != b.1 {
        return FULL;
    }
    let s = (b.0 & 63) as u32;
    match opcode {
        // A left shift that overflows nothing multiplies by 2^s, which keeps the order.
        Opcode::IntLshift if a.0 >= (i64::MIN >> s) && a.1 <= (i64::MAX >> s) => {
            (a.0 << s, a.1 << s)
        }
        Opcode::IntRshift => (a.0 >> s, a.1 >> s),
        Opcode::UintRshift if a.0 >= 0 => (a.0 >> s, a.1 >> s),
        Opcode::UintRshift if s > 0 => (0, (u64::MAX >> s) as i64),
        _ => FULL,
    }
}

/// The range of `a * b` when no product of the ranges overflows (the wrapping product is then
/// the true one, whose extremes are products of the ends).
fn product_range(a: (i64, i64), b: (i64, i64)) -> Option<(i64, i64)> {
    let c = [
        a.0.checked_mul(b.0)?,
        a.0.checked_mul(b.1)?,
        a.1.checked_mul(b.0)?,
        a.1.checked_mul(b.1)?,
    ];
    Some((*c.iter().min()?, *c.iter().max()?))
}

fn add_or_sub(add: bool, a: (i64, i64), b: (i64, i64)) -> Option<(i64, i64)> {
    if add {
        Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?))
    } else {
        Some((a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?))
    }
}

#[cfg(test)]
mod tests {
    use crate::interp::{Outcome, Run};
    use crate::ir::parse::parse;
    use crate::ir::print::print;
    use crate::ir::Value;
    use crate::opt::{optimize_with_report, Options};

    /// Optimizes `input`, compares it with `expected` (modulo renaming) and runs both on a few
    /// inputs in the reference interpreter, which must end the same way.
    fn check(input: &str, expected: &str) {
        let t = parse(input).unwrap_or_else(|e| panic!("{e}\n{input}"));
        let want = parse(expected).unwrap_or_else(|e| panic!("{e}\n{expected}"));
        let (got, _) = optimize_with_report(&t, &Options::all());
        assert_eq!(print(&got), print(&want), "\ninput:\n{input}\n");
        let run = Run {
            max_iterations: 100,
            ..Run::default()
        };
        for (i, n) in [(0, 0), (0, 5), (3, 5), (4, 5), (-1, 5), (7, -3), (i64::MAX, 9)] {
            let inputs = [Value::Int(i), Value::Int(n)];
            // A failed guard by its id and saved values (its op's position differs).
            let end = |o: Outcome| match o {
                Outcome::GuardFailed { id, saved, .. } => format!("guard {id} {saved:?}"),
                other => format!("{other:?}"),
            };
            let a = end(run.run(&t, &inputs).unwrap());
            let b = end(run.run(&got, &inputs).unwrap());
            assert_eq!(a, b, "inputs {inputs:?}");
        }
    }

    /// A loop walking an index up to a length (`i1`, not negative): the index is checked on
    /// entry, and each next index before the `jump`.
    const WALK: &str = "[i0, i1]
i2 = int_lt(i1, 0)
guard_false(i2) [i0]
i3 = uint_lt(i0, i1)
guard_true(i3) [i0]
label(i0)
i4 = uint_lt(i0, i1)
guard_true(i4) [i0]
i5 = int_add(i0, STEP)
i6 = uint_lt(CHECKED, i1)
guard_true(i6) [i5]
jump(i5)";

    #[test]
    fn a_position_left_of_a_checked_one_needs_only_its_sign_check() {
        // `i0 <u i1` passed, so `i0` lies in [0, i1); `i0 - 3 >= 0` then says `i0 >= 3`
        // (the part of [0, i64::MAX] that `i0 - 3` reaches), and `i0 - 3 <u i1` follows from
        // the first check: it goes. (It stayed: `i64::MAX + 3` overflows, and `i0` learnt
        // nothing from the sign check.)
        let input = "[i0, i1]
i2 = int_lt(i1, 0)
guard_false(i2) [i0]
i3 = uint_lt(i0, i1)
guard_true(i3) [i0]
i4 = int_add(i0, -3)
i5 = int_lt(i4, 0)
guard_false(i5) [i4]
i6 = uint_ge(i4, i1)
guard_false(i6) [i4]
finish(i4)";
        let expected = "[i0, i1]
i2 = int_lt(i1, 0)
guard_false(i2) [i0]
i3 = uint_lt(i0, i1)
guard_true(i3) [i0]
i4 = int_add(i0, -3)
i5 = int_lt(i4, 0)
guard_false(i5) [i4]
finish(i4)";
        check(input, expected);
    }

    #[test]
    fn a_position_left_of_an_unchecked_one_keeps_its_check() {
        // Without the first check nothing bounds `i0` from above: both checks stay.
        let input = "[i0, i1]
i2 = int_lt(i1, 0)
guard_false(i2) [i0]
i4 = int_add(i0, -3)
i5 = int_lt(i4, 0)
guard_false(i5) [i4]
i6 = uint_ge(i4, i1)
guard_false(i6) [i4]
finish(i4)";
        check(input, input);
    }

    #[test]
    fn a_bounds_check_the_jump_shows_holds_after_the_label() {
        // The check of the next index before the `jump` is the check of the index at the
        // label on the next iteration: it goes (it was the only check left there after the
        // loop variable's range was assumed).
        let input = WALK.replace("STEP", "1").replace("CHECKED", "i5");
        let expected = "[i0, i1]
i2 = int_lt(i1, 0)
guard_false(i2) [i0]
i3 = uint_lt(i0, i1)
guard_true(i3) [i0]
label(i0)
i4 = int_add(i0, 1)
i5 = uint_lt(i4, i1)
guard_true(i5) [i4]
jump(i4)";
        check(&input, expected);
    }

    #[test]
    fn a_bounds_check_the_jump_does_not_show_stays() {
        // The index steps by 2 but only `index + 1` is checked: the index passed back is not
        // known below the length, and the check after the label stays.
        let input = WALK.replace("STEP", "2").replace("CHECKED", "i7");
        let input = input.replace(
            "i6 = uint_lt(i7, i1)",
            "i7 = int_add(i0, 1)\ni6 = uint_lt(i7, i1)",
        );
        check(&input, &input);
    }
}
