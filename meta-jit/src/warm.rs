//! The warm-up runtime (RPython's `warmstate.py` and `compile.py`): one [`JitDriver`] per portal
//! counts the guest program's loops at `can_enter_jit!`, traces a hot one, optimizes and
//! compiles it, enters the compiled loop, and when a guard fails deoptimizes (resume data, then
//! the blackhole interpreter to the next merge point) or, once the guard has failed
//! `trace_eagerness` times, traces and attaches a bridge.
//!
//! How the native interpreter takes part: the `#[jit::interpreter]` macro expands
//! `can_enter_jit!()` into a call of [`can_enter_jit`] with the values of the greens and the
//! reds ([`Live`]). When the driver ran anything (tracing, compiled code, the blackhole
//! interpreter), it returns where the interpreter stands now: at the merge point with new
//! greens and reds, which the expansion assigns before its `continue`, or returned from the
//! portal with a value, which the expansion returns. When the JIT is off or the location is
//! cold, the cost is a thread-local flag test, a hash of the greens and a counter increment.
//!
//! The driver is per thread and reentrant: compiled code may call a function that runs the
//! portal again, and that nested run counts, traces, compiles and enters compiled code like
//! the outer one (the state is borrowed step by step, never while compiled code or the
//! blackhole interpreter runs; see `JitDriver::drive`). What a nested run frees while outer
//! code waits in a call stays until that code returns (the backend's graveyard and the
//! driver's `zombies`). Only while the driver traces does a nested run of the portal stay in
//! the interpreter: the tracer holds the state.
//!
//! With `function_entry=1`, the first merge point of each portal call is counted too, and a hot
//! one gets a function-entry trace that runs to the portal's return (`entry`); traced code
//! that calls the portal itself calls such code with `call_assembler` (`assembler`).
//!
//! Before it enters compiled code, the driver checks that the objects the greens reference are
//! still those the code was traced on (`stale`): a freed program's address may hold another
//! program now.
//!
//! Owns: parameters, counters, cells, the compiled loops and their guards, statistics and the
//! JIT log's events. Must not know: any guest language, how ops are traced or compiled.

mod assembler;
mod bridge;
mod counters;
mod entry;
mod native;
pub(crate) use native::portal_depth;
mod params;
pub(crate) mod quasi;
mod stale;
mod stats;

use hashbrown::{HashMap, HashSet};
use std::cell::RefCell;
use std::rc::Rc;
use std::thread::LocalKey;
use std::time::Instant;

use crate::backend::{Backend, CompileOptions, TraceId};
use crate::blackhole::{self, Landed};
use crate::interp::Outcome;
use crate::ir::{Opcode, Trace};
use crate::jitcode::{JitCode, Value};
use crate::log::{self, Located, Selection};
use crate::opt::optimize_with_report;
use crate::resume;
use crate::trace::{
    from_ir, to_ir, Abort, Close, Codes, Fingerprint, GreenLife, Limits, Mark, Traced, Tracer,
};

pub use native::{
    can_enter_jit, function_entered, portal_entered, take, take_pinned, Live, OnFlag, PortalCall,
    Vals,
};
pub use params::Params;
pub use quasi::quasi_immutable_written;
pub use stats::{Stats, TraceKind, TraceRecord};

/// Where the interpreter stands after the driver ran something.
#[derive(Clone, Debug, PartialEq)]
pub enum Resumed {
    /// At the merge point, with these greens then reds (one value per register).
    MergePoint(Vec<Value>),
    /// The portal returned these values.
    Return(Vec<Value>),
}

/// The driver's cells: each location's state, by the bits of its greens.
type Cells = HashMap<Vec<u64>, CellState>;

/// The tracer's limits under `params`, for a trace of at most `trace_limit` ops.
fn limits(params: &Params, trace_limit: usize) -> Limits {
    Limits {
        trace_limit,
        check_hints: params.check_hints,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellState {
    /// Counting passes: after `aborts` aborts it takes `threshold << aborts` passes to trace
    /// again; `waited` are those counted in earlier rounds of the location's counter (which
    /// calls the driver every `threshold` passes, so a location whose traces abort costs a
    /// call of the driver per `threshold` passes, not one per pass).
    Counting {
        aborts: u32,
        waited: u32,
    },
    Compiled {
        loop_no: u32,
    },
    DontTrace,
}

struct GuardInfo {
    failures: u32,
    bridge_tried: bool,
    /// How many times a bridge was traced from it (an inner loop traced first lets it try
    /// again, up to `max_aborts` times).
    attempts: u32,
    /// After `max_aborts` attempts stopped at inner loops, the guard tries again after
    /// `eagerness << backoff` more failures (the inner loops may have code by then).
    backoff: u32,
    /// The compiled trace it belongs to.
    trace: TraceId,
    /// Its guest position, rendered when the log shows positions.
    location: Option<Rc<str>>,
}

impl GuardInfo {
    /// A guard of trace `trace` that has not failed yet.
    fn new(trace: TraceId) -> GuardInfo {
        GuardInfo {
            failures: 0,
            bridge_tried: false,
            attempts: 0,
            backoff: 0,
            trace,
            location: None,
        }
    }
}

/// The driver's mutable state (borrowed while it works; see the module doc on reentrancy).
struct State {
    codes: Codes,
    backend: Backend,
    cells: HashMap<Vec<u64>, CellState>,
    /// What the last aborted trace of a counting or don't-trace cell had folded: when it no
    /// longer holds, the cell starts over (another program lives at its greens' addresses).
    abort_facts: HashMap<Vec<u64>, Fingerprint>,
    /// Compiled loops by number: their trace ids and greens.
    loops: Vec<(TraceId, Vec<Value>)>,
    /// The resume data of every compiled trace, by trace id (shared: a guard failure reads it
    /// while the driver's state changes). The optimized trace itself is not kept.
    compiled: HashMap<TraceId, Rc<resume::Exits>>,
    /// Bridges that end where the portal returns: their `finish` hands back the portal's
    /// return values, not greens and reds at a merge point.
    returns: HashSet<TraceId>,
    /// Bridges cut short where they grew too long (`trace::Traced::Cut`), with the key of the
    /// loop header where they end; and the bridges of their guards, which end there too. A
    /// bridge from one of their guards is not cut again (it would go on where its parent
    /// stopped, as long): it ends with a `finish` at its parent's header if it passes it
    /// (see `trace_bridge`).
    cut: HashMap<TraceId, Vec<u64>>,
    /// Traces thrown away while compiled code waited in a call (the portal ran again): a
    /// waiting run may still leave through one of their guards. Emptied when no run is left.
    zombies: HashMap<TraceId, Rc<resume::Exits>>,
    /// What every live compiled trace folded, where it came from and where it continues.
    meta: HashMap<TraceId, stale::TraceMeta>,
    /// For each loop entered lately, the traces its code may reach, in checking order.
    closures: HashMap<TraceId, stale::Closure>,
    /// The guards that failed, and every compiled guard when the log shows positions.
    guards: HashMap<u32, GuardInfo>,
    next_guard: u32,
    /// The loop each live bridge hangs from (through its parent bridges), and how many live
    /// bridges each loop has (see `Params::max_bridges`).
    root: HashMap<TraceId, TraceId>,
    bridges: HashMap<TraceId, u32>,
    /// Bridges compiled, and the ops recorded in them (see `Params::eagerness`).
    bridge_ops: (usize, usize),
    /// Heap bytes each live trace keeps besides its code: its resume data in `compiled`
    /// ([`resume::Exits::heap_bytes`]), its fingerprint, its guards' entries and the backend's tables
    /// for it.
    trace_cost: HashMap<TraceId, usize>,
    /// Function entries that a trace does not inline again (see `assembler`).
    dont_inline: HashSet<Vec<u64>>,
    /// The function entries that `call_assembler`s name (see `assembler`).
    targets: HashMap<Vec<u64>, Box<assembler::Target>>,
    stats: Stats,
    /// Compiled loops that traces take in where they reach them, by loop number (see
    /// `Params::inline_loops` and the tracer's `inline`).
    inlinable: crate::trace::Inlinable,
    /// The code to inline of the loop `compile` compiled last, until `compile_cell` knows
    /// its number.
    inline_pending: Option<Rc<(Trace, Fingerprint)>>,
    /// What the trace viewer shows, when `METAJIT_LOG` asks for it.
    viewer: Option<log::viewer::Recorder>,
    /// The locations whose traces stopped at another's header to trace that one first
    /// ([`Abort::InnerLoop`]), in order, while each trace that follows does the same. A
    /// location asked again closes a cycle (function entries called twice each in an outer
    /// loop pass each other's header twice): none of them is an inner loop of another, and
    /// the one asked again is traced no more (`trace_here`), so that traces go through it.
    asked_first: Vec<Vec<u64>>,
}

impl State {
    fn new() -> State {
        State {
            codes: Codes::default(),
            backend: Backend::new(),
            cells: HashMap::new(),
            abort_facts: HashMap::new(),
            loops: Vec::new(),
            compiled: HashMap::new(),
            zombies: HashMap::new(),
            returns: HashSet::new(),
            cut: HashMap::new(),
            meta: HashMap::new(),
            closures: HashMap::new(),
            guards: HashMap::new(),
            next_guard: 0,
            root: HashMap::new(),
            bridges: HashMap::new(),
            bridge_ops: (0, 0),
            trace_cost: HashMap::new(),
            dont_inline: HashSet::new(),
            targets: HashMap::new(),
            inlinable: Rc::default(),
            inline_pending: None,
            stats: Stats::default(),
            viewer: None,
            asked_first: Vec::new(),
        }
    }
}

/// The JIT of one portal on one thread.
pub struct JitDriver {
    name: &'static str,
    portal: fn() -> &'static JitCode,
    on: &'static LocalKey<OnFlag>,
    greens_pinned: bool,
    greens_static: bool,
    params: RefCell<Params>,
    log: Selection,
    location: Option<log::LocationFn>,
    resume: Option<ResumeFn>,
    counters: RefCell<counters::Counters>,
    state: RefCell<State>,
}

/// The portal's native code resumed at its merge point (what `#[jit::interpreter]` generates
/// when the portal's dispatch loop allows it, see [`JitDriver::with_resume`]): runs from the
/// merge point with these greens then reds to the portal's return and gives its result's
/// values.
///
/// # Safety
/// The values are the portal's greens and reds at its merge point, of their types, in a state
/// the interpreter could be in there.
pub type ResumeFn = unsafe fn(Vec<Value>) -> Vec<Value>;

impl JitDriver {
    /// A driver for the portal `name` whose jitcode `portal` returns, with the parameters of
    /// `METAJIT_PARAMS` and the log selection of `METAJIT_LOG`.
    /// `on` is the thread-local flag the native fast path tests, kept equal to
    /// [`Params::enabled`]. `greens_pinned`: every reference among the greens is a
    /// shared-reference parameter of the portal that its body never rebinds, so the objects
    /// they reference stay the same for a whole portal call, and the driver checks what its
    /// traces folded from them once per call instead of at every entry (see
    /// [`JitDriver::greens_pinned`]).
    pub fn new(
        name: &'static str,
        portal: fn() -> &'static JitCode,
        on: &'static LocalKey<OnFlag>,
        greens_pinned: bool,
    ) -> JitDriver {
        let params = Params::from_env();
        on.with(|f| f.set(params.enabled));
        JitDriver {
            name,
            portal,
            on,
            greens_pinned,
            greens_static: false,
            params: RefCell::new(params),
            log: Selection::from_env(),
            location: None,
            resume: None,
            counters: RefCell::new(counters::Counters::new()),
            state: RefCell::new(State::new()),
        }
    }

    /// The same driver, naming guest positions with the interpreter's location hook (what
    /// `#[jit::interpreter(..., location = f)]` passes): every header, merge point, abort and
    /// guard report of the log and the trace viewer uses it.
    pub fn with_location(mut self, f: log::LocationFn) -> JitDriver {
        self.location = Some(f);
        self
    }

    /// The same driver, finishing a portal call whose callee's code left it at a merge point
    /// (a `call_assembler` whose callee has no compiled code, or whose guard failed) in the
    /// portal's native code from that merge point, instead of its jitcode: the rest of the
    /// call runs at the interpreter's speed, and may enter compiled code again.
    pub fn with_resume(mut self, f: ResumeFn) -> JitDriver {
        self.resume = Some(f);
        self
    }

    /// The same driver, for a portal whose reference greens are all `&'static` (what
    /// `#[jit::interpreter]` passes when every reference green's parameter type says so):
    /// their objects are never freed, so no other object can later live at their addresses.
    /// Traces then record no facts about what they fold from them (see
    /// the book's deoptimization chapter), entries check nothing, and a trace that reaches
    /// another compiled loop's merge point jumps there even when it computed the greens
    /// there from values it does not trust (a green loaded from the interpreter's data).
    pub fn with_static_greens(mut self) -> JitDriver {
        self.greens_static = true;
        self
    }

    /// The guest position these greens name, as text: the location hook's, or the greens'
    /// values without one.
    ///
    /// # Safety
    /// The greens are the portal's at a merge point, and the objects they reference are live.
    pub unsafe fn locate(&self, greens: &[Value]) -> String {
        match self.location {
            // SAFETY: forwarded.
            Some(f) => unsafe { f(greens) },
            None => {
                let v: Vec<String> = greens
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => i.to_string(),
                        Value::Float(f) => format!("{f:?}"),
                        Value::Ref(a) => format!("{a:#x}"),
                    })
                    .collect();
                format!("greens ({})", v.join(", "))
            }
        }
    }

    /// The marks of a trace rendered (nothing when the log shows no positions).
    ///
    /// # Safety
    /// The objects the marks' greens reference are live.
    unsafe fn render(&self, marks: &[Mark]) -> Located {
        if !self.log.locates() {
            return Located::default();
        }
        Located {
            marks: marks
                .iter()
                // SAFETY: forwarded.
                .map(|m| (m.at, unsafe { self.locate(&m.greens) }))
                .collect(),
        }
    }

    /// The bytes the live traces take, as `max_memory_kb` counts them: their machine code
    /// (whole pages) and an estimate of the heap each keeps (its resume data, fingerprint,
    /// guard entries and the backend's tables for it).
    pub fn memory(&self) -> usize {
        Self::memory_of(&self.state.borrow())
    }

    fn memory_of(state: &State) -> usize {
        state.backend.code_memory() + state.trace_cost.values().sum::<usize>()
    }

    /// Every guard that failed, with its failures, in guard-number order. When the log shows
    /// positions, every guard that was compiled, with its guest position (a guard that never
    /// failed is listed only then).
    pub fn guard_counts(&self) -> Vec<log::GuardCount> {
        let state = self.state.borrow();
        guard_counts(&state)
    }

    /// Whether the JIT is on (the `enabled` parameter). The native fast path tests the
    /// thread-local [`OnFlag`] that mirrors it first, and asks here only while that flag is
    /// not known yet on the thread; [`can_enter_jit`] tests it again.
    #[inline]
    pub fn is_on(&self) -> bool {
        self.params.borrow().enabled
    }

    /// Whether the portal's greens are pinned: `#[jit::interpreter]` finds every reference
    /// green to be a parameter of type `&T` (not `mut`) that the body never rebinds. Then
    /// the facts a trace folded from the greens' objects are checked on the first entry of a
    /// portal call, not on every entry.
    pub fn greens_pinned(&self) -> bool {
        self.greens_pinned
    }

    /// Whether the portal's reference greens are all `&'static` (see
    /// [`JitDriver::with_static_greens`]).
    pub fn greens_static(&self) -> bool {
        self.greens_static
    }

    /// Changes the parameters (`"threshold=3,trace_eagerness=2"`, see [`Params::set`]).
    pub fn set_params(&self, s: &str) -> Result<(), String> {
        let mut p = self.params.borrow_mut();
        p.set(s)?;
        self.on.with(|f| f.set(p.enabled));
        Ok(())
    }

    /// A copy of the statistics.
    pub fn stats(&self) -> Stats {
        let state = self.state.borrow();
        let mut s = state.stats.clone();
        s.assembler_calls += assembler::direct_calls(&state);
        s
    }

    /// Calls `f` with the statistics, without copying them (they keep every compiled trace).
    pub fn with_stats<R>(&self, f: impl FnOnce(&Stats) -> R) -> R {
        f(&self.state.borrow().stats)
    }

    /// Forgets every compiled trace, counter and statistic (parameters stay). Not needed when
    /// a program is freed and another one takes its address: the driver notices that by
    /// itself (see the module doc).
    ///
    /// # Panics
    /// When compiled code of this driver waits in a call (reset from inside the portal run
    /// again): its code must stay.
    pub fn reset(&self) {
        let mut state = self.state.borrow_mut();
        assert!(
            state.backend.running() == 0,
            "JitDriver::reset while compiled code of the driver waits in a call"
        );
        *state = State::new();
        drop(state);
        self.counters.borrow_mut().clear();
    }

    fn key(greens: &[Value]) -> Vec<u64> {
        greens.iter().map(|v| to_ir(*v).bits()).collect()
    }

    /// The cell of `key`, whose counter (of hash `slot`) reached the threshold and called the driver:
    /// `None` while a counting cell whose traces aborted waits for more passes (it adds the
    /// counter's passes to those it waited so far and resets the counter; see
    /// [`CellState::Counting`]). A cell whose aborted trace folded facts that no longer hold
    /// starts over.
    ///
    /// # Safety
    /// The greens `key` stands for reference live objects.
    unsafe fn counted(
        &self,
        state: &mut State,
        params: &Params,
        key: &Vec<u64>,
        slot: u64,
    ) -> Option<CellState> {
        state.stats.hot_calls += 1;
        let fresh = CellState::Counting {
            aborts: 0,
            waited: 0,
        };
        if let CellState::Counting { aborts, waited } =
            state.cells.get(key).copied().unwrap_or(fresh)
        {
            let passes = waited.saturating_add(self.counters.borrow().get(slot));
            self.counters.borrow_mut().set(slot, 0);
            if aborts > 0 && passes < params.threshold.saturating_mul(1 << aborts.min(16)) {
                let waited = passes;
                state
                    .cells
                    .insert(key.clone(), CellState::Counting { aborts, waited });
                return None;
            }
        }
        // SAFETY: forwarded: the greens reference live objects.
        unsafe { self.forget_stale_aborts(state, key) };
        Some(state.cells.get(key).copied().unwrap_or(fresh))
    }

    /// The slow path of [`can_enter_jit`] (`entry` false: a loop header) and of
    /// [`function_entered`] (`entry` true: a portal call's first merge point, counted apart,
    /// see [`entry`]): the counter of these greens reached the threshold.
    ///
    /// # Safety
    /// `greens` and `reds` are the values of the portal's greens and reds at a
    /// `can_enter_jit!` followed by the jump to the merge point (or at the merge point itself,
    /// for an entry), in a state the native interpreter is in (the objects they reference are
    /// live and not borrowed elsewhere).
    unsafe fn hot(
        &self,
        greens: &[Value],
        reds: &[Value],
        slot: u64,
        entry: bool,
    ) -> Option<Resumed> {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return None; // reentrant call while the JIT works: interpret
        };
        let _active = crate::gc::JitActive::enter();
        let params = self.params.borrow().clone();
        // The cell key on the stack: the greens' bits, and for a function entry the `ENTRY`
        // mark (see `entry::entry_key`).
        let mut buf = [0u64; 17];
        for (k, v) in greens.iter().enumerate() {
            buf[k] = to_ir(*v).bits();
        }
        let mut len = greens.len();
        if entry {
            buf[len] = entry::ENTRY;
            len += 1;
        }
        {
            // The common case, a compiled loop or function entry, without allocating: the
            // reds are handed to the code as they are.
            if let Some(&CellState::Compiled { loop_no }) = state.cells.get(&buf[..len]) {
                state.stats.hot_calls += 1;
                state.stats.entries += 1;
                drop(state);
                let mut inputs = [crate::ir::Value::Int(0); 16];
                for (k, v) in reds.iter().enumerate() {
                    inputs[k] = to_ir(*v);
                }
                // SAFETY: forwarded: the interpreter stands at the loop's merge point with
                // these reds.
                let next =
                    unsafe { self.run_compiled(&params, loop_no, &inputs[..reds.len()], true) };
                // SAFETY: forwarded.
                return Some(unsafe { self.drive(&params, next) });
            }
        }
        let key = buf[..len].to_vec();
        // SAFETY: forwarded.
        let cell = unsafe { self.counted(&mut state, &params, &key, slot) }?;
        let next = match cell {
            CellState::Compiled { loop_no } => {
                state.stats.entries += 1;
                Next::enter(loop_no, reds, true)
            }
            CellState::DontTrace => {
                self.counters.borrow_mut().set(slot, 0);
                return None;
            }
            CellState::Counting { aborts, .. } => {
                if !Self::code_room(&state, &params) {
                    return None;
                }
                let state = &mut *state;
                // SAFETY: forwarded.
                unsafe {
                    if entry {
                        self.trace_entry(state, &params, key, aborts, greens, reds)
                    } else {
                        self.trace_loop(state, &params, key, aborts, greens, reds, false)
                    }
                }
            }
        };
        drop(state);
        // SAFETY: forwarded: what `next` holds is the interpreter's state now.
        Some(unsafe { self.drive(&params, next) })
    }

    /// Carries out `next` and what follows from it until the interpreter takes over. The
    /// driver's state is borrowed for each step and never while compiled code or the
    /// blackhole interpreter runs: a call they make may run the portal again, and that call
    /// may trace, compile and run code of its own (the portal is reentrant). This loop is
    /// also why tracing, compiled code and bridges that follow each other do not nest native
    /// frames.
    ///
    /// # Safety
    /// `next` describes the interpreter's state: its values are the portal's at that point.
    unsafe fn drive(&self, params: &Params, mut next: Next) -> Resumed {
        loop {
            next = match next {
                Next::Done(r) => return r,
                // SAFETY: the frames are the interpreter's state.
                Next::Blackhole(frames) => return landed(unsafe { blackhole::run(frames) }),
                Next::TraceHere(frames, why) => {
                    // SAFETY: forwarded; the blackhole interpreter stops at once, at the merge
                    // point.
                    match unsafe { blackhole::run(frames) } {
                        Landed::MergePoint { greens, reds } => {
                            let mut state = self.state.borrow_mut();
                            // SAFETY: the interpreter stands at this merge point.
                            unsafe { self.trace_here(&mut state, params, &greens, &reds, why) }
                        }
                        Landed::Return(v) => {
                            self.state.borrow_mut().asked_first.clear();
                            Next::Done(Resumed::Return(v))
                        }
                    }
                }
                Next::Enter {
                    loop_no,
                    inputs,
                    fresh,
                } => {
                    // SAFETY: forwarded.
                    unsafe { self.run_compiled(params, loop_no, &inputs, fresh) }
                }
            }
        }
    }

    /// Traces from the merge point where the interpreter stands with `greens` and `reds` (a
    /// loop's, or a function entry's when `returning`: the trace may end at the portal's
    /// return), asking `decide` at every merge point (with the cells, the greens and whether
    /// it is a loop header).
    ///
    /// # Safety
    /// The interpreter stands at that merge point with these greens and reds.
    unsafe fn trace_from(
        &self,
        state: &mut State,
        params: &Params,
        greens: &[Value],
        reds: &[Value],
        returning: bool,
        decide: &mut dyn FnMut(&Cells, &[Value], bool) -> Close,
    ) -> Traced {
        let portal = (self.portal)();
        let t0 = Instant::now();
        let first_guard = state.next_guard;
        let inlinable = Rc::clone(&state.inlinable);
        let (codes, cells, mut calls) =
            assembler::EntryCalls::split(self, state, params.function_entry);
        let mut tracer = Tracer::at_merge_point(
            codes,
            portal,
            greens,
            reds,
            limits(params, params.trace_limit),
            first_guard,
            if self.greens_static {
                GreenLife::Static
            } else if self.greens_pinned {
                GreenLife::Pinned
            } else {
                GreenLife::Unpinned
            },
        );
        if returning {
            tracer = tracer.returning();
        }
        if params.inline_loops {
            tracer = tracer.with_inlining(inlinable);
        }
        let tracer = tracer.with_calls(&mut calls);
        let mut at = |g: &[Value], header: bool| decide(cells, g, header);
        // SAFETY: forwarded.
        let traced = unsafe { tracer.run(&mut at) };
        state.stats.tracing += t0.elapsed();
        traced
    }

    /// Compiles the trace of cell `key`, which starts at the greens `start`, and points the
    /// cell to it: `Some` of its loop number. `entry` is `None` for a loop, `Some(returns)`
    /// for a function entry (`returns`: the trace ends at the portal's return). A trace that
    /// does not compile makes the cell stop tracing (`None`).
    ///
    /// # Safety
    /// The interpreter stands in the program the trace ran (its marks are rendered).
    #[allow(clippy::too_many_arguments)]
    unsafe fn compile_cell(
        &self,
        state: &mut State,
        params: &Params,
        trace: Trace,
        key: Vec<u64>,
        start: Vec<Value>,
        fingerprint: Fingerprint,
        marks: &[Mark],
        entry: Option<bool>,
    ) -> Option<u32> {
        let loop_no = state.loops.len() as u32;
        let origin = stale::Origin::Loop { key: key.clone() };
        // SAFETY: forwarded.
        let located = unsafe { self.render(marks) };
        let header = format!(
            "{} {loop_no} of {} at {}",
            if entry.is_some() { "entry" } else { "loop" },
            self.name,
            located.start().unwrap_or("?")
        );
        let returns = entry == Some(true);
        match self.compile(
            state,
            params,
            trace,
            None,
            origin,
            fingerprint,
            (header, located),
            returns,
        ) {
            Ok(id) => {
                if entry.is_some() {
                    if let Some(t) = state.stats.traces.last_mut() {
                        t.kind = TraceKind::Entry;
                    }
                }
                if returns {
                    state.returns.insert(id);
                }
                if let Some(t) = state.inline_pending.take().filter(|_| entry.is_none()) {
                    Rc::make_mut(&mut state.inlinable).insert(loop_no, t);
                }
                state.loops.push((id, start));
                state.backend.define_target(loop_no, id);
                state.abort_facts.remove(&key);
                state.cells.insert(key, CellState::Compiled { loop_no });
                Some(loop_no)
            }
            Err((e, fingerprint)) => {
                self.aborted(state, &format!("compilation failed: {e}"));
                state.abort_facts.insert(key.clone(), fingerprint);
                state.cells.insert(key, CellState::DontTrace);
                None
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn trace_loop(
        &self,
        state: &mut State,
        params: &Params,
        key: Vec<u64>,
        aborts: u32,
        greens: &[Value],
        reds: &[Value],
        entered: bool,
    ) -> Next {
        let start = greens.to_vec();
        // Back at the start: a loop, if through its header. A trace that left the loop and
        // came back in is traced again from that entry, once.
        let mut decide = |cells: &Cells, g: &[Value], header: bool| {
            if g == start.as_slice() {
                if header || entered {
                    Close::Loop
                } else {
                    Close::Reenter
                }
            } else {
                Self::decide_other(cells, g)
            }
        };
        // SAFETY: forwarded from `hot`.
        let traced = unsafe { self.trace_from(state, params, greens, reds, false, &mut decide) };
        if !matches!(
            traced,
            Traced::Aborted {
                reason: Abort::InnerLoop,
                ..
            }
        ) {
            state.asked_first.clear();
        }
        match traced {
            Traced::Closed {
                trace,
                close,
                greens: at,
                reds,
                fingerprint,
                marks,
            } => {
                // A trace that ends in another compiled loop is no loop of its own: if it left
                // its loop on the loop's last turn, compiling it would make every later turn of
                // that loop leave through a guard. Dropped like an abort (the count needed
                // doubles), it is traced again later, in another turn, up to `max_aborts`.
                match close {
                    Close::Jump(next) if !entered && aborts + 1 < params.max_aborts => {
                        let why = "the trace ended in another loop";
                        // SAFETY: the interpreter stands at the merge point where the trace
                        // closed: the program is live.
                        let why = unsafe { self.abort_text(why, &start, &marks) };
                        self.loop_aborted(state, params, key, aborts, &why, fingerprint);
                        state.stats.entries += 1;
                        // The tracer left the interpreter at the merge point with these greens
                        // and reds, the entry of `next`.
                        return Next::enter(next, &reds, true);
                    }
                    _ => {}
                }
                // SAFETY: the interpreter stands in the program the trace ran.
                let compiled = unsafe {
                    self.compile_cell(
                        state,
                        params,
                        trace,
                        key,
                        start.clone(),
                        fingerprint,
                        &marks,
                        None,
                    )
                };
                let Some(loop_no) = compiled else {
                    return Next::Done(merge_point(at, reds));
                };
                // The tracer stands at the merge point where the trace closed: its own start,
                // or another compiled loop's, or neither.
                let next = match close {
                    Close::Loop => Some(loop_no),
                    Close::Jump(n) => Some(n),
                    _ => None,
                };
                let Some(next) = next else {
                    return Next::Done(merge_point(at, reds));
                };
                state.stats.entries += 1;
                // The tracer left the interpreter at the merge point with these greens and
                // reds, the entry of `next`.
                Next::enter(next, &reds, true)
            }
            Traced::Aborted {
                reason: Abort::InnerLoop,
                frames,
                ..
            } => {
                // Not this location's fault: it is traced again at its next visit, and the
                // inner loop now.
                self.counters
                    .borrow_mut()
                    .set(counters::hash(&start), params.threshold);
                state.asked_first.push(key);
                Next::TraceHere(frames, Abort::InnerLoop)
            }
            Traced::Aborted {
                reason: Abort::Reentered,
                frames,
                ..
            } => Next::TraceHere(frames, Abort::Reentered),
            Traced::Aborted {
                reason,
                frames,
                fingerprint,
                marks,
            } => {
                // SAFETY: the interpreter stands in the program the trace ran.
                let why = unsafe { self.abort_text(&reason.to_string(), &start, &marks) };
                self.loop_aborted(state, params, key, aborts, &why, fingerprint);
                // The tracer left the interpreter in the state of `frames`.
                Next::Blackhole(frames)
            }
            Traced::Cut { .. } => unreachable!("only a bridge's tracer cuts"),
        }
    }

    /// How a trace that started elsewhere goes on at a merge point with greens `g`: jump to
    /// their compiled loop; unroll a loop that is never traced; else stop at the second pass
    /// of a loop header and trace that inner loop first.
    fn decide_other(cells: &Cells, g: &[Value]) -> Close {
        match cells.get(&Self::key(g)) {
            Some(CellState::Compiled { loop_no }) => Close::Jump(*loop_no),
            Some(CellState::DontTrace) => Close::Continue,
            _ => Close::TraceFirst,
        }
    }

    /// A trace stopped at a loop header (the interpreter stands at that merge point, with
    /// `greens` and `reds`) to trace the loop there now, from there (`why`):
    /// - [`Abort::InnerLoop`]: the trace passed an inner loop's header twice; the inner
    ///   loop is traced instead of unrolled into the outer trace or bridge (which is traced
    ///   again later and then jumps into it);
    /// - [`Abort::Reentered`]: the trace of this very loop left it and came back in here,
    ///   its entry; this time it closes wherever it comes back.
    ///
    /// # Safety
    /// The interpreter stands at that merge point with these greens and reds.
    unsafe fn trace_here(
        &self,
        state: &mut State,
        params: &Params,
        greens: &[Value],
        reds: &[Value],
        why: Abort,
    ) -> Next {
        if why == Abort::InnerLoop {
            state.stats.inner_loops_first += 1;
        } else {
            state.stats.retraced += 1;
        }
        if self.log.abort {
            // SAFETY: the interpreter stands at this merge point.
            let at = unsafe { self.locate(greens) };
            log::line("abort", &format!("{}: {why}, at {at}", self.name));
        }
        let key = Self::key(greens);
        if why == Abort::InnerLoop && state.asked_first.contains(&key) {
            state.asked_first.clear();
            self.aborted(
                state,
                "a cycle of loops that each pass the other's header twice",
            );
            state.cells.insert(key, CellState::DontTrace);
            return Next::Done(merge_point(greens.to_vec(), reds.to_vec()));
        }
        let aborts = match state.cells.get(&key) {
            Some(CellState::Counting { aborts, .. }) => *aborts,
            _ => 0,
        };
        let entered = why == Abort::Reentered;
        // SAFETY: forwarded.
        unsafe { self.trace_loop(state, params, key, aborts, greens, reds, entered) }
    }

    /// A loop trace of the location `key` (which had aborted `aborts` times) aborted: it is
    /// traced again after a doubled count, or never once it has aborted `max_aborts` times;
    /// `fingerprint` (what the trace folded) tells when another program lives there.
    fn loop_aborted(
        &self,
        state: &mut State,
        params: &Params,
        key: Vec<u64>,
        aborts: u32,
        reason: &str,
        fingerprint: Fingerprint,
    ) {
        self.aborted(state, reason);
        let next = if aborts + 1 >= params.max_aborts {
            CellState::DontTrace
        } else {
            CellState::Counting {
                aborts: aborts + 1,
                waited: 0,
            }
        };
        state.abort_facts.insert(key.clone(), fingerprint);
        state.cells.insert(key, next);
    }

    /// Whether the live traces leave room under `max_memory_kb` for another.
    fn code_room(state: &State, params: &Params) -> bool {
        Self::memory_of(state) < params.max_memory_kb as usize * 1024
    }

    /// Whether a guard of trace `t` may get a bridge: its loop has fewer than `max_bridges`,
    /// and there is room for code.
    fn bridge_room(state: &State, params: &Params, t: TraceId) -> bool {
        let root = state.root.get(&t).copied().unwrap_or(t);
        let bridges = state.bridges.get(&root).copied().unwrap_or(0);
        bridges < params.max_bridges && Self::code_room(state, params)
    }

    /// The text of an abort: the reason, where tracing stopped and where it started (the
    /// loop's greens `start`, or the first mark of a bridge). Positions only when the log
    /// shows them.
    ///
    /// # Safety
    /// The objects the greens reference are live.
    unsafe fn abort_text(&self, reason: &str, start: &[Value], marks: &[Mark]) -> String {
        if !self.log.locates() {
            return reason.to_string();
        }
        // SAFETY: forwarded.
        let from = unsafe { self.locate(start) };
        match marks.last() {
            // SAFETY: forwarded.
            Some(m) => format!("{reason}, at {} (trace from {from})", unsafe {
                self.locate(&m.greens)
            }),
            None => format!("{reason} (trace from {from})"),
        }
    }

    fn aborted(&self, state: &mut State, reason: &str) {
        if self.log.abort {
            log::line("abort", &format!("{}: {reason}", self.name));
        }
        state.stats.aborts.push(reason.to_string());
    }

    /// Optimizes and compiles a trace (a bridge when `parent` is the guard it attaches to;
    /// `returns`: its `finish` is the portal's return), and keeps what it folded
    /// (`fingerprint`). `header` names it in the log, `located` are
    /// its guest positions. On failure, gives the fingerprint back.
    #[allow(clippy::too_many_arguments)]
    fn compile(
        &self,
        state: &mut State,
        params: &Params,
        trace: Trace,
        parent: Option<(TraceId, usize)>,
        origin: stale::Origin,
        fingerprint: Fingerprint,
        (header, located): (String, Located),
        returns: bool,
    ) -> Result<TraceId, (String, Fingerprint)> {
        let (kind, what) = match parent {
            None => (TraceKind::Loop, "loop"),
            Some(_) => (TraceKind::Bridge, "bridge"),
        };
        if self.log.trace {
            log::section(
                "log-noopt",
                &header,
                &crate::ir::print::listing(&trace, &located.marks),
            );
        }
        let guard_at = located.guards(&trace);
        state.stats.recorded_ops += trace.ops.len();
        if parent.is_some() {
            state.bridge_ops.0 += 1;
            state.bridge_ops.1 += trace.ops.len();
        }
        let t0 = Instant::now();
        let (opt, report) = optimize_with_report(&trace, &params.enable_opts);
        state.stats.optimizing += t0.elapsed();
        state.stats.counted_loops += usize::from(report.counted);
        state.inline_pending = None;
        if parent.is_none() && !returns && report.counted && params.inline_loops {
            // Optimized again for inlining: with resume data that holds either way.
            let opts = crate::opt::Options {
                either_way: true,
                ..params.enable_opts.clone()
            };
            let (t, r) = optimize_with_report(&trace, &opts);
            if crate::trace::inlinable(&t) && r.quasi_immutable.is_empty() {
                state.inline_pending = Some(Rc::new((t, fingerprint.clone())));
            }
        }
        // A peeled loop's body guards are copies of the preamble's, numbered `id_offset` on.
        let mut guard_at = guard_at;
        if let Some(p) = report.peeled.as_ref().filter(|p| p.id_offset > 0) {
            let copies: Vec<(u32, String)> = guard_at
                .iter()
                .map(|(id, t)| (id + p.id_offset, t.clone()))
                .collect();
            guard_at.extend(copies);
        }
        let opt_marks = located.optimized(&guard_at, &opt);
        if self.log.opt {
            log::section(
                "log-opt",
                &header,
                &crate::ir::print::listing(&opt, &opt_marks),
            );
        }
        let t0 = Instant::now();
        let opts = CompileOptions {
            returns,
            ..CompileOptions::default()
        };
        let compiled = match parent {
            None => state.backend.compile(&opt, &opts),
            Some((p, op)) => state.backend.compile_bridge(p, op, &opt, &opts),
        };
        let id = match compiled {
            Ok(id) => id,
            Err(e) => return Err((format!("{e:?}"), fingerprint)),
        };
        state.stats.compiling += t0.elapsed();
        if self.log.perfmap {
            if let (Some(start), Some(info)) = (state.backend.code_addr(id), state.backend.info(id))
            {
                log::perf_map(
                    start,
                    info.code_bytes,
                    &format!("{what}{} {}", id.0, self.name),
                );
            }
        }
        if self.log.asm {
            log::section(
                "asm",
                &format!("trace {}: {header}", id.0),
                &state.backend.disassemble(id, &opt),
            );
        }
        // A guard's entry is made at its first failure, or now when the log shows positions
        // (the text must be rendered while the greens' objects are alive): a trace of a
        // thousand guards that rarely fail keeps no entry for most of them.
        let mut texts: HashMap<&str, Rc<str>> = HashMap::new();
        for op in &opt.ops {
            if let Some(r) = &op.resume {
                if let Some(t) = guard_at.get(&r.id) {
                    let text = texts
                        .entry(t.as_str())
                        .or_insert_with(|| Rc::from(t.as_str()));
                    let mut g = GuardInfo::new(id);
                    g.location = Some(Rc::clone(text));
                    state.guards.insert(r.id, g);
                }
                state.next_guard = state.next_guard.max(r.id + 1);
            }
        }
        let root = match parent {
            Some((p, _)) => state.root.get(&p).copied().unwrap_or(p),
            None => id,
        };
        state.root.insert(id, root);
        if root != id {
            *state.bridges.entry(root).or_default() += 1;
        }
        if let Some(file) = &self.log.html {
            let v = state
                .viewer
                .get_or_insert_with(|| log::viewer::Recorder::new(self.name, file));
            v.add(log::viewer::TraceView::new(
                id.0,
                kind,
                parent.map(|(p, op)| (p.0, opt_guard_id(&state.compiled, p, op))),
                &header,
                &trace,
                &located.marks,
                &opt,
                &opt_marks,
                |i| state.backend.op_code(id, i),
            ));
        }
        stale::register(state, id, &opt, parent.map(|p| p.0), origin, fingerprint);
        let located_guards = opt
            .ops
            .iter()
            .filter_map(|op| op.resume.as_ref())
            .filter(|r| guard_at.contains_key(&r.id))
            .count();
        let optimized = params.keep_optimized.then(|| {
            let mut kept = opt.clone();
            kept.shrink_to_fit();
            Rc::new(kept)
        });
        let exits = resume::Exits::keep(opt);
        let cost = exits.heap_bytes()
            + state
                .meta
                .get(&id)
                .map_or(0, |m| m.fingerprint.heap_bytes())
            + state.backend.info(id).map_or(0, |i| i.table_bytes)
            + located_guards * (std::mem::size_of::<(u32, GuardInfo)>() + 1);
        state.trace_cost.insert(id, cost);
        state.compiled.insert(id, Rc::new(exits));
        state.stats.traces.push(TraceRecord {
            kind,
            id: id.0,
            tree: root.0,
            recorded: params.keep_recorded.then_some(trace),
            optimized,
        });
        Ok(id)
    }

    /// Runs compiled loop `loop_no` from its merge point (`inputs`, its reds) until it exits,
    /// and says what follows: the next loop, a bridge's tracing that went on, or where the
    /// interpreter takes over. Every time the driver enters a loop, it first checks that what
    /// the loop's code folded still holds (see [`stale`]). `fresh`: the interpreter enters
    /// (not a jump from compiled code), as the trace viewer counts entries.
    ///
    /// The state is not borrowed while the code runs (see [`JitDriver::drive`]).
    unsafe fn run_compiled(
        &self,
        params: &Params,
        loop_no: u32,
        inputs: &[crate::ir::Value],
        fresh: bool,
    ) -> Next {
        let mut run = {
            let mut state = self.state.borrow_mut();
            let state = &mut *state;
            if fresh {
                if let (Some(v), Some(l)) = (&mut state.viewer, state.loops.get(loop_no as usize)) {
                    v.entered(l.0 .0);
                }
            }
            // SAFETY: the interpreter stands at the merge point of the loop with its greens,
            // and `inputs` are its reds: the objects the greens reference are live.
            let id = match unsafe { self.check_entry(state, loop_no) } {
                Ok(id) => id,
                Err(greens) => {
                    return Next::Done(merge_point(
                        greens,
                        inputs.iter().copied().map(from_ir).collect(),
                    ))
                }
            };
            state
                .backend
                .enter(id, inputs, u64::MAX)
                .expect("compiled loops take the reds")
        };
        // SAFETY: entered above and left below; the functions traces call keep the contract
        // of `crate::call` (they may run the portal again: the state is not borrowed).
        let code = unsafe { run.call() };
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let ended = state.backend.leave(run, code);
        // SAFETY: forwarded.
        unsafe { self.after_exit(state, params, ended) }
    }

    /// What follows from compiled code's exit `ended` (see [`JitDriver::run_compiled`]).
    ///
    /// # Safety
    /// The exit left the interpreter in the state it describes.
    unsafe fn after_exit(
        &self,
        state: &mut State,
        params: &Params,
        ended: crate::backend::Ended,
    ) -> Next {
        // A trace thrown away while it waited in a call (the portal ran again meanwhile) is
        // still here for its resume data, and gets no bridge.
        let exited = |state: &State| match state.compiled.get(&ended.trace) {
            Some(t) => (Some(Rc::clone(t)), true),
            None => (state.zombies.get(&ended.trace).map(Rc::clone), false),
        };
        let (exited, live) = match ended.outcome {
            Outcome::GuardFailed { .. } => exited(state),
            _ => (None, true),
        };
        if state.backend.running() == 0 {
            state.backend.reap();
            if !state.zombies.is_empty() {
                state.zombies.clear();
            }
            assembler::stop_fast_calls(state);
        }
        match ended.outcome {
            Outcome::GuardFailed { id: gid, op, saved } => {
                state.stats.guard_failures += 1;
                let parent = exited.expect("a trace that was left is compiled or kept");
                let g = state
                    .guards
                    .entry(gid)
                    .or_insert_with(|| GuardInfo::new(ended.trace));
                g.failures += 1;
                // An invalidated trace is thrown away at the next entry, not bridged.
                let opcode = parent.opcode(op).expect("the exit of a guard");
                let invalidated = opcode == Opcode::GuardNotInvalidated;
                let (n, ops) = state.bridge_ops;
                let needed = params.eagerness(n, ops).saturating_mul(1 << g.backoff);
                let due = live && !invalidated && !g.bridge_tried && g.failures >= needed;
                let bridge = due && Self::bridge_room(state, params, ended.trace);
                let g = state
                    .guards
                    .get_mut(&gid)
                    .expect("every guard is registered");
                // Traced now, or never (its loop has all the bridges it may have).
                g.bridge_tried |= due;
                g.attempts += u32::from(bridge);
                if self.log.guard_each || (bridge && self.log.guard) {
                    let at = g
                        .location
                        .as_deref()
                        .map_or(String::new(), |l| format!(" at {l}"));
                    log::line(
                        "guard",
                        &format!(
                            "guard {gid} of trace {} failed ({} times){}{at}",
                            ended.trace.0,
                            g.failures,
                            if bridge { ", tracing a bridge" } else { "" }
                        ),
                    );
                }
                if bridge {
                    // SAFETY: the guard's exit left the interpreter in its resume state.
                    return unsafe {
                        self.trace_bridge(state, params, &parent, ended.trace, op, &saved)
                    };
                }
                // The frames are the interpreter's state at the failed guard.
                Next::Blackhole(
                    parent
                        .frames(&state.codes, op, &saved)
                        .expect("the exit of a guard"),
                )
            }
            Outcome::Finish(values) => {
                let values = values.into_iter().map(from_ir).collect();
                if state.returns.contains(&ended.trace) {
                    Next::Done(Resumed::Return(values))
                } else {
                    Next::Done(Resumed::MergePoint(values))
                }
            }
            Outcome::Jump { target, args } => Next::Enter {
                loop_no: target,
                inputs: args,
                fresh: false,
            },
            Outcome::Iterations(_) => unreachable!("the runtime does not count iterations"),
        }
    }
}

/// What the driver does next (see [`JitDriver::drive`]).
enum Next {
    /// Enter compiled loop `loop_no` with these reds (`fresh`: from the interpreter).
    Enter {
        loop_no: u32,
        inputs: Vec<crate::ir::Value>,
        fresh: bool,
    },
    /// Run the blackhole interpreter on these frames (the interpreter's state) to the next
    /// merge point or the portal's return; the interpreter goes on from there.
    Blackhole(Vec<crate::jitcode::runner::Frame<'static>>),
    /// Run the blackhole interpreter on these frames, which stand at a merge point, and trace
    /// the loop there (see [`JitDriver::trace_here`]).
    TraceHere(Vec<crate::jitcode::runner::Frame<'static>>, Abort),
    /// The interpreter goes on from here.
    Done(Resumed),
}

impl Next {
    /// Enter compiled loop `loop_no`, whose merge point the interpreter (`fresh`) or a
    /// bridge's tracer stands at with these reds.
    fn enter(loop_no: u32, reds: &[Value], fresh: bool) -> Next {
        Next::Enter {
            loop_no,
            inputs: reds.iter().map(|v| to_ir(*v)).collect(),
            fresh,
        }
    }
}

/// The interpreter continues at the merge point with these greens and reds.
fn merge_point(mut greens: Vec<Value>, reds: Vec<Value>) -> Resumed {
    greens.extend(reds);
    Resumed::MergePoint(greens)
}

fn landed(l: Landed) -> Resumed {
    match l {
        Landed::MergePoint { greens, reds } => merge_point(greens, reds),
        Landed::Return(v) => Resumed::Return(v),
    }
}

/// Every compiled guard's failures and position, in guard-number order.
fn guard_counts(state: &State) -> Vec<log::GuardCount> {
    let mut out: Vec<log::GuardCount> = state
        .guards
        .iter()
        .map(|(&id, g)| log::GuardCount {
            id,
            trace: g.trace.0,
            failures: u64::from(g.failures),
            bridged: g.attempts > 0,
            location: g.location.as_deref().map(str::to_string),
        })
        .collect();
    out.sort_by_key(|g| g.id);
    out
}

/// The guard number of op `op` of compiled trace `p` (0 when unknown).
fn opt_guard_id(compiled: &HashMap<TraceId, Rc<resume::Exits>>, p: TraceId, op: usize) -> u32 {
    compiled.get(&p).and_then(|t| t.guard_id(op)).unwrap_or(0)
}

/// How many guards the end-of-run report lists.
const HOTTEST: usize = 10;

impl Drop for JitDriver {
    fn drop(&mut self) {
        let Ok(s) = self.state.try_borrow() else {
            return;
        };
        if self.log.summary {
            log::line("summary", &format!("{}: {}", self.name, s.stats.summary()));
        }
        if (self.log.summary || self.log.guard) && s.stats.guard_failures > 0 {
            log::section(
                "guards",
                &format!(
                    "{}: the hottest guards of {} failures",
                    self.name, s.stats.guard_failures
                ),
                &log::locate::hottest(&guard_counts(&s), HOTTEST),
            );
        }
        if let Some(file) = &self.log.html {
            let empty;
            let v = match &s.viewer {
                Some(v) => v,
                None => {
                    empty = log::viewer::Recorder::new(self.name, file);
                    &empty
                }
            };
            match v.write(&guard_counts(&s), &s.stats) {
                Ok(path) => log::line("html", &format!("{}: wrote {path}", self.name)),
                Err(e) => log::line("html", &format!("{}: {e}", self.name)),
            }
        }
    }
}
