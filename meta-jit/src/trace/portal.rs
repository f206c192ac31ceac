//! Recursive portal calls met while tracing (RPython's `do_recursive_call`): the interpreter's
//! jitcode calls the portal itself for a guest callee (an inline call of the portal's
//! jitcode). The tracer follows the call into the callee's frame up to the callee's merge
//! point, its function entry, and there asks the driver ([`PortalCalls`]) whether to go on
//! inlining the callee or to call its compiled code: then the callee's frame is dropped and a
//! `call_assembler` takes the callee's reds at its entry and gives its result to the caller.
//! The concrete result comes from executing that call (the driver's helper, which runs the
//! callee in the interpreter while the driver traces).
//!
//! When the trace grows too long while it inlines portal calls, the driver hears which callee
//! it was inlining ([`PortalCalls::too_long`]), so that the next trace calls it instead
//! (RPython's `dont_trace_here`).
//!
//! Owns: the inputs of the decision (how deep, whether recursive), recording the
//! `call_assembler`. Must not know: how the driver finds or runs compiled code (the helper and
//! its target are opaque addresses), or any guest language.

use super::record::ir_type;
use super::{from_ir, to_ir, Step, Tracer};
use crate::ir::{self, DescrKind, Effects, Op as IrOp, OpRef, Opcode, Type};
use crate::jitcode::{Op, Value};

/// A `call_assembler`: the helper the compiled code calls, and the callee's entry it passes
/// as its first argument (both opaque to the tracer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assembler {
    /// An `extern "C"` function taking the target and then the callee's reds (integers and
    /// references, at most [`MAX_REDS`]) and returning the callee's result in an integer
    /// register; it keeps the contract of `crate::call` and may run the portal again.
    pub helper: usize,
    /// Its first argument.
    pub target: usize,
}

/// The most reds a `call_assembler` passes (the helper's other five integer registers).
pub const MAX_REDS: usize = 5;

/// What the driver answers about recursive portal calls met while tracing.
pub trait PortalCalls {
    /// An inlined portal call's callee stands at its entry (its merge point) with `greens`.
    /// `depth`: how many portal calls the trace has inlined, this one included; `recursive`:
    /// the callee has the greens of the trace's start or of a portal call inlined around
    /// it. `Some`: call the callee's compiled code instead of inlining it.
    fn call(&mut self, greens: &[Value], depth: usize, recursive: bool) -> Option<Assembler>;
    /// The trace grew too long while it inlined the portal call whose callee has `greens`
    /// (the outermost such call): do not inline it again.
    fn too_long(&mut self, greens: &[Value]);
}

impl Tracer<'_> {
    /// The top frame, an inlined portal call, reached its merge point (`op`) for the first
    /// time: go on inlining, or record a `call_assembler` and return to the caller.
    pub(super) fn portal_entry(&mut self, op: &'static Op) -> Step {
        let Op::JitMergePoint { greens, reds } = op else {
            unreachable!()
        };
        self.top().portal_entry = false;
        let Some(calls) = self.calls.take() else {
            return Step::Next;
        };
        for &g in greens {
            self.promote(g);
        }
        let gv: Vec<Value> = greens.iter().map(|&r| self.value(r)).collect();
        let n = self.frames.len();
        let depth = self.frames[1..]
            .iter()
            .filter(|f| std::ptr::eq(f.frame.code, self.portal))
            .count();
        let recursive = self.start == gv
            || self.frames[..n - 1]
                .iter()
                .any(|f| f.portal_greens.as_ref() == Some(&gv));
        let decision = calls.call(&gv, depth, recursive);
        self.calls = Some(calls);
        let step = match decision {
            Some(a) => self.call_assembler(a, reds),
            None => None,
        };
        step.unwrap_or_else(|| {
            self.top().portal_greens = Some(gv);
            Step::Next
        })
    }

    /// Records a `call_assembler` of the top frame's callee with its `reds` and returns its
    /// result to the caller's inline call. `None` (inline instead) when the call does not
    /// fit one: float reds or result, more than [`MAX_REDS`] reds, several results.
    fn call_assembler(&mut self, a: Assembler, reds: &[crate::jitcode::Register]) -> Option<Step> {
        let n = self.frames.len();
        let caller = &self.frames[n - 2].frame;
        let Op::InlineCall { dsts, .. } = &caller.code.ops[caller.pc] else {
            unreachable!("a parent frame stands at its inline call")
        };
        let ret = match dsts.as_slice() {
            [] => Type::Void,
            [d] => ir_type(d.kind),
            _ => return None,
        };
        let opcode = Opcode::call_assembler(ret)?;
        let kinds: Vec<Type> = reds.iter().map(|r| ir_type(r.kind)).collect();
        if reds.len() > MAX_REDS || kinds.contains(&Type::Float) {
            return None;
        }
        let mut args_ty = vec![Type::Int];
        args_ty.extend(&kinds);
        let descr = ir::CallDescr {
            args: args_ty,
            ret,
            effects: Effects::anything(),
        };
        let d = self.trace.descr(
            &format!("entry_{:x}", a.target),
            DescrKind::Call(descr.clone()),
        );
        let f = self.trace.func("call_assembler", a.helper);
        let t = self.trace.int(a.target as i64);
        let mut refs: Vec<OpRef> = vec![f, t];
        let mut vals = vec![ir::Value::Int(a.target as i64)];
        for &r in reds {
            refs.push(self.shadow(r));
            vals.push(to_ir(self.value(r)));
        }
        self.cache.called();
        let r = self.trace.push(IrOp::new(opcode, &refs).with_descr(d));
        // SAFETY: the helper keeps the contract of `crate::call` (see `Assembler`), and takes
        // the target and the callee's reds, of the kinds the descriptor lists.
        let res = unsafe { crate::call::call(a.helper, &descr, &vals) };
        self.frames.pop();
        let f = self.top();
        if let (Some(&dst), Some(v)) = (dsts.first(), res) {
            f.frame.set(dst, from_ir(v));
            f.shadow[dst.kind.bank()][usize::from(dst.index)] = r;
        }
        f.frame.pc += 1;
        Some(Step::Jumped)
    }

    /// The greens of the outermost portal call the trace inlines, if any.
    pub(super) fn outermost_inlined(&self) -> Option<&[Value]> {
        self.frames
            .iter()
            .find_map(|f| f.portal_greens.as_deref())
    }
}
