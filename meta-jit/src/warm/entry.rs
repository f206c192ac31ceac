//! Function-entry traces (RPython's portal entry bridges): with the `function_entry`
//! parameter, the first merge point a portal call passes (its function's entry) is counted
//! apart from the loops; once hot, a trace starts there and ends where the portal returns (a
//! `finish` of the returned values, as a bridge that reaches the return ends: `Close::Return`),
//! or where it reaches a compiled loop. Later calls with the same greens run that trace.
//!
//! An entry trace is kept like a loop (a number in the driver's `loops`, checked at entry
//! like one) but its cell key is its greens followed by [`ENTRY`], so it never meets the
//! loop at the same greens.
//!
//! Owns: an entry's cell key, tracing and compiling an entry (the driver's `hot` counts it
//! like a loop header). Must not know: any guest language,
//! how ops are traced or compiled.

use super::{Cells, JitDriver, Next, Params, Resumed, State};
use crate::jitcode::Value;
use crate::trace::{Abort, Close, Traced};

/// The last element of a function entry's cell key (a loop's key is its greens' bits alone).
pub(super) const ENTRY: u64 = 0x0065_6e74_7279;

/// The cell key of the function entry with these greens.
pub(super) fn entry_key(greens: &[Value]) -> Vec<u64> {
    let mut k = JitDriver::key(greens);
    k.push(ENTRY);
    k
}

impl JitDriver {
    /// Traces the function entry `key` (which had aborted `aborts` times) from its merge
    /// point, where the interpreter stands with `greens` and `reds`, and compiles the trace.
    ///
    /// # Safety
    /// As [`JitDriver::hot`] for an entry.
    pub(super) unsafe fn trace_entry(
        &self,
        state: &mut State,
        params: &Params,
        key: Vec<u64>,
        aborts: u32,
        greens: &[Value],
        reds: &[Value],
    ) -> Next {
        // A loop on the way: jump into it when it is compiled, else unroll it up to its
        // header's second pass and trace it first.
        let mut decide = |cells: &Cells, g: &[Value], _header: bool| Self::decide_other(cells, g);
        // SAFETY: forwarded.
        let traced = unsafe { self.trace_from(state, params, greens, reds, true, &mut decide) };
        let start = greens.to_vec();
        match traced {
            Traced::Closed {
                trace,
                close,
                greens: at,
                reds,
                fingerprint,
                marks,
            } => {
                // Where the interpreter stands: returned, or at the merge point where the
                // trace closed.
                let here = |at: Vec<Value>, reds: Vec<Value>| match close {
                    Close::Return => Resumed::Return(reds),
                    _ => super::merge_point(at, reds),
                };
                let returns = Some(close == Close::Return);
                // SAFETY: the interpreter stands in the program the trace ran.
                let compiled = unsafe {
                    self.compile_cell(
                        state,
                        params,
                        trace,
                        key,
                        start,
                        fingerprint,
                        &marks,
                        returns,
                    )
                };
                match (compiled, close) {
                    (Some(_), Close::Jump(n)) => {
                        state.stats.entries += 1;
                        Next::enter(n, &reds, true)
                    }
                    _ => Next::Done(here(at, reds)),
                }
            }
            Traced::Aborted {
                reason,
                frames,
                fingerprint,
                marks,
            } => {
                // SAFETY: the interpreter stands in the program the trace ran.
                let why = unsafe { self.abort_text(&reason.to_string(), &start, &marks) };
                self.loop_aborted(state, params, key, aborts, &why, fingerprint);
                match reason {
                    // The inner loop is traced now; the entry again at a later call.
                    Abort::InnerLoop => Next::TraceHere(frames, Abort::InnerLoop),
                    _ => Next::Blackhole(frames),
                }
            }
            Traced::Cut { .. } => unreachable!("only a bridge's tracer cuts"),
        }
    }
}
