//! Calls between compiled traces (RPython's `call_assembler`): what the driver answers the
//! tracer about a recursive portal call ([`EntryCalls`], the tracer's `PortalCalls`), and the
//! helper that compiled code calls for a `call_assembler` ([`assembler_call`]).
//!
//! A recursive call is inlined into the trace up to [`INLINE_DEPTH`] portal calls deep, unless
//! its callee is the function being traced or one of the calls inlined around it, or it made a
//! trace too long before (`dont_inline`, RPython's `dont_trace_here`): then the trace calls
//! the callee's function-entry code. A call of an entry without code counts it, as the
//! interpreter's entry does, and traces it once hot. The helper finds that code by the callee's greens
//! (a [`Target`], one per function entry, kept until the driver is reset) and runs it with
//! the reds it is given, through the driver's trampoline (`JitDriver::drive`), so a guard
//! that fails in the callee resumes, traces bridges and runs the blackhole interpreter as
//! anywhere else. When the callee's code ends where the portal returns, its result goes back
//! to the caller's compiled code. When it ends at a merge point instead (a guard failed and
//! the interpreter takes over), or when the entry has no compiled code (not yet, or the
//! driver is tracing), the call is finished from the merge point to the portal's return (the
//! slow path): in the portal's native code resumed there when the driver has it
//! ([`JitDriver::with_resume`]), else in its jitcode.
//!
//! Owns: the inlining policy, the targets and the helper. Must not know: how ops are traced
//! or compiled, or any guest language.

use std::cell::Cell;

use hashbrown::{HashMap, HashSet};

use super::entry::entry_key;
use super::{CellState, JitDriver, Next, Resumed, State};
use crate::backend::ASSEMBLER_FRAME_WORDS;
use crate::ir::Type;
use crate::jitcode::{Op, Value};
use crate::trace::{ir_type, merge_point_pc, Assembler, Codes, PortalCalls, MAX_REDS};

/// How many portal calls deep a trace inlines a callee that is not recursive.
pub const INLINE_DEPTH: usize = 2;

/// A function entry that compiled code calls: what the helper needs to run it. The first
/// three words are what the backend's `call_assembler` reads (see `backend::x64::call`): the
/// callee's native entry while compiled code may call it directly (0 otherwise), the function
/// that finishes a call whose code left through another exit than the return, and the count
/// of direct calls.
#[repr(C)]
pub(super) struct Target {
    /// The native entry of the entry trace's code, set while a direct call is safe: the
    /// driver entered it in the current outermost run of compiled code, after checking its
    /// facts (all lasting ones), and every compiled trace fits the deadframe the direct call
    /// puts on the stack. Cleared when no run is left and when a trace is freed.
    code: Cell<usize>,
    /// [`assembler_exit`].
    exit: usize,
    /// Direct calls made.
    calls: Cell<u64>,
    /// The driver (thread-local, so it outlives every trace of this thread).
    driver: *const JitDriver,
    /// The entry's greens.
    greens: Vec<Value>,
    /// Its cell key.
    key: Vec<u64>,
    /// The kinds of the portal's reds, which the helper receives.
    kinds: Vec<Type>,
}

/// The driver's answers while it traces (see the module doc).
pub(super) struct EntryCalls<'a> {
    pub(super) driver: &'a JitDriver,
    pub(super) cells: &'a HashMap<Vec<u64>, CellState>,
    pub(super) dont_inline: &'a mut HashSet<Vec<u64>>,
    pub(super) targets: &'a mut HashMap<Vec<u64>, Box<Target>>,
    /// Whether function entries are compiled (`function_entry`): without, every call is
    /// inlined, as nothing would be compiled to call.
    pub(super) enabled: bool,
}

impl<'a> EntryCalls<'a> {
    /// The driver's state split for a tracer: its jitcode, and the portal calls it asks
    /// about (which read the cells while the tracer decides where traces close).
    pub(super) fn split(
        driver: &'a JitDriver,
        state: &'a mut State,
        enabled: bool,
    ) -> (
        &'a mut Codes,
        &'a HashMap<Vec<u64>, CellState>,
        EntryCalls<'a>,
    ) {
        let State {
            codes,
            cells,
            dont_inline,
            targets,
            ..
        } = state;
        let cells = &*cells;
        let calls = EntryCalls {
            driver,
            cells,
            dont_inline,
            targets,
            enabled,
        };
        (codes, cells, calls)
    }
}

impl PortalCalls for EntryCalls<'_> {
    fn call(&mut self, greens: &[Value], depth: usize, recursive: bool) -> Option<Assembler> {
        if !self.enabled {
            return None;
        }
        let key = entry_key(greens);
        if !recursive && depth <= INLINE_DEPTH && !self.dont_inline.contains(&key) {
            return None;
        }
        // An entry that is never traced would run in the portal's jitcode at every call:
        // inlined, it runs as compiled code (or makes this trace too long).
        if !recursive && self.cells.get(&key) == Some(&CellState::DontTrace) {
            return None;
        }
        let driver: *const JitDriver = self.driver;
        let t = self.targets.entry(key.clone()).or_insert_with(|| {
            let portal = (unsafe_free_portal(driver))();
            let Op::JitMergePoint { reds, .. } = &portal.ops[merge_point_pc(portal)] else {
                unreachable!()
            };
            Box::new(Target {
                code: Cell::new(0),
                exit: assembler_exit as *const () as usize,
                calls: Cell::new(0),
                driver,
                greens: greens.to_vec(),
                key,
                kinds: reds.iter().map(|r| ir_type(r.kind)).collect(),
            })
        });
        Some(Assembler {
            helper: assembler_call as *const () as usize,
            target: &**t as *const Target as usize,
        })
    }

    fn too_long(&mut self, greens: &[Value]) {
        self.dont_inline.insert(entry_key(greens));
    }
}

/// The portal jitcode function of the driver at `d`.
fn unsafe_free_portal(d: *const JitDriver) -> fn() -> &'static crate::jitcode::JitCode {
    // SAFETY: `d` comes from a live `&JitDriver` (the one tracing).
    unsafe { (*d).portal }
}

/// The helper a `call_assembler` calls: runs the function entry `target` (a [`Target`]) with
/// the reds `a0...` (as many as its portal has, at most [`MAX_REDS`]; the others are not
/// read) and returns the portal's result (its bits; 0 when it returns nothing).
///
/// # Safety
/// Called by compiled code (or the tracer) of the driver that made `target`, on its thread,
/// with reds of the kinds the portal's merge point has, in a state the interpreter could be
/// in at the callee's merge point.
pub(super) unsafe extern "C" fn assembler_call(
    target: usize,
    a0: u64,
    a1: u64,
    a2: u64,
    a3: u64,
    a4: u64,
) -> u64 {
    // SAFETY: the target is a `Target` the driver keeps until it is reset, which no running
    // code survives.
    let t = unsafe { &*(target as *const Target) };
    // SAFETY: the driver is thread-local and lives as long as the thread's compiled code.
    let d = unsafe { &*t.driver };
    let raw: [u64; MAX_REDS] = [a0, a1, a2, a3, a4];
    let reds: Vec<Value> = t
        .kinds
        .iter()
        .zip(raw)
        .map(|(k, b)| match k {
            Type::Ref => Value::Ref(b as usize),
            _ => Value::Int(b as i64),
        })
        .collect();
    // SAFETY: forwarded.
    let out = unsafe { d.run_entry(t, reds) };
    out.first().map_or(0, |v| crate::trace::to_ir(*v).bits())
}

/// What a direct `call_assembler` calls when the callee's code left through an exit that is
/// not the portal's return: `code` is the exit code, `frame` the deadframe on the stack (of
/// [`ASSEMBLER_FRAME_WORDS`] words). Handles the exit as the driver handles any (resume,
/// bridge, blackhole interpreter), finishes the call and returns its result as
/// [`assembler_call`] does.
///
/// # Safety
/// Called by compiled code of the driver that made `target`, right after the callee's code
/// returned `code` with `frame`.
unsafe extern "C" fn assembler_exit(target: usize, code: u64, frame: *const u64) -> u64 {
    // SAFETY: as in `assembler_call`.
    let t = unsafe { &*(target as *const Target) };
    // SAFETY: as in `assembler_call`.
    let d = unsafe { &*t.driver };
    // SAFETY: the compiled code passes its deadframe of that many words.
    let frame = unsafe { std::slice::from_raw_parts(frame, ASSEMBLER_FRAME_WORDS) };
    let params = d.params.borrow().clone();
    let next = {
        let mut state = d.state.borrow_mut();
        let ended = state.backend.ended(code, frame);
        // SAFETY: the exit left the interpreter in the state it describes.
        unsafe { d.after_exit(&mut state, &params, ended) }
    };
    // SAFETY: forwarded.
    let out = match unsafe { d.drive(&params, next) } {
        Resumed::Return(v) => v,
        // SAFETY: the interpreter stands at this merge point.
        Resumed::MergePoint(vals) => unsafe { d.finish_call(vals) },
    };
    out.first().map_or(0, |v| crate::trace::to_ir(*v).bits())
}

/// No direct call until the driver has checked the callee again (no run is left, or a trace
/// was freed).
pub(super) fn stop_fast_calls(state: &State) {
    for t in state.targets.values() {
        t.code.set(0);
    }
}

/// The direct calls made so far.
pub(super) fn direct_calls(state: &State) -> usize {
    state.targets.values().map(|t| t.calls.get() as usize).sum()
}

impl JitDriver {
    /// Runs the function entry `t` with `reds` to the portal's return (see the module doc).
    ///
    /// # Safety
    /// As [`assembler_call`].
    unsafe fn run_entry(&self, t: &Target, reds: Vec<Value>) -> Vec<Value> {
        let loop_no = match self.state.try_borrow_mut() {
            Ok(mut state) => match state.cells.get(&t.key) {
                Some(&CellState::Compiled { loop_no }) => {
                    state.stats.entries += 1;
                    state.stats.assembler_calls += 1;
                    Some(loop_no)
                }
                _ => None,
            },
            // The driver traces: the callee runs in the interpreter.
            Err(_) => {
                let mut vals = t.greens.clone();
                vals.extend(reds);
                // SAFETY: forwarded: the interpreter stands at the callee's merge point.
                return unsafe { self.finish_call(vals) };
            }
        };
        let resumed = match loop_no {
            Some(n) => {
                let params = self.params.borrow().clone();
                // SAFETY: the reds are the callee's at its entry's merge point.
                let r = unsafe { self.drive(&params, Next::enter(n, &reds, true)) };
                self.allow_fast_calls(t, n);
                r
            }
            None => {
                // Counted as an entry from the interpreter is (a callee that only compiled
                // code calls would never be traced otherwise); once hot, traced from here.
                let slot = super::counters::entry(super::counters::hash(&t.greens));
                let hot = self.counters.borrow_mut().bump(slot) >= self.params.borrow().threshold;
                // SAFETY: forwarded: the interpreter stands at the callee's merge point.
                let ran = hot
                    .then(|| unsafe { self.hot(&t.greens, &reds, slot, true) })
                    .flatten();
                ran.unwrap_or_else(|| super::merge_point(t.greens.clone(), reds))
            }
        };
        match resumed {
            Resumed::Return(v) => v,
            // SAFETY: the interpreter stands at this merge point.
            Resumed::MergePoint(vals) => unsafe { self.finish_call(vals) },
        }
    }

    /// After the driver entered entry `loop_no` for `t` (checking its facts): compiled code
    /// may call it directly for the rest of the outermost run, if its facts are all lasting
    /// and every compiled trace fits the direct call's deadframe.
    fn allow_fast_calls(&self, t: &Target, loop_no: u32) {
        let Ok(state) = self.state.try_borrow() else {
            return;
        };
        let Some(&(id, _)) = state.loops.get(loop_no as usize) else {
            return;
        };
        let lasting = state.closures.get(&id).is_some_and(|c| !c.volatile);
        let fits = state.backend.frame_values() < ASSEMBLER_FRAME_WORDS;
        if lasting && fits && state.backend.running() > 0 {
            if let Some(addr) = state.backend.code_addr(id) {
                t.code.set(addr);
            }
        }
    }

    /// Runs the portal from its merge point, with these greens then reds, to its return: its
    /// native code when the driver has it ([`JitDriver::with_resume`]), else its jitcode.
    ///
    /// # Safety
    /// The values are the interpreter's at the merge point.
    pub(super) unsafe fn finish_call(&self, vals: Vec<Value>) -> Vec<Value> {
        if let Some(resume) = self.resume {
            // SAFETY: forwarded: the values are the portal's at its merge point.
            return unsafe { resume(vals) };
        }
        let portal = (self.portal)();
        let mp = merge_point_pc(portal);
        let Op::JitMergePoint { greens, reds } = &portal.ops[mp] else {
            unreachable!()
        };
        let mut f = crate::jitcode::runner::Frame::new(portal);
        for (&r, v) in greens.iter().chain(reds).zip(vals) {
            f.set(r, v);
        }
        f.pc = mp + 1;
        // SAFETY: forwarded: the frame is the interpreter's state after its merge point.
        match unsafe { f.execute(false) } {
            crate::jitcode::runner::Exit::Return(v) => v,
            crate::jitcode::runner::Exit::MergePoint => unreachable!("a plain run goes on"),
        }
    }
}
