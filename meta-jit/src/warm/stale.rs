//! Compiled code that no longer fits the objects at its greens' addresses, found and thrown
//! away before it runs.
//!
//! Cells are keyed by the values of the greens, so a reference green is keyed by an address.
//! When the interpreter frees a program and allocates another at the same address, the cell
//! and its machine code, which folded the old program's immutable contents, would be reused.
//! Each compiled trace therefore keeps its [`Fingerprint`]: what it folded from the objects
//! its greens reference (see [`crate::trace::Fingerprint`]).
//!
//! Whenever the driver enters a compiled loop (from the interpreter, after tracing, after a
//! bridge), it checks the facts of every trace that loop's code can reach without coming back
//! to the driver: the loop, its bridges, the loops they jump to, and so on (the *closure*,
//! cached; a new bridge joins the closures that reach its parent, a freed trace clears them).
//! When the portal's greens are pinned, the lasting facts (see [`Fingerprint`]) of a trace
//! are checked once while a portal call lasts ([`super::native::call_active`]), and not at all
//! while the call that recorded them lasts; later entries, in that call or in portal calls
//! nested in it (the portal run again from a call), check only the volatile facts and the
//! invalidation flags, and a closure without either costs one lookup. A call that checked
//! borrows the objects its pinned greens reference until it returns, so they cannot change. The order matters
//! for safety: a trace's facts are checked after those of the trace that led to it, so every
//! address read was computed from values already found equal, starting from the greens the
//! interpreter holds. A trace whose facts fail, or that a write of a quasi-immutable field invalidated ([`super::quasi`]),
//! is freed with every trace that jumps into it (`Backend::free`), their cells start counting
//! again, and a freed bridge's guard may get a new bridge.
//!
//! The same check guards counting cells whose last trace aborted and don't-trace cells: a new
//! program at the same address starts over.
//!
//! Owns: the per-trace facts, the closure and the freeing. Must not know: how facts are
//! recorded, or any guest language.

use std::rc::Rc;

use hashbrown::{HashMap, HashSet};

use super::{native, CellState, JitDriver, State};
use crate::backend::TraceId;
use crate::ir::{DescrKind, Trace};
use crate::jitcode::Value;
use crate::log;
use crate::trace::{Check, Fingerprint};

/// Where a compiled trace came from.
pub(super) enum Origin {
    /// A loop with this cell key.
    Loop {
        /// The key of its cell.
        key: Vec<u64>,
    },
    /// A bridge from the guard with this id.
    Bridge {
        /// The guard's id.
        guard: u32,
    },
}

/// What the driver keeps about each live compiled trace.
pub(super) struct TraceMeta {
    pub origin: Origin,
    pub fingerprint: Fingerprint,
    /// Traces its code continues in without the driver: its bridges, the loops it jumps to.
    pub next: Vec<TraceId>,
    /// The portal call in which its lasting facts were last found to hold (or recorded).
    checked_in: Option<u64>,
}

/// Keeps the facts of trace `id`, just compiled from `opt`, and links it to its parent (for a
/// bridge) and to the loops it jumps to. The facts were recorded in this portal call, so they
/// count as checked in it; a bridge joins the closures of the loops that reach its parent.
pub(super) fn register(
    state: &mut State,
    id: TraceId,
    opt: &Trace,
    parent: Option<TraceId>,
    origin: Origin,
    fingerprint: Fingerprint,
) {
    let mut next = Vec::new();
    for op in &opt.ops {
        if let Some(d) = op.descr {
            if let DescrKind::Target(n) = opt.get_descr(d).kind {
                next.push(state.loops[n as usize].0);
            }
        }
    }
    if let Some(p) = parent {
        if let Some(m) = state.meta.get_mut(&p) {
            m.next.push(id);
        }
    }
    if let Some(on) = state.backend.invalidation(id) {
        for &field in fingerprint.quasi_fields() {
            super::quasi::depend(field, on.clone());
        }
    }
    let mut fingerprint = fingerprint;
    fingerprint.shrink();
    state.meta.insert(
        id,
        TraceMeta {
            origin,
            fingerprint,
            next,
            checked_in: Some(native::portal_call()),
        },
    );
    // Nothing jumps into a new loop yet; a new bridge is reached wherever its parent is.
    if let Some(p) = parent {
        let State { closures, meta, .. } = state;
        for c in closures.values_mut() {
            if c.members.contains(&p) {
                c.extend(meta, id);
            }
        }
    }
}

/// The traces a loop's code can reach, and what checking them needs.
pub(super) struct Closure {
    /// The live traces, each after a trace that leads to it.
    order: Rc<Vec<TraceId>>,
    members: HashSet<TraceId>,
    /// Whether a trace in it has facts that are not lasting or can be invalidated.
    pub(super) volatile: bool,
    /// The portal call in which the lasting facts of all its traces were last found to hold.
    checked_in: Option<u64>,
}

impl Closure {
    /// Adds `from` and what it reaches, depth first.
    fn extend(&mut self, meta: &HashMap<TraceId, TraceMeta>, from: TraceId) {
        let order = Rc::make_mut(&mut self.order);
        let mut todo = vec![from];
        while let Some(t) = todo.pop() {
            let Some(m) = meta.get(&t) else {
                continue;
            };
            if !self.members.insert(t) {
                continue;
            }
            order.push(t);
            self.volatile |=
                !m.fingerprint.all_lasting() || !m.fingerprint.quasi_fields().is_empty();
            if m.checked_in != self.checked_in {
                self.checked_in = None;
            }
            todo.extend(m.next.iter().rev());
        }
    }
}

/// The traces loop `id`'s code can reach, in checking order.
fn closure(state: &mut State, id: TraceId) -> Rc<Vec<TraceId>> {
    let State { closures, meta, .. } = state;
    let c = closures.entry(id).or_insert_with(|| {
        let mut c = Closure {
            order: Rc::new(Vec::new()),
            members: HashSet::new(),
            volatile: false,
            checked_in: None,
        };
        c.extend(meta, id);
        c
    });
    c.order.clone()
}

impl JitDriver {
    /// Before entering loop `loop_no`: checks the facts of everything its code can reach and
    /// throws away what no longer holds. Returns the loop's trace if it may run, else its
    /// greens (the interpreter continues at its merge point).
    ///
    /// # Safety
    /// The interpreter stands at the loop's merge point with the loop's greens: the objects
    /// they reference are live.
    pub(super) unsafe fn check_entry(
        &self,
        state: &mut State,
        loop_no: u32,
    ) -> Result<TraceId, Vec<Value>> {
        let id = state.loops[loop_no as usize].0;
        let greens = |state: &State| state.loops[loop_no as usize].1.clone();
        if !state.meta.contains_key(&id) {
            return Err(greens(state));
        }
        let call = Some(native::portal_call());
        // Checked in a portal call that has not returned: that call still borrows the objects
        // the pinned greens reference, so their lasting facts still hold.
        let held = |checked: Option<u64>| checked.is_some_and(native::call_active);
        if let Some(c) = state.closures.get(&id) {
            if self.greens_pinned && held(c.checked_in) && !c.volatile {
                return Ok(id);
            }
        }
        for &t in closure(state, id).iter() {
            let m = state.meta.get_mut(&t).expect("closures hold live traces");
            let which = if self.greens_pinned && held(m.checked_in) {
                Check::Volatile
            } else {
                Check::All
            };
            let broken = if state.backend.is_invalidated(t) {
                Some(format!(
                    "trace {} was invalidated (a quasi-immutable field it folded was written)",
                    t.0
                ))
            } else if which == Check::Volatile && m.fingerprint.all_lasting() {
                None
            } else {
                // SAFETY: the closure's order (see the module doc): the loop's facts start
                // from its greens, which the caller guarantees live; every other trace's facts
                // start from values the traces before it vouched for. With `Check::Volatile`,
                // every lasting fact held in this portal call, whose objects stay.
                let b = unsafe { m.fingerprint.first_broken(which) };
                if which == Check::All && b.is_none() {
                    m.checked_in = call;
                    state.stats.fact_checks += 1;
                }
                b.map(|k| format!("fact {k} of trace {} no longer holds", t.0))
            };
            if let Some(what) = broken {
                self.throw_away(state, t, &what);
                if !state.meta.contains_key(&id) {
                    return Err(greens(state));
                }
                // A bridge or a loop it jumped to went, the loop stays: check again.
                // SAFETY: forwarded.
                return unsafe { self.check_entry(state, loop_no) };
            }
        }
        if let Some(c) = state.closures.get_mut(&id) {
            c.checked_in = call;
        }
        Ok(id)
    }

    /// Frees trace `t` and every trace that jumps into it; their cells start over.
    fn throw_away(&self, state: &mut State, t: TraceId, why: &str) {
        let freed = state.backend.free(t);
        super::assembler::stop_fast_calls(state);
        let waiting = state.backend.running() > 0;
        for f in &freed {
            state.returns.remove(f);
            state.cut.remove(f);
            if let Some(t) = state.compiled.remove(f) {
                if waiting {
                    // A run waiting in a call may leave through its guards (see `zombies`).
                    state.zombies.insert(*f, t);
                }
            }
            state.trace_cost.remove(f);
            match state.root.remove(f) {
                Some(r) if r != *f => {
                    if let Some(n) = state.bridges.get_mut(&r) {
                        *n = n.saturating_sub(1);
                    }
                }
                _ => {
                    state.bridges.remove(f);
                }
            }
            let Some(m) = state.meta.remove(f) else {
                continue;
            };
            match m.origin {
                Origin::Loop { key } => {
                    state.cells.remove(&key);
                }
                Origin::Bridge { guard } => {
                    if let Some(g) = state.guards.get_mut(&guard) {
                        g.failures = 0;
                        g.bridge_tried = false;
                    }
                }
            }
        }
        state.closures.clear();
        state.stats.invalidated += freed.len();
        if self.log.guard {
            let ids: Vec<u32> = freed.iter().map(|f| f.0).collect();
            log::line(
                "invalidate",
                &format!("{}: {why}: freed traces {ids:?}", self.name),
            );
        }
    }

    /// A counting or don't-trace cell whose last trace aborted starts over when what that
    /// trace folded no longer holds.
    ///
    /// # Safety
    /// `key` is the key of greens the interpreter holds (the objects they reference are live).
    pub(super) unsafe fn forget_stale_aborts(&self, state: &mut State, key: &Vec<u64>) {
        let Some(fp) = state.abort_facts.get(key) else {
            return;
        };
        // SAFETY: the aborted trace started from these greens; see `Fingerprint::first_broken`.
        if unsafe { fp.first_broken(Check::All) }.is_some() {
            state.abort_facts.remove(key);
            state.cells.insert(
                key.clone(),
                CellState::Counting {
                    aborts: 0,
                    waited: 0,
                },
            );
        }
    }
}
