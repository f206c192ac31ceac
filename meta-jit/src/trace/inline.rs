//! Inlining a compiled loop that always leaves on its first pass (a counted loop, see
//! `crate::opt::counted`) into the trace that reaches its header, instead of closing the
//! trace with a `jump` to it.
//!
//! A counted loop's optimized trace is straight-line code: the peeled first turn, the label,
//! then the computation of every value at the loop's last turn, the stores of those values,
//! and a guard that always fails there (the loop's exit). Jumping to it from an outer loop
//! ends the outer trace there; the exit's bridge goes on with the outer loop, so one turn of
//! the outer loop passes through a trace, a loop and a bridge per inner loop. Inlined, the
//! outer trace takes the inner loop's ops in and goes on tracing after its exit: one trace,
//! in which the counted stage can rewrite the outer loop in turn.
//!
//! How: the loop's ops are run, renamed into the trace (inputs to the reds' shadows,
//! constants and descriptors into the trace's pools, guards with new ids), on the concrete
//! reds by the reference interpreter (`crate::interp`), which does their loads and stores for
//! real, up to the first guard that fails. The ops before that guard are the trace's; the
//! guard itself is not recorded: the tracer takes up the interpreter's state from its resume
//! data (its frames, the shadows of their live registers from the renamed ops, their
//! concrete values from the run) and goes on from the guard's pc, where it records the branch
//! the interpreter takes there. This needs resume data that holds whichever way its guard
//! goes, so the loops kept for inlining are optimized with
//! [`crate::opt::Options::either_way`].
//!
//! What qualifies ([`inlinable`]): a trace with one `label` and, after it, a guard that
//! always fails (so the run stops at a guard before the `jump`), made only of pure ops, loads,
//! stores and guards whose resume data has no virtual objects and no pending stores, with no
//! pending stores at the `jump`. The tracer inlines only at the portal's merge point in the
//! outermost frame, where it would otherwise jump.
//!
//! Must not know: how the loop was optimized, machine code, or any guest language.

use hashbrown::HashMap;

use super::{from_ir, Check, Fingerprint, TraceFrame, Tracer};
use crate::interp::{Outcome, Run};
use crate::ir::{self, Op as IrOp, OpRef, Opcode, Trace};

/// Whether a loop's optimized trace can be inlined (see the module doc).
pub fn inlinable(t: &Trace) -> bool {
    let Some(label) = t.label() else {
        return false;
    };
    if !t.loop_stores.is_empty() {
        return false;
    }
    let exits_for_sure = t.ops[label + 1..].iter().any(|op| fails_for_sure(t, op));
    if !exits_for_sure {
        return false;
    }
    t.ops.iter().enumerate().all(|(i, op)| {
        let o = op.opcode;
        let kind_ok = o.is_input()
            || (o.is_pure() && !o.is_call())
            || o.is_load()
            || matches!(o, Opcode::Setfield | Opcode::Setarrayitem)
            || (o == Opcode::Label && i == label)
            || (o == Opcode::Jump && op.descr.is_none())
            || (o.is_guard() && o != Opcode::GuardNotInvalidated);
        let resume_ok = op
            .resume
            .as_ref()
            .is_none_or(|r| r.virtuals.is_empty() && r.stores.is_empty());
        let consts_ok = op
            .args
            .iter()
            .all(|&a| !a.is_const() || t.const_value(a).is_some());
        kind_ok && resume_ok && consts_ok
    })
}

/// Whether `op` is a guard on a constant that makes it fail.
fn fails_for_sure(t: &Trace, op: &IrOp) -> bool {
    let Some(c) = op.args.first().and_then(|&a| t.const_value(a)) else {
        return false;
    };
    let nonzero = c.bits() != 0;
    match op.opcode {
        Opcode::GuardTrue | Opcode::GuardNonnull => !nonzero,
        Opcode::GuardFalse | Opcode::GuardIsnull => nonzero,
        _ => false,
    }
}

/// The loops a tracer may inline, by loop number: their optimized traces (see [`inlinable`])
/// and what they folded from their greens' objects.
pub type Inlinable = std::rc::Rc<HashMap<u32, std::rc::Rc<(Trace, Fingerprint)>>>;

impl Tracer<'_> {
    /// Inlines loop `t` at the portal's merge point, where the reds have the shadows `reds`
    /// and the concrete values `values` (see the module doc). Returns `false`, having changed
    /// nothing, if it does not apply; `true` when the tracer stands at the resume point of the
    /// guard the loop left by, ready to go on.
    ///
    /// # Safety
    /// The concrete state is the interpreter's at this merge point: the loop's loads and
    /// stores are done for real on the reds.
    pub(super) unsafe fn inline_loop(
        &mut self,
        (t, fp): &(Trace, Fingerprint),
        reds: &[OpRef],
        values: &[ir::Value],
    ) -> bool {
        let inputs: Vec<OpRef> = t.inputs().collect();
        if self.frames.len() != 1
            || inputs.len() != reds.len()
            || inputs
                .iter()
                .zip(reds)
                .any(|(&i, &r)| t.type_of(i) != self.trace.type_of(r))
        {
            return false;
        }
        // The loop may have been compiled for other objects that lived at the greens'
        // addresses: what it folded must hold before its code runs here.
        // SAFETY: the loop's greens are those of this merge point, which the interpreter
        // holds (the driver's check before it enters a loop, here before its code runs).
        if unsafe { fp.first_broken(Check::All) }.is_some() {
            return false;
        }
        // A dry run first: the loop is inlined only if it goes past its first turn to the
        // guard that always fails (see the module doc), otherwise the trace jumps to it.
        let Some(label) = t.label() else {
            return false;
        };
        let Some(last) = (label..t.ops.len()).find(|&i| fails_for_sure(t, &t.ops[i])) else {
            return false;
        };
        let mut run = Run {
            max_iterations: 1,
            dry: true,
            ..Run::default()
        };
        match run.run(t, values) {
            Ok(Outcome::GuardFailed { op, .. }) if op == last => {}
            _ => return false,
        }
        // What the loop's code folded is checked with this trace from now on.
        if !self.fp.absorb(fp) {
            return false;
        }
        run.dry = false;
        let Ok(Outcome::GuardFailed { op: exit, saved, .. }) = run.run(t, values) else {
            // Not reached for a trace `inlinable` accepted: its run stops at a guard, at the
            // latest at the one that always fails, before its `jump`.
            unreachable!("an inlinable loop leaves by a guard");
        };
        let mut map: Vec<OpRef> = vec![OpRef::op(0); t.ops.len()];
        map[..reds.len()].copy_from_slice(reds);
        for (i, op) in t.ops.iter().enumerate().take(exit).skip(inputs.len()) {
            if op.opcode == Opcode::Label {
                continue;
            }
            let args: Vec<OpRef> = op.args.iter().map(|&a| self.renamed(t, &map, a)).collect();
            let mut new = IrOp::new(op.opcode, &args);
            if let Some(d) = op.descr {
                let d = t.get_descr(d);
                new = new.with_descr(self.trace.descr(&d.name, d.kind.clone()));
            }
            if let Some(r) = &op.resume {
                let mut r = (**r).clone();
                r.id = self.next_guard;
                self.next_guard += 1;
                for v in r.values.iter_mut() {
                    *v = self.renamed(t, &map, *v);
                }
                new = new.with_resume(r);
            }
            map[i] = self.trace.push(new);
        }
        // The interpreter's state at the exit, as the guard's resume data describes it.
        let r = t.ops[exit].resume.as_ref().expect("a guard");
        let live = r.live_ops();
        let zero = self.zeros();
        let mut frames = Vec::with_capacity(r.frames.len());
        let mut next = 0;
        for fi in &r.frames {
            let code = self.codes.get(fi.code);
            let mut f = TraceFrame::new(code, fi.code, zero);
            f.frame.pc = fi.pc as usize;
            for reg in code.live_at(f.frame.pc).expect("a guard point").iter() {
                let x = r.values[next];
                let value = match t.const_value(x) {
                    Some(c) => c,
                    None => {
                        let k = live.iter().position(|&l| l == x).expect("saved");
                        saved[k]
                    }
                };
                let shadow = self.renamed(t, &map, x);
                f.frame.set(reg, from_ir(value));
                f.shadow[reg.kind.bank()][usize::from(reg.index)] = shadow;
                next += 1;
            }
            frames.push(f);
        }
        self.frames = frames;
        // The loop's stores changed memory the cache may hold.
        self.cache = super::heapcache::HeapCache::default();
        self.at_header = false;
        self.resumed = true;
        true
    }

    /// `a` of `t` in the trace being recorded: a constant interned, an op through `map`.
    fn renamed(&mut self, t: &Trace, map: &[OpRef], a: OpRef) -> OpRef {
        match t.const_value(a) {
            Some(c) => self.trace.constant(c),
            None => map[a.index()],
        }
    }
}
