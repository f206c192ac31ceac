//! Resume data, both ways: rebuilding the jitcode frames of a failed guard from the values its
//! exit saved (for the blackhole interpreter), and rebuilding the tracer's frames with shadows
//! from a guard (for tracing a bridge).
//!
//! The layout (see [`crate::ir::Resume`]): frames outermost first; frame `k` is the jitcode
//! with index `code` in the driver's [`Codes`], stopped at `pc`, and takes the next `len`
//! entries of `values`, one per register live at `pc` ([`crate::jitcode::JitCode::live_at`])
//! in [`crate::jitcode::LiveRegs::iter`] order (ints, floats, refs). An entry is a trace op
//! (whose value the exit saved), a constant, or a virtual object (allocated and filled by
//! [`crate::interp::materialize`]).
//!
//! Must not know: how frames run (the blackhole interpreter) or any guest language.
#![deny(unsafe_code)]

use crate::interp::materialize;
use crate::ir::{OpRef, Resume, Trace};
use crate::jitcode::runner::Frame;
use crate::trace::{from_ir, ir_type, Codes, TraceFrame};

/// The jitcode frames of a guard of `trace` (the trace as compiled) that failed with `saved`
/// (its values in [`Resume::live_ops`] order), virtual objects materialized.
pub fn frames(
    codes: &Codes,
    trace: &Trace,
    r: &Resume,
    saved: &[crate::ir::Value],
) -> Vec<Frame<'static>> {
    let values = materialize(trace, r, saved);
    let mut out = Vec::with_capacity(r.frames.len());
    let mut next = 0;
    for fi in &r.frames {
        let code = codes.get(fi.code);
        let mut f = Frame::new(code);
        f.pc = fi.pc as usize;
        let live = code.live_at(f.pc).expect("resume pcs are guard points");
        for reg in live.iter() {
            f.set(reg, from_ir(values[next]));
            next += 1;
        }
        out.push(f);
    }
    out
}

/// The tracer's frames for a bridge from a guard of `parent`: a new trace whose inputs are the
/// guard's saved values (in [`Resume::live_ops`] order, the order the backend passes them to
/// a bridge), and frames whose live registers hold `saved`'s values and shadow those inputs
/// (or the constants of the resume data). `None` if the resume data holds virtual objects
/// (a bridge would have to rebuild them; not supported yet).
pub fn bridge_frames(
    codes: &Codes,
    parent: &Trace,
    r: &Resume,
    saved: &[crate::ir::Value],
) -> Option<(Trace, Vec<TraceFrame>)> {
    if !r.virtuals.is_empty() {
        return None;
    }
    let live = r.live_ops();
    let mut t = Trace::new();
    let inputs: Vec<OpRef> = saved.iter().map(|v| t.input(v.ty())).collect();
    let zero = [t.int(0), t.float(0.0), t.ptr(0)];
    let values = materialize(parent, r, saved);
    let mut out = Vec::new();
    let mut next = 0;
    for fi in &r.frames {
        let code = codes.get(fi.code);
        let mut f = TraceFrame::new(code, fi.code, zero);
        f.frame.pc = fi.pc as usize;
        for reg in code.live_at(f.frame.pc).expect("a guard point").iter() {
            let x = r.values[next];
            let shadow = if x.is_op() {
                inputs[live
                    .iter()
                    .position(|&l| l == x)
                    .expect("live ops cover values")]
            } else {
                t.constant(values[next])
            };
            debug_assert_eq!(ir_type(reg.kind), t.type_of(shadow));
            f.frame.set(reg, from_ir(values[next]));
            let bank = match reg.kind {
                crate::jitcode::Kind::Int => 0,
                crate::jitcode::Kind::Float => 1,
                crate::jitcode::Kind::Ref => 2,
            };
            f.shadow[bank][usize::from(reg.index)] = shadow;
            next += 1;
        }
        out.push(f);
    }
    Some((t, out))
}
