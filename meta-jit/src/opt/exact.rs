//! `record_exact_value(v, c)`: the interpreter author's promise that `v` is `c` here. The value
//! becomes the constant from here on, with no guard, and the op leaves the trace. (Checked mode
//! and the tracer check the promise; the optimizer trusts it.)

use super::{Optimizer, Step};
use crate::ir::{Op, Opcode};

/// The exact-value stage.
pub fn optimize(o: &mut Optimizer, op: Op) -> Step {
    if op.opcode != Opcode::RecordExactValue {
        return Step::Next(op);
    }
    o.replace(op.args[0], op.args[1]);
    Step::Remove
}
