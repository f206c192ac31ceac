//! Compiled code against the reference interpreter: the comparison every backend test makes,
//! with a report that shows what to look at when they disagree (the trace as text, the inputs,
//! both outcomes and the disassembly).

use super::{Backend, CompileOptions, TraceId};
use crate::interp::{Outcome, Run};
use crate::ir::{print::print, Trace, Value};

/// A trace compiled with [`CompileOptions::count_iterations`], ready to be run against the
/// reference interpreter on many inputs.
pub struct Compiled {
    /// The backend holding it.
    pub backend: Backend,
    /// Its number.
    pub id: TraceId,
    /// The trace.
    pub trace: Trace,
}

impl Compiled {
    /// Compiles `trace` in a fresh backend (panics with the trace text if it does not
    /// compile).
    pub fn new(trace: Trace) -> Compiled {
        let mut backend = Backend::new();
        let opts = CompileOptions {
            count_iterations: true,
            returns: false,
        };
        let id = backend
            .compile(&trace, &opts)
            .unwrap_or_else(|e| panic!("{e}\n{}", print(&trace)));
        Compiled { backend, id, trace }
    }

    /// Runs the reference interpreter, then calls `between` (to reset memory the trace
    /// writes), then the compiled code, with the same options; returns the outcome if both
    /// agree, else a report.
    pub fn compare_with(
        &self,
        inputs: &[Value],
        run: &Run,
        between: &mut dyn FnMut(),
    ) -> Result<Outcome, String> {
        let want = run
            .run(&self.trace, inputs)
            .map_err(|e| format!("the interpreter cannot run it: {e:?}"))?;
        between();
        if run.invalidated {
            self.backend.invalidate(self.id);
        }
        let got = self
            .backend
            .run_with(self.id, inputs, run.max_iterations as u64)
            .map_err(|e| format!("the backend cannot run it: {e:?}"))?;
        if got.outcome == want && got.trace == self.id {
            Ok(want)
        } else {
            Err(self.report(inputs, &want, &got.outcome))
        }
    }

    /// [`Compiled::compare_with`] with the default options and nothing between the runs;
    /// panics with the report on a mismatch.
    pub fn check(&self, inputs: &[Value]) -> Outcome {
        self.compare_with(inputs, &Run::default(), &mut || {})
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The text of a mismatch.
    pub fn report(&self, inputs: &[Value], want: &Outcome, got: &Outcome) -> String {
        format!(
            "compiled code disagrees with the interpreter\ninputs: {inputs:?}\n\
             interpreter: {want:?}\ncompiled:    {got:?}\n--- trace:\n{}--- code:\n{}",
            print(&self.trace),
            self.backend.disassemble(self.id, &self.trace)
        )
    }
}
