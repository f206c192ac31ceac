//! What a trace contains, found by reading the trace alone (not by asking the generator what
//! it meant to do): the test that the generator covers redundancy, facts, allocations and
//! loops counts these over many generated traces.

use crate::ir::{Access, DescrKind, OpArgs, OpRef, Opcode, Trace};
use hashbrown::HashSet;

/// The features found in one trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// A pure op (not a call) appears twice with the same opcode and arguments.
    pub repeated_pure: bool,
    /// An elidable call appears twice with the same function and arguments.
    pub repeated_elidable_call: bool,
    /// A `record_known_result` about a function that an earlier `call_pure_*` called.
    pub known_result_after_call: bool,
    /// A `record_exact_value`.
    pub exact_value: bool,
    /// A load of a field or item of the same object (and index) that an earlier store wrote.
    pub load_after_store: bool,
    /// A load of a location loaded before.
    pub load_after_load: bool,
    /// A store to a location written before, with no load of that descriptor in between.
    pub overwritten_store: bool,
    /// A `new` whose object is never stored, passed to a call, or passed out of the trace
    /// (`finish`, `jump`, `label`).
    pub nonescaping_new: bool,
    /// A `new` whose object is stored into memory, passed to a call, or passed out.
    pub escaping_new: bool,
    /// A `new` whose object a guard's resume data captures.
    pub new_in_resume: bool,
    /// A `new_array`.
    pub new_array: bool,
    /// The trace ends with `jump`.
    pub is_loop: bool,
    /// The trace has a `label`.
    pub label: bool,
    /// A residual call whose descriptor says it writes memory.
    pub residual_with_effects: bool,
    /// A guard on a constant.
    pub guard_on_constant: bool,
    /// The same guard (opcode and arguments) twice.
    pub repeated_guard: bool,
    /// An overflow-checked op.
    pub ovf: bool,
    /// A `same_as_*`.
    pub same_as: bool,
    /// A binary op with the same value as both arguments.
    pub self_operands: bool,
    /// A binary int op whose arguments are both constants.
    pub constant_operands: bool,
    /// Resume data with more than one frame.
    pub multi_frame_resume: bool,
    /// A float operation.
    pub float_op: bool,
}

impl Features {
    /// Scans a trace.
    pub fn of(t: &Trace) -> Features {
        use Opcode::*;
        let mut f = Features::default();
        let mut pure_seen: HashSet<(Opcode, OpArgs)> = HashSet::new();
        let mut guard_seen: HashSet<(Opcode, OpArgs)> = HashSet::new();
        let mut called: HashSet<OpRef> = HashSet::new();
        let mut stored: HashSet<(OpRef, Option<OpRef>, u32)> = HashSet::new();
        let mut loaded: HashSet<(OpRef, Option<OpRef>, u32)> = HashSet::new();
        let mut news: Vec<OpRef> = Vec::new();
        let mut escaped: HashSet<OpRef> = HashSet::new();
        let mut in_resume: HashSet<OpRef> = HashSet::new();
        for (i, op) in t.ops.iter().enumerate() {
            let o = op.opcode;
            let d = op.descr.map_or(u32::MAX, |d| d.0);
            let key = (o, op.args.clone());
            if o.is_pure() && !o.is_call() {
                f.repeated_pure |= !pure_seen.insert(key.clone());
                if op.args.len() == 2 {
                    f.self_operands |= op.args[0] == op.args[1];
                    f.constant_operands |= op.args.iter().all(|a| a.is_const())
                        && t.type_of(op.args[0]) == crate::ir::Type::Int;
                }
            }
            if o.is_pure() && o.is_call() {
                f.repeated_elidable_call |= !pure_seen.insert(key.clone());
                called.insert(op.args[0]);
            }
            if o.is_guard() {
                f.guard_on_constant |= op.args.first().is_some_and(|a| a.is_const());
                if !op.args.is_empty() {
                    f.repeated_guard |= !guard_seen.insert(key.clone());
                }
                if let Some(r) = &op.resume {
                    f.multi_frame_resume |= r.frames.len() > 1;
                    in_resume.extend(r.values.iter().copied());
                }
            }
            f.ovf |= o.is_ovf();
            f.same_as |= matches!(o, SameAsI | SameAsF | SameAsR);
            f.float_op |=
                o.name().starts_with("float_") && !matches!(o, FloatToBits | FloatFromBits);
            match o {
                RecordKnownResult => f.known_result_after_call |= called.contains(&op.args[1]),
                RecordExactValue => f.exact_value = true,
                New => news.push(OpRef::op(i)),
                NewArray => f.new_array = true,
                Label => {
                    f.label = true;
                    escaped.extend(op.args.iter().copied());
                }
                Jump => {
                    f.is_loop = true;
                    escaped.extend(op.args.iter().copied());
                }
                Finish => escaped.extend(op.args.iter().copied()),
                Setfield | Setarrayitem => {
                    let (obj, idx, val) = if o == Setfield {
                        (op.args[0], None, op.args[1])
                    } else {
                        (op.args[0], Some(op.args[1]), op.args[2])
                    };
                    escaped.insert(val);
                    let loc = (obj, idx, d);
                    f.overwritten_store |= stored.contains(&loc) && !loaded.contains(&loc);
                    stored.insert(loc);
                    loaded.retain(|l| l.2 != d);
                }
                GetfieldI | GetfieldF | GetfieldR | GetarrayitemI | GetarrayitemF
                | GetarrayitemR => {
                    let idx = (op.args.len() > 1).then(|| op.args[1]);
                    let loc = (op.args[0], idx, d);
                    f.load_after_store |= stored.contains(&loc);
                    f.load_after_load |= !loaded.insert(loc);
                }
                _ if o.is_call() && !o.is_pure() => {
                    escaped.extend(op.args[1..].iter().copied());
                    if let Some(DescrKind::Call(c)) = op.descr.map(|d| &t.get_descr(d).kind) {
                        f.residual_with_effects |= c.effects.writes != Access::Nothing;
                    }
                    stored.clear();
                    loaded.clear();
                }
                _ => {}
            }
        }
        for n in &news {
            if escaped.contains(n) {
                f.escaping_new = true;
            } else {
                f.nonescaping_new = true;
            }
            f.new_in_resume |= in_resume.contains(n);
        }
        f
    }
}
