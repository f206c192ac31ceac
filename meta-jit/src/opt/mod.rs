//! The optimizer: one forward pass over a trace, then a backward dead-code sweep.
//! (Being built: for now [`optimize`] returns the trace unchanged.)

use crate::ir::Trace;

/// Which stages run (RPython's `enable_opts`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Constant folding and algebraic simplification.
    pub fold: bool,
    /// CSE of pure ops and elidable calls, with `record_known_result` facts.
    pub pure: bool,
    /// Guard removal and strengthening.
    pub guards: bool,
    /// Heap cache: load forwarding and redundant store removal.
    pub heap: bool,
    /// Allocation removal (virtuals).
    pub virtuals: bool,
    /// The backward dead-code sweep.
    pub dce: bool,
}

impl Options {
    /// Every stage on.
    pub fn all() -> Options {
        Options {
            fold: true,
            pure: true,
            guards: true,
            heap: true,
            virtuals: true,
            dce: true,
        }
    }

    /// Every stage off: the trace comes out as it went in.
    pub fn none() -> Options {
        Options {
            fold: false,
            pure: false,
            guards: false,
            heap: false,
            virtuals: false,
            dce: false,
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options::all()
    }
}

/// Optimizes a trace with the given stages.
pub fn optimize(trace: &Trace, _opts: &Options) -> Trace {
    trace.clone()
}
