//! Tracing a bridge from a guard that failed often enough: the tracer starts from the guard's
//! resume state (`crate::resume::bridge_frames`), trusting what the guard's trace trusted, and
//! traces until the portal reaches a compiled loop's merge point; the bridge is compiled and
//! attached to the guard, and the driver continues in the loop it jumps to.
//!
//! Must not know: how ops are traced or compiled, or any guest language.

use std::time::Instant;

use super::{assembler, merge_point, resume, stale, JitDriver, Next, Params, State};
use crate::backend::TraceId;
use crate::jitcode::Value;
use crate::trace::{Abort, Close, Traced, Tracer};

/// How many times a guard's wait for another bridge attempt doubles, after `max_aborts`
/// attempts stopped at inner loops, before it gets no bridge.
const MAX_BACKOFF: u32 = 8;

impl JitDriver {
    /// Traces, compiles and attaches a bridge from guard `op` of trace `parent_id` (`parent`,
    /// as compiled), which failed with `saved`; says what the driver does next.
    ///
    /// # Safety
    /// The guard's exit left the interpreter in the guard's resume state.
    pub(super) unsafe fn trace_bridge(
        &self,
        state: &mut State,
        params: &Params,
        parent: &resume::Exits,
        parent_id: TraceId,
        op: usize,
        saved: &[crate::ir::Value],
    ) -> Next {
        let (_, r) = parent.guard(op).expect("the exit of a guard");
        let (trace, frames) = resume::bridge_frames(&state.codes, parent.pools(), &r, saved);
        let t0 = Instant::now();
        let first_guard = state.next_guard;
        let trusted = state.meta[&parent_id].fingerprint.for_bridge();
        let inlinable = std::rc::Rc::clone(&state.inlinable);
        // A bridge of a cut bridge is not cut again: it ends where its parent ends, at the
        // first pass of that loop header, and goes to the interpreter there.
        let stop = state.cut.get(&parent_id).cloned();
        let cut = params.cut_bridges && stop.is_none();
        let (codes, cells, mut calls) =
            assembler::EntryCalls::split(self, &mut *state, params.function_entry);

        let mut tracer = Tracer::with_frames(
            codes,
            (self.portal)(),
            trace,
            frames,
            super::limits(params, params.bridge_limit.min(params.trace_limit)),
            first_guard,
            trusted,
        );
        if cut {
            tracer = tracer.cutting();
        }
        if params.inline_loops {
            tracer = tracer.with_inlining(inlinable);
        }
        let tracer = tracer.with_calls(&mut calls);
        let mut decide = |g: &[Value], header: bool| match Self::decide_other(cells, g) {
            Close::Jump(n) => Close::Jump(n),
            _ if header && stop.as_ref().is_some_and(|k| *k == Self::key(g)) => Close::Finish,
            other => other,
        };
        // SAFETY: forwarded: the frames are the interpreter's state at the guard.
        let traced = unsafe { tracer.run(&mut decide) };
        state.stats.tracing += t0.elapsed();
        match traced {
            Traced::Closed {
                trace,
                close,
                greens,
                reds,
                fingerprint,
                marks,
            } => {
                // SAFETY: the interpreter stands in the program the bridge ran.
                let id = unsafe {
                    self.attach(
                        state,
                        params,
                        trace,
                        close,
                        fingerprint,
                        &marks,
                        parent_id,
                        op,
                        r.id,
                    )
                };
                // It ended at its parent's header: its own guards' bridges end there too.
                if let (Close::Finish, Some(id), Some(k)) = (close, id, stop) {
                    if k == Self::key(&greens) {
                        state.stats.cut_ends += 1;
                        state.cut.insert(id, k);
                    }
                }
                match close {
                    Close::Jump(n) => Next::enter(n, &reds, false),
                    // The tracer ran the portal's return.
                    Close::Return => Next::Done(super::Resumed::Return(reds)),
                    _ => Next::Done(merge_point(greens, reds)),
                }
            }
            Traced::Cut {
                trace,
                fingerprint,
                marks,
                frames,
            } => {
                state.stats.cut += 1;
                // SAFETY: the interpreter stands in the program the bridge ran.
                let id = unsafe {
                    self.attach(
                        state,
                        params,
                        trace,
                        Close::Finish,
                        fingerprint,
                        &marks,
                        parent_id,
                        op,
                        r.id,
                    )
                };
                // The mark of the loop header where it was cut is its last.
                if let (Some(id), Some(m)) = (id, marks.last()) {
                    state.cut.insert(id, Self::key(&m.greens));
                }
                // Tracing ran on past the cut: the interpreter continues from there.
                Next::Blackhole(frames)
            }
            Traced::Aborted {
                reason: Abort::InnerLoop,
                frames,
                ..
            } => {
                // The guard gets a bridge at its next failure, which can jump into the loop.
                // Not more than `max_aborts` times in a row: then after twice as many failures
                // as last time (the inner loop may have code by then, its own trace having
                // aborted until now), so that a bridge that always stops at an inner loop it
                // cannot jump into is traced a few times only.
                if let Some(g) = state.guards.get_mut(&r.id) {
                    g.bridge_tried = false;
                    if g.attempts < params.max_aborts {
                        g.failures = params.trace_eagerness.saturating_sub(1);
                    } else if g.backoff < MAX_BACKOFF {
                        g.failures = 0;
                        g.backoff += 1;
                    } else {
                        g.bridge_tried = true;
                    }
                }
                // The tracer left the interpreter in the state of `frames`.
                Next::TraceHere(frames, Abort::InnerLoop)
            }
            Traced::Aborted {
                reason,
                frames,
                marks,
                ..
            } => {
                let mut why = format!("bridge from guard {}: {reason}", r.id);
                if let Some(m) = marks.last().filter(|_| self.log.locates()) {
                    // SAFETY: the interpreter stands in the program the bridge ran.
                    why = format!("{why}, at {}", unsafe { self.locate(&m.greens) });
                }
                self.aborted(state, &why);
                // A bridge too long to compile still tells how long bridges are here (see
                // `Params::eagerness`): it counts as one of the limit's length.
                if reason == Abort::TooLong {
                    state.bridge_ops.0 += 1;
                    state.bridge_ops.1 += params.bridge_limit.min(params.trace_limit);
                }
                // The tracer left the interpreter in the state of `frames`.
                Next::Blackhole(frames)
            }
        }
    }

    /// Compiles bridge `trace`, traced from guard `guard` (op `op` of trace `parent_id`), and
    /// attaches it to the guard.
    ///
    /// # Safety
    /// The interpreter stands in the program the bridge ran (its marks are rendered).
    #[allow(clippy::too_many_arguments)]
    unsafe fn attach(
        &self,
        state: &mut State,
        params: &Params,
        trace: crate::ir::Trace,
        close: Close,
        fingerprint: crate::trace::Fingerprint,
        marks: &[crate::trace::Mark],
        parent_id: TraceId,
        op: usize,
        guard: u32,
    ) -> Option<TraceId> {
        // Guard ids of the bridge continue after the parent's.
        let max = trace
            .ops
            .iter()
            .filter_map(|o| o.resume.as_ref())
            .map(|r| r.id + 1)
            .max();
        state.next_guard = state.next_guard.max(max.unwrap_or(0));
        let origin = stale::Origin::Bridge { guard };
        let parent = Some((parent_id, op));
        // The bridge starts where its guard is; then come the merge points it passed.
        let from = state.guards.get(&guard).and_then(|g| g.location.clone());
        // SAFETY: forwarded from this function's contract.
        let mut located = unsafe { self.render(marks) };
        if let Some(from) = &from {
            located
                .marks
                .insert(0, (trace.num_inputs(), from.to_string()));
        }
        let header = format!(
            "bridge from guard {guard} of trace {} of {}{}",
            parent_id.0,
            self.name,
            from.map_or(String::new(), |f| format!(" at {f}"))
        );
        let named = (header, located);
        let returns = close == Close::Return;
        match self.compile(
            state,
            params,
            trace,
            parent,
            origin,
            fingerprint,
            named,
            returns,
        ) {
            Ok(id) => {
                if returns {
                    state.returns.insert(id);
                }
                Some(id)
            }
            Err((e, _)) => {
                self.aborted(state, &format!("bridge compilation failed: {e}"));
                None
            }
        }
    }
}
