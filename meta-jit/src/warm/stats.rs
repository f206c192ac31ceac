//! What the driver did, as data for tests (RPython's `check_resops`, `check_trace_count`) and
//! for the summary line of the JIT log.
//!
//! Must not know: how traces are made or run.

use std::time::Duration;

use crate::ir::Trace;
use std::rc::Rc;

/// Whether a compiled trace is a loop, a bridge or a function entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A loop, entered from the interpreter.
    Loop,
    /// A bridge attached to a guard.
    Bridge,
    /// A function-entry trace: from the first merge point of a portal call to its return
    /// (or to a loop).
    Entry,
}

/// One compiled trace, as statistics keep it.
#[derive(Clone, Debug)]
pub struct TraceRecord {
    /// Loop or bridge.
    pub kind: TraceKind,
    /// Its number in the backend (the trace id the JIT log shows).
    pub id: u32,
    /// The number of the loop it hangs from, through its parent bridges (its own for a
    /// loop): a loop's bridges count against [`crate::warm::Params::max_bridges`].
    pub tree: u32,
    /// The trace as recorded, when [`crate::warm::Params::keep_recorded`] is set.
    pub recorded: Option<Trace>,
    /// The trace as optimized and compiled, when [`crate::warm::Params::keep_optimized`] is
    /// set.
    pub optimized: Option<Rc<Trace>>,
}

impl TraceRecord {
    /// The trace as optimized and compiled.
    ///
    /// # Panics
    /// If it was not kept: set the parameter `keep_optimized=1` before the trace compiles.
    pub fn optimized(&self) -> &Trace {
        self.optimized
            .as_deref()
            .expect("the optimized trace is kept only with the parameter keep_optimized=1")
    }

    /// How many ops with this name the optimized trace has (RPython's `check_resops`).
    ///
    /// # Panics
    /// If the optimized trace was not kept (`keep_optimized=1` keeps it).
    pub fn count(&self, opname: &str) -> usize {
        self.optimized()
            .ops
            .iter()
            .filter(|op| op.opcode.name() == opname)
            .count()
    }
}

/// What the driver did, for tests and the summary.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Every compiled trace, in order.
    pub traces: Vec<TraceRecord>,
    /// Calls of function-entry code made by compiled code (`call_assembler`) that found the
    /// callee compiled.
    pub assembler_calls: usize,
    /// Aborted traces' reasons.
    pub aborts: Vec<String>,
    /// Loops compiled as counted loops: each entry computes their last turn and runs only
    /// that one (see `opt::counted`).
    pub counted_loops: usize,
    /// Traces (loops or bridges) that stopped at the second pass of an inner loop's header so
    /// that the inner loop was traced first.
    pub inner_loops_first: usize,
    /// Loop traces that left their loop and came back to their start from outside, and were
    /// traced again from there (`trace::Close::Reenter`).
    pub retraced: usize,
    /// Bridges that grew longer than `bridge_limit` and were cut short at the last merge
    /// point they passed, where they hand over to the interpreter (`trace::Traced::Cut`).
    pub cut: usize,
    /// Bridges from guards of cut bridges that ended with a `finish` where their parent ends,
    /// at the first pass of that loop header, instead of going on as far as `bridge_limit`
    /// (see `Params::cut_bridges`).
    pub cut_ends: usize,
    /// Guard failures that went back to the interpreter or into a new bridge.
    pub guard_failures: usize,
    /// Times compiled code was entered from the interpreter.
    pub entries: usize,
    /// Times the native `can_enter_jit!` called the driver because a location's counter had
    /// reached `threshold` (entries into compiled code included).
    pub hot_calls: usize,
    /// Times the driver checked every fact of a compiled trace before entering a loop whose
    /// code can reach it: at every entry, or, when the greens are pinned, once per portal
    /// call after the one that compiled it.
    pub fact_checks: usize,
    /// Compiled traces thrown away because what they folded no longer holds (another object
    /// lives at a green's address).
    pub invalidated: usize,
    /// Ops recorded in the traces that were then compiled (before optimization; aborted
    /// traces not counted): what the compile times below were spent on, mostly.
    pub recorded_ops: usize,
    /// Time spent tracing.
    pub tracing: Duration,
    /// Time spent optimizing.
    pub optimizing: Duration,
    /// Time spent compiling.
    pub compiling: Duration,
}

impl Stats {
    /// Number of compiled loops.
    pub fn loops(&self) -> usize {
        self.traces
            .iter()
            .filter(|t| t.kind == TraceKind::Loop)
            .count()
    }
    /// Number of compiled function-entry traces.
    pub fn entry_traces(&self) -> usize {
        self.traces
            .iter()
            .filter(|t| t.kind == TraceKind::Entry)
            .count()
    }
    /// Number of compiled bridges.
    pub fn bridges(&self) -> usize {
        self.traces
            .iter()
            .filter(|t| t.kind == TraceKind::Bridge)
            .count()
    }
    /// The one-paragraph summary the log prints.
    pub fn summary(&self) -> String {
        let entry = match (self.entry_traces(), self.assembler_calls) {
            (0, 0) => String::new(),
            (n, c) => format!("function entries: {n}, calls of compiled code: {c}, "),
        };
        format!(
            "{entry}loops: {}, counted: {}, bridges: {}, aborts: {}, inner loops first: {}, retraced: {}, cut bridges: {}, ended at a cut: {}, guard failures: {}, entries: {}, \
             fact checks: {}, invalidated: {}, tracing: {:?}, optimizing: {:?}, compiling: {:?}",
            self.loops(),
            self.counted_loops,
            self.bridges(),
            self.aborts.len(),
            self.inner_loops_first,
            self.retraced,
            self.cut,
            self.cut_ends,
            self.guard_failures,
            self.entries,
            self.fact_checks,
            self.invalidated,
            self.tracing,
            self.optimizing,
            self.compiling
        )
    }
}
