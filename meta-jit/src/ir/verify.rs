//! The verifier: the invariants every trace keeps, checked after parsing, after each
//! optimization (in debug builds) and before compiling. A trace that passes can be run by the
//! reference interpreter and compiled by the backend without further checks of its shape.
//!
//! Invariants: inputs come first; every argument refers to an earlier op or a pool constant,
//! of the type the opcode asks for; descriptors are present exactly where the opcode takes
//! one and are of the right kind; an `*_ovf` op is immediately followed by `guard_no_overflow`
//! or `guard_overflow` and those guards follow nothing else; guards carry consistent resume
//! data; there is at most one `label`, whose arguments are distinct ops; the trace ends with
//! its only `jump` or `finish`, and a `jump` without a target passes values of the label's
//! (or the inputs') types; a call passes at most 6 integer-class and 8 float arguments.

use super::*;

/// A verification failure: the op index and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The op's index in the trace.
    pub op: usize,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op {}: {}", self.op, self.msg)
    }
}

/// Checks every invariant of the module doc.
pub fn verify(t: &Trace) -> Result<(), VerifyError> {
    let n = t.ops.len();
    let mut seen_label = None;
    let mut in_inputs = true;
    for (i, op) in t.ops.iter().enumerate() {
        let err = |msg: String| {
            Err(VerifyError {
                op: i,
                msg: format!("{}: {msg}", op.opcode.name()),
            })
        };
        if op.opcode.is_input() {
            if !in_inputs {
                return err("inputs must come before other ops".into());
            }
            continue;
        }
        in_inputs = false;
        // Arguments refer to earlier ops or constants.
        for &a in &op.args {
            if let Err(m) = check_ref(t, a, i) {
                return err(m);
            }
        }
        if let Err(m) = check_args(t, op) {
            return err(m);
        }
        if let Err(m) = check_descr(t, op) {
            return err(m);
        }
        // Overflow flag pairing.
        let prev_ovf = i > 0 && t.ops[i - 1].opcode.is_ovf();
        let is_ovf_guard = matches!(op.opcode, Opcode::GuardNoOverflow | Opcode::GuardOverflow);
        if is_ovf_guard != prev_ovf {
            return err("overflow guards must directly follow an *_ovf op, and vice versa".into());
        }
        if op.opcode.is_ovf() && i + 1 == n {
            return err("an *_ovf op must be followed by an overflow guard".into());
        }
        // Guards and resume data.
        match (&op.resume, op.opcode.is_guard()) {
            (Some(r), true) => {
                if let Err(m) = check_resume(t, r, i) {
                    return err(m);
                }
            }
            (None, true) => return err("a guard needs resume data".into()),
            (Some(_), false) => return err("only guards carry resume data".into()),
            (None, false) => {}
        }
        match op.opcode {
            Opcode::Label => {
                if seen_label.is_some() {
                    return err("a trace has at most one label".into());
                }
                let mut distinct = hashbrown::HashSet::with_capacity(op.args.len());
                for &a in &op.args {
                    if !a.is_op() || !distinct.insert(a) {
                        return err("label arguments must be distinct ops".into());
                    }
                }
                seen_label = Some(i);
            }
            Opcode::Jump | Opcode::Finish if i + 1 != n => {
                return err("must be the last op".into());
            }
            Opcode::Jump if op.descr.is_none() => {
                let header: Vec<Type> = match seen_label {
                    Some(l) => t.ops[l].args.iter().map(|&a| t.type_of(a)).collect(),
                    None => t.inputs().map(|a| t.type_of(a)).collect(),
                };
                let got: Vec<Type> = op.args.iter().map(|&a| t.type_of(a)).collect();
                if header != got {
                    return err(format!("passes {got:?} to a loop header of {header:?}"));
                }
            }
            _ => {}
        }
    }
    match t.ops.last() {
        Some(op) if op.opcode.flags().has(Flags::FINAL) => {}
        _ => {
            return Err(VerifyError {
                op: n,
                msg: "a trace ends with jump or finish".into(),
            })
        }
    }
    check_loop_stores(t).map_err(|msg| VerifyError { op: n - 1, msg })
}

/// A loop's pending stores ([`Trace::loop_stores`]): only after a `jump` to the trace's own
/// header, naming constants, the `jump`'s arguments, and inputs the loop does not carry (an
/// exit after the last iteration hands back the `jump`'s arguments only: a carried input's
/// value there is not among them unless the `jump` passes it).
fn check_loop_stores(t: &Trace) -> Result<(), String> {
    if t.loop_stores.is_empty() {
        return Ok(());
    }
    let last = t.ops.last().expect("checked above");
    if last.opcode != Opcode::Jump || last.descr.is_some() {
        return Err("only a jump to the trace's own header leaves stores pending".into());
    }
    // Without a label the jump goes back to the inputs: every input is carried.
    let inputs: Vec<OpRef> = t.inputs().collect();
    let carried: &[OpRef] = t.label().map_or(&inputs, |l| &t.ops[l].args);
    for st in &t.loop_stores {
        for a in st.refs() {
            let ok = a.is_const() && a.index() < t.consts.len()
                || a.is_op()
                    && (last.args.contains(&a)
                        || a.index() < t.num_inputs() && !carried.contains(&a));
            if !ok {
                return Err(format!(
                    "{a:?} in a loop's pending store is no constant, input or jump argument"
                ));
            }
        }
        check_store(t, st)?;
    }
    Ok(())
}

/// A pending store's descriptor, index and kinds.
fn check_store(t: &Trace, st: &PendingStore) -> Result<(), String> {
    let d = t
        .descrs
        .get(st.descr.0 as usize)
        .ok_or("unknown pending store descriptor")?;
    let kind = match (&d.kind, st.index) {
        (DescrKind::Field(f), None) => f.kind,
        (DescrKind::Array(a), Some(i)) if t.type_of(i) == Type::Int => a.kind,
        _ => {
            return Err(
                "a pending store is a field's (no index) or an array item's (int index)".into(),
            )
        }
    };
    if t.type_of(st.base) != Type::Ref || t.type_of(st.value) != kind {
        return Err("a pending store needs a ref base and a value of its kind".into());
    }
    Ok(())
}

fn check_ref(t: &Trace, a: OpRef, at: usize) -> Result<(), String> {
    if a.is_const() {
        if a.index() >= t.consts.len() {
            return Err(format!("constant {a:?} is not in the pool"));
        }
    } else if a.is_virtual() {
        return Err("virtuals appear only in resume data".into());
    } else if a.index() >= at {
        return Err(format!("{a:?} is used before it is defined"));
    } else if t.ops[a.index()].ty() == Type::Void {
        return Err(format!("{a:?} defines no value"));
    }
    Ok(())
}

fn type_fits(want: Type, got: Type) -> bool {
    want == got || (want == Type::Any && got != Type::Void)
}

fn check_args(t: &Trace, op: &Op) -> Result<(), String> {
    let tys: Vec<Type> = op.args.iter().map(|&a| t.type_of(a)).collect();
    match op.opcode.args() {
        Args::Fixed(want) => {
            if want.len() != tys.len() || !want.iter().zip(&tys).all(|(&w, &g)| type_fits(w, g)) {
                return Err(format!("takes {want:?}, got {tys:?}"));
            }
        }
        Args::Variadic => {}
    }
    match op.opcode {
        Opcode::GuardValue | Opcode::RecordExactValue
            if !op.args[1].is_const() || tys[0] != tys[1] =>
        {
            return Err("takes a value and a constant of its type".into());
        }
        Opcode::IntSignext => {
            let ok = t
                .const_value(op.args[1])
                .is_some_and(|v| matches!(v.int(), 1 | 2 | 4 | 8));
            if !ok {
                return Err("the byte count must be the constant 1, 2, 4 or 8".into());
            }
        }
        _ => {}
    }
    Ok(())
}

fn check_descr(t: &Trace, op: &Op) -> Result<(), String> {
    use Opcode::*;
    let wants = op.opcode.flags().has(Flags::DESCR);
    if op.descr.is_some_and(|d| d.0 as usize >= t.descrs.len()) {
        return Err("unknown descriptor".into());
    }
    let d = match (op.descr, wants) {
        (None, false) => return Ok(()),
        (Some(d), _)
            if op.opcode == Jump && matches!(t.get_descr(d).kind, DescrKind::Target(_)) =>
        {
            return Ok(())
        }
        (Some(_), false) => return Err("takes no descriptor".into()),
        (None, true) => return Err("needs a descriptor".into()),
        (Some(d), true) => d,
    };
    let descr = t.get_descr(d);
    let ty = |a: usize| t.type_of(op.args[a]);
    match op.opcode {
        GetfieldI | GetfieldF | GetfieldR | QuasiimmutField | Setfield => {
            let f = descr.field().ok_or("needs a field descriptor")?;
            let vt = if op.opcode == Setfield {
                ty(1)
            } else {
                op.ty()
            };
            if op.opcode != QuasiimmutField && vt != f.kind {
                return Err(format!("the field holds {:?}", f.kind));
            }
        }
        GetarrayitemI | GetarrayitemF | GetarrayitemR | Setarrayitem => {
            let a = descr.array().ok_or("needs an array descriptor")?;
            let vt = if op.opcode == Setarrayitem {
                ty(2)
            } else {
                op.ty()
            };
            if vt != a.kind {
                return Err(format!("the array holds {:?}", a.kind));
            }
        }
        New => {
            descr.size().ok_or("needs a size descriptor")?;
        }
        NewArray => {
            descr.array().ok_or("needs an array descriptor")?;
        }
        _ if op.opcode.is_call() || op.opcode == RecordKnownResult => {
            let c = descr.call().ok_or("needs a call descriptor")?;
            // record_known_result(res, f, args...): the result, then a call's arguments.
            let (ret, call_args) = if op.opcode == RecordKnownResult {
                if op.args.is_empty() {
                    return Err("needs a result".into());
                }
                (t.type_of(op.args[0]), &op.args[1..])
            } else {
                (op.ty(), &op.args[..])
            };
            if ret != c.ret {
                return Err(format!("the function returns {:?}", c.ret));
            }
            if call_args.is_empty() || t.type_of(call_args[0]) != Type::Ref {
                return Err("the first argument is the function".into());
            }
            let got: Vec<Type> = call_args[1..].iter().map(|&a| t.type_of(a)).collect();
            if got != c.args {
                return Err(format!("the function takes {:?}, got {got:?}", c.args));
            }
            let floats = got.iter().filter(|&&t| t == Type::Float).count();
            if got.len() - floats > 6 || floats > 8 {
                return Err("at most 6 integer-class and 8 float arguments".into());
            }
            if op.opcode.is_pure() && !c.effects.elidable {
                return Err("call_pure needs an elidable function".into());
            }
        }
        _ => return Err("unexpected descriptor".into()),
    }
    Ok(())
}

fn check_resume(t: &Trace, r: &Resume, at: usize) -> Result<(), String> {
    let total: usize = r.frames.iter().map(|f| f.len as usize).sum();
    if total != r.values.len() {
        return Err("resume frames do not cover its values".into());
    }
    for a in r.refs() {
        if a.is_virtual() {
            if a.index() >= r.virtuals.len() {
                return Err(format!("{a:?} is not described"));
            }
        } else {
            check_ref(t, a, at)?;
        }
    }
    for v in &r.virtuals {
        let d = t
            .descrs
            .get(v.descr.0 as usize)
            .ok_or("unknown virtual descriptor")?;
        match &d.kind {
            DescrKind::Size(_) => {
                for f in &v.fields {
                    let fd = t.descrs.get(f.0 .0 as usize).and_then(Descr::field);
                    if fd.is_none_or(|fd| fd.kind != t.type_of(f.1)) {
                        return Err("a virtual's field needs a field descriptor of its type".into());
                    }
                }
            }
            DescrKind::Array(a) => {
                if v.fields
                    .iter()
                    .any(|f| f.0 != v.descr || t.type_of(f.1) != a.kind)
                {
                    return Err("a virtual array's items use its descriptor and kind".into());
                }
            }
            _ => return Err("a virtual is a struct (size descr) or an array".into()),
        }
    }
    for st in &r.stores {
        check_store(t, st)?;
    }
    Ok(())
}
