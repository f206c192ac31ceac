//! Quasi-immutable fields (RPython's `quasiimmut.py`): which compiled traces folded which field,
//! and the write side that invalidates them.
//!
//! A trace that reads a `#[jit(quasi_immutable)]` field of a constant object folds the value
//! and records `quasiimmut_field` and `guard_not_invalidated` (see the tracer). Once it is
//! compiled, the driver registers it here under the field's address. A write of the field then
//! sets the invalidation flag of every trace registered under it: their `guard_not_invalidated`
//! guards fail from then on, even in code that is running, and the driver throws them away the
//! next time it would enter them.
//!
//! Writes reach this module from compiled code (the tracer records a call of
//! [`written_from_jit`] after every `setfield` of such a field), from the tracer (which performs
//! the writes of the iteration it records), and from native code through
//! [`quasi_immutable_written`]. Writes the interpreter makes natively between two entries into
//! compiled code need no call when the object is reached from the greens: the driver checks the
//! folded value on entry like the other facts of the trace (see [`super::stale`]).
//!
//! The table is global (flags are atomic; a write on any thread invalidates code of every
//! thread). Must not know: what the fields mean, or any guest language.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::backend::Invalidation;

static DEPENDENTS: Mutex<Option<HashMap<usize, Vec<Invalidation>>>> = Mutex::new(None);

/// Registers compiled code that folded the quasi-immutable field at address `field`.
pub(super) fn depend(field: usize, on: Invalidation) {
    let mut d = DEPENDENTS.lock().unwrap_or_else(PoisonError::into_inner);
    let list = d.get_or_insert_with(HashMap::new).entry(field).or_default();
    list.retain(|i| !i.is_gone());
    list.push(on);
}

/// Invalidates every compiled trace that folded the field at address `field`.
fn written(field: usize) {
    let mut d = DEPENDENTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(list) = d.as_mut().and_then(|m| m.remove(&field)) {
        for i in list {
            i.invalidate();
        }
    }
}

/// Tells the JIT that the `#[jit(quasi_immutable)]` field at `field` was written: every
/// compiled trace that folded its value is invalidated. Call it after a write that native code
/// makes while compiled code may be running further up the stack (from a function that traced
/// code calls), or to an object the interpreter's greens do not reach; other writes are found
/// by the driver itself (see the book's chapter on deoptimization).
pub fn quasi_immutable_written<T>(field: *const T) {
    written(field as usize);
}

/// What compiled code and the tracer call after writing a quasi-immutable field.
pub(crate) extern "C" fn written_from_jit(field: usize) {
    written(field);
}
