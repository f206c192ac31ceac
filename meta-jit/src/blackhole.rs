//! The blackhole interpreter (RPython's `blackhole.py`): finishes the interpreter step that a
//! failed guard or an aborted trace interrupted, by running the rebuilt jitcode frames on
//! concrete values, with no tracing, up to the portal's next merge point.
//!
//! The frames come outermost (the portal) first; the top frame resumes at its pc, each parent
//! at its inline call, which receives the callee's return values when the callee returns.
//! Every op is executed by the runner ([`Frame::execute`]), so the blackhole interpreter means
//! exactly what the jitcode-only runner and the tracer mean; the hints it passes are checked
//! there, and a violation is reported as found by the blackhole interpreter.
//!
//! Owns: unwinding a stack of frames to the next merge point of the portal frame. Must not
//! know: traces, resume data (that is [`crate::resume`]), or any guest language.

use crate::check::CheckedBy;
use crate::jitcode::hintcheck;
use crate::jitcode::runner::{Exit, Frame};
use crate::jitcode::{Op, Value};

/// Where the blackhole interpreter stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Landed {
    /// The portal frame reached its merge point: the native interpreter continues from these
    /// greens and reds (one value per register of the merge point's greens and reds).
    MergePoint {
        /// The greens' values.
        greens: Vec<Value>,
        /// The reds' values.
        reds: Vec<Value>,
    },
    /// The portal frame returned these values.
    Return(Vec<Value>),
}

/// Runs `frames` (outermost, the portal, first) until the portal frame reaches its merge point
/// or returns. An interpreter panic (overflow, bounds, `panic!`) is raised as the native
/// interpreter would raise it.
///
/// # Safety
/// The frames hold a state the native interpreter could be in at their pcs (see
/// [`crate::jitcode::runner::run`]).
pub unsafe fn run(frames: Vec<Frame<'static>>) -> Landed {
    // SAFETY: forwarded from this function's contract.
    hintcheck::checking_as(CheckedBy::Blackhole, || unsafe { unwind(frames) })
}

/// [`run`], with the runner's hint checks reported as the blackhole interpreter's.
///
/// # Safety
/// As for [`run`].
unsafe fn unwind(mut frames: Vec<Frame<'static>>) -> Landed {
    loop {
        let depth = frames.len();
        let top = frames.last_mut().expect("at least the portal frame");
        // SAFETY: forwarded from this function's contract.
        match unsafe { top.execute(depth == 1) } {
            Exit::MergePoint => {
                let Op::JitMergePoint { greens, reds } = &top.code.ops[top.pc] else {
                    unreachable!("execute stops at merge points")
                };
                // Room for the reds too: the driver hands the interpreter one list, the
                // greens then the reds, and appends the reds to this one.
                let mut gs = Vec::with_capacity(greens.len() + reds.len());
                gs.extend(greens.iter().map(|&r| top.get(r)));
                return Landed::MergePoint {
                    greens: gs,
                    reds: reds.iter().map(|&r| top.get(r)).collect(),
                };
            }
            Exit::Return(values) => {
                if depth == 1 {
                    return Landed::Return(values);
                }
                frames.pop();
                let parent = frames.last_mut().expect("checked above");
                let Op::InlineCall { dsts, .. } = &parent.code.ops[parent.pc] else {
                    unreachable!("a parent frame stands at its inline call")
                };
                for (&d, v) in dsts.iter().zip(values) {
                    parent.set(d, v);
                }
                parent.pc += 1;
            }
        }
    }
}
