//! Address folding, before code generation: a load or store whose object is
//! `cast_int_to_ptr(x + c)` (`c` a constant) addresses `[x + c + offset]` itself, so the
//! addition and the cast are not compiled when nothing else reads them. An interpreter that
//! keeps its registers in a window of a `Vec` (`stack[base + a]`, which the optimizer writes
//! `(ptr + (base << 4)) + 16a`) then holds one base register for all its slots instead of one
//! pointer per slot, each spilled and reloaded when the slots outnumber the registers.
//!
//! The memory op reads `x`, an integer, where it read a reference, and its displacement grows
//! by `c`: the backend's copy of the trace says so ([`Folded`]); ops keep their indices, so
//! resume data, exits and bridges see the trace they were given.
//!
//! The collector finds compiled code's references conservatively (`crate::gc::compiled`): a
//! word that points into an object's cell keeps it. The address `x + c` points into the cell
//! that the memory op touches; `x` alone may not (the optimizer moved `c` out of `x`). So a
//! cast folds only where no collection can happen while it would be live (its live range
//! crosses no call or allocation), or where `x` is a reference's own address
//! (`cast_ptr_to_int(p)`, which `p` keeps pointing into its object) or `c` is 0.
//!
//! Knows the IR and liveness, not registers or instructions.

use super::liveness;
use crate::ir::{Opcode, Trace};

/// The trace the backend compiles after folding, with what changed.
pub(crate) struct Folded {
    /// The trace, memory ops reading their folded base.
    pub trace: Trace,
    /// For each op, the bytes added to its displacement (0 for most).
    pub disp: Vec<i64>,
    /// Ops not to compile: casts and additions that only folded addresses read.
    pub skip: Vec<bool>,
}

/// Whether `op` is a field or item access with its object first.
fn is_access(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        GetfieldI
            | GetfieldF
            | GetfieldR
            | Setfield
            | GetarrayitemI
            | GetarrayitemF
            | GetarrayitemR
            | Setarrayitem
    )
}

/// How many times each op's value is read: as an argument, or by a guard's resume data.
fn reads(t: &Trace) -> Vec<u32> {
    let mut n = vec![0u32; t.ops.len()];
    for op in &t.ops {
        for a in op.args.iter().filter(|a| a.is_op()) {
            n[a.index()] += 1;
        }
        if let Some(r) = &op.resume {
            for a in r.live_ops() {
                n[a.index()] += 1;
            }
        }
    }
    n
}

/// Folds the addresses of `t` (see the module doc); `None` when none folds.
pub(crate) fn fold(t: &Trace) -> Option<Folded> {
    let n = t.ops.len();
    if !t.ops.iter().any(|op| op.opcode == Opcode::CastIntToPtr) {
        return None;
    }
    // Each value's reads, and those that are the object of an access.
    let uses = reads(t);
    let mut as_object = vec![0u32; n];
    for op in t.ops.iter().filter(|op| is_access(op.opcode)) {
        if op.args[0].is_op() {
            as_object[op.args[0].index()] += 1;
        }
    }
    let live = liveness::analyze(t);
    let label = t.label();
    let label_args: Vec<usize> = label
        .map(|l| t.ops[l].args.iter().filter(|a| a.is_op()).map(|a| a.index()).collect())
        .unwrap_or_default();
    // The casts that fold: cast -> (base, displacement).
    let mut folds: Vec<Option<(crate::ir::OpRef, i64)>> = vec![None; n];
    let mut any = false;
    for (i, op) in t.ops.iter().enumerate() {
        if op.opcode != Opcode::CastIntToPtr || uses[i] == 0 || uses[i] != as_object[i] {
            continue;
        }
        let a = op.args[0];
        if !a.is_op() {
            continue;
        }
        let add = &t.ops[a.index()];
        // The base, the displacement, and where the base's value is read: at the addition,
        // or at the cast when there is none.
        let (x, c, read_at) =
            match (add.opcode, add.args.get(1).and_then(|&k| t.const_value(k))) {
                (Opcode::IntAdd, Some(k)) if add.args[0].is_op() => {
                    (add.args[0], k.bits() as i64, a.index())
                }
                _ => (a, 0, i),
            };
        if i32::try_from(c).is_err() {
            continue;
        }
        let x_is_ptr = t.ops[x.index()].opcode == Opcode::CastPtrToInt;
        if c != 0 && !x_is_ptr && live.crosses_call[i] {
            continue;
        }
        // Before a loop's label, a label argument means its first value; after it, the
        // current one: an address read from a label argument before the label folds only if
        // it is used before the label too.
        if let Some(l) = label {
            if read_at < l && label_args.contains(&x.index()) && live.last_use[i] as usize > l {
                continue;
            }
        }
        folds[i] = Some((x, c));
        any = true;
    }
    if !any {
        return None;
    }
    let mut trace = t.clone();
    let mut disp = vec![0i64; n];
    let mut skip = vec![false; n];
    for (j, op) in trace.ops.iter_mut().enumerate() {
        if !is_access(op.opcode) || !op.args[0].is_op() {
            continue;
        }
        if let Some((x, c)) = folds[op.args[0].index()] {
            op.args[0] = x;
            disp[j] = c;
        }
    }
    // The folded casts are read no more; neither is an addition only they read.
    for (i, f) in folds.iter().enumerate() {
        if f.is_some() {
            skip[i] = true;
            trace.ops[i].args.clear();
        }
    }
    let read = reads(&trace);
    for (i, f) in folds.iter().enumerate() {
        let a = match f {
            Some(_) => t.ops[i].args[0],
            None => continue,
        };
        if read[a.index()] == 0 && t.ops[a.index()].opcode == Opcode::IntAdd {
            skip[a.index()] = true;
            trace.ops[a.index()].args.clear();
        }
    }
    Some(Folded { trace, disp, skip })
}

#[cfg(test)]
mod tests {
    use super::fold;
    use crate::ir::parse::parse_with;
    use crate::ir::parse::Env;

    const HEAD: &str = "descr fl = field(offset=0, size=8, kind=f)
descr escape = call(args=i, ret=n, reads=*, writes=*)
";

    /// Two slots of a register window, `(b + (i << 4)) + 32` and `+ 48`, stored into (with
    /// `between` in between): which ops fold, and the displacements.
    fn slots(between: &str) -> super::Folded {
        let env = Env::new().func("escape", 0x1000);
        let t = parse_with(
            &format!(
                "{HEAD}[p0, i0, f1]
i2 = cast_ptr_to_int(p0)
i3 = int_lshift(i0, 4)
i4 = int_add(i2, i3)
i5 = int_add(i4, 32)
p6 = cast_int_to_ptr(i5)
setfield(p6, f1, descr=fl)
{between}i7 = int_add(i4, 48)
p8 = cast_int_to_ptr(i7)
setfield(p8, f1, descr=fl)
setfield(p6, f1, descr=fl)
finish()"
            ),
            &env,
        )
        .unwrap();
        fold(&t).expect("folds")
    }

    #[test]
    fn window_slots_address_one_base_at_displacements() {
        let f = slots("");
        let stores: Vec<usize> = (0..f.trace.ops.len())
            .filter(|&i| f.trace.ops[i].opcode == crate::ir::Opcode::Setfield)
            .collect();
        for &s in &stores {
            assert_eq!(f.trace.ops[s].args[0].index(), 5, "the store reads the base i4 (op 5)");
        }
        let disps: Vec<i64> = stores.iter().map(|&s| f.disp[s]).collect();
        assert_eq!(disps, [32, 48, 32]);
        // The two additions of a constant (i5, i7) and the two casts (p6, p8) are not
        // compiled; the base is (ops are numbered from the inputs: i2 is op 3).
        let skipped: Vec<usize> = (0..f.skip.len()).filter(|&i| f.skip[i]).collect();
        assert_eq!(skipped, [6, 7, 9, 10]);
    }

    #[test]
    fn a_derived_base_does_not_fold_across_a_call() {
        // `p6` lives across the call: its base `i4` may point outside the object `p6` points
        // into, which a collection in the call must keep; `p8` is made after the call and
        // folds.
        let f = slots("call_n(ConstFn(escape), 1, descr=escape)\n");
        let skipped: Vec<usize> = (0..f.skip.len()).filter(|&i| f.skip[i]).collect();
        assert_eq!(skipped, [10, 11], "only i7 and p8 (after the call, op 9)");
    }

    #[test]
    fn an_address_of_a_label_arguments_first_value_does_not_fold_into_the_loop() {
        // `p3` is made before the label from `i0`'s first value and read in the loop, where
        // `i0` names the current value: `[i0 + 8]` there would read another slot.
        // The same with the cast in the loop and the addition before the label.
        for (before, after) in [
            ("i2 = int_add(i0, 8)\np3 = cast_int_to_ptr(i2)\n", ""),
            ("i2 = int_add(i0, 8)\n", "p3 = cast_int_to_ptr(i2)\n"),
        ] {
            let text = format!(
                "descr x = field(offset=0, size=8, kind=i, signed)
[i0, i1]
{before}label(i0, i1)
{after}i4 = getfield_i(p3, descr=x)
i5 = int_add(i0, 16)
i6 = int_add(i1, i4)
jump(i5, i6)"
            );
            let t = parse_with(&text, &Env::new()).unwrap();
            assert!(fold(&t).is_none(), "{text}");
        }
    }

    #[test]
    fn a_cast_read_as_a_value_does_not_fold() {
        let env = Env::new();
        let t = parse_with(
            "descr r = field(offset=8, size=8, kind=p)
[p0, i0]
i1 = int_add(i0, 16)
p2 = cast_int_to_ptr(i1)
setfield(p0, p2, descr=r)
setfield(p2, p2, descr=r)
finish()",
            &env,
        )
        .unwrap();
        assert!(fold(&t).is_none());
    }
}
