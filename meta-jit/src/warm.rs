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
//! The driver is per thread and not reentrant: while it traces or runs compiled code, a nested
//! call of the portal (from a residual call) runs in the interpreter only.
//!
//! Owns: parameters, counters, cells, the compiled loops and their guards, statistics and the
//! JIT log's events. Must not know: any guest language, how ops are traced or compiled.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::thread::LocalKey;
use std::time::{Duration, Instant};

use crate::backend::{Backend, CompileOptions, TraceId};
use crate::blackhole::{self, Landed};
use crate::interp::Outcome;
use crate::ir::Trace;
use crate::jitcode::{JitCode, Value};
use crate::log::{self, Selection};
use crate::opt::{optimize_with_report, Options};
use crate::resume;
use crate::trace::{from_ir, to_ir, Close, Codes, Limits, Traced, Tracer};

/// The JIT's parameters (RPython's `set_param`).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Whether the JIT runs at all.
    pub enabled: bool,
    /// How many times a loop header is passed before it is traced.
    pub threshold: u32,
    /// How many times a guard fails before a bridge is traced from it.
    pub trace_eagerness: u32,
    /// The longest trace, in ops, before tracing aborts.
    pub trace_limit: usize,
    /// After this many aborts at one location, it is never traced again; before that, each
    /// abort doubles the count needed to trace it again.
    pub max_aborts: u32,
    /// The optimizer's stages (all by default).
    pub enable_opts: Options,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            enabled: true,
            threshold: 1039,
            trace_eagerness: 200,
            trace_limit: 6000,
            max_aborts: 4,
            enable_opts: Options::all(),
        }
    }
}

impl Params {
    /// Applies settings written `name=value,...` (`threshold`, `trace_eagerness`,
    /// `trace_limit`, `max_aborts`, `enable_opts` as in [`Options::parse`]), or `off`/`on`.
    pub fn set(&mut self, s: &str) -> Result<(), String> {
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let num = |v: &str| v.parse::<u64>().map_err(|e| format!("`{item}`: {e}"));
            match item.split_once('=') {
                None if item == "off" => self.enabled = false,
                None if item == "on" => self.enabled = true,
                Some(("threshold", v)) => self.threshold = num(v)?.max(1) as u32,
                Some(("trace_eagerness", v)) => self.trace_eagerness = num(v)?.max(1) as u32,
                Some(("trace_limit", v)) => self.trace_limit = num(v)? as usize,
                Some(("max_aborts", v)) => self.max_aborts = num(v)? as u32,
                Some(("enable_opts", v)) => self.enable_opts = Options::parse(v)?,
                _ => return Err(format!("unknown JIT parameter `{item}`")),
            }
        }
        Ok(())
    }

    /// The defaults with `METAJIT_PARAMS` applied (an error is reported on standard error).
    pub fn from_env() -> Params {
        let mut p = Params::default();
        if let Ok(s) = std::env::var("METAJIT_PARAMS") {
            if let Err(e) = p.set(&s) {
                eprintln!("meta-jit: METAJIT_PARAMS: {e}");
            }
        }
        p
    }
}

/// Whether a compiled trace is a loop or a bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A loop, entered from the interpreter.
    Loop,
    /// A bridge attached to a guard.
    Bridge,
}

/// One compiled trace, as statistics keep it.
#[derive(Clone, Debug)]
pub struct TraceRecord {
    /// Loop or bridge.
    pub kind: TraceKind,
    /// The trace as recorded.
    pub recorded: Trace,
    /// The trace as optimized and compiled.
    pub optimized: Trace,
}

impl TraceRecord {
    /// How many ops with this name the optimized trace has (RPython's `check_resops`).
    pub fn count(&self, opname: &str) -> usize {
        self.optimized
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
    /// Aborted traces' reasons.
    pub aborts: Vec<String>,
    /// Guard failures that went back to the interpreter or into a new bridge.
    pub guard_failures: usize,
    /// Times compiled code was entered from the interpreter.
    pub entries: usize,
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
    /// Number of compiled bridges.
    pub fn bridges(&self) -> usize {
        self.traces
            .iter()
            .filter(|t| t.kind == TraceKind::Bridge)
            .count()
    }
    /// The one-paragraph summary the log prints.
    pub fn summary(&self) -> String {
        format!(
            "loops: {}, bridges: {}, aborts: {}, guard failures: {}, entries: {}, \
             tracing: {:?}, optimizing: {:?}, compiling: {:?}",
            self.loops(),
            self.bridges(),
            self.aborts.len(),
            self.guard_failures,
            self.entries,
            self.tracing,
            self.optimizing,
            self.compiling
        )
    }
}

/// Where the interpreter stands after the driver ran something.
#[derive(Clone, Debug, PartialEq)]
pub enum Resumed {
    /// At the merge point, with these greens then reds (one value per register).
    MergePoint(Vec<Value>),
    /// The portal returned these values.
    Return(Vec<Value>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellState {
    Counting { aborts: u32 },
    Compiled { loop_no: u32 },
    DontTrace,
}

struct GuardInfo {
    failures: u32,
    bridge_tried: bool,
}

/// The driver's mutable state (borrowed while it works; see the module doc on reentrancy).
struct State {
    codes: Codes,
    backend: Backend,
    cells: HashMap<Vec<u64>, CellState>,
    /// Compiled loops by number: their trace ids.
    loops: Vec<TraceId>,
    /// The optimized trace of every compiled trace, by trace id (shared: a guard failure
    /// reads its trace's resume data while the driver's state changes).
    compiled: HashMap<TraceId, Rc<Trace>>,
    guards: HashMap<u32, GuardInfo>,
    next_guard: u32,
    stats: Stats,
}

const COUNTERS: usize = 4096;

/// The JIT of one portal on one thread.
pub struct JitDriver {
    name: &'static str,
    portal: fn() -> &'static JitCode,
    on: &'static LocalKey<OnFlag>,
    params: RefCell<Params>,
    log: Selection,
    counters: RefCell<Vec<u32>>,
    state: RefCell<State>,
}

impl JitDriver {
    /// A driver for the portal `name` whose jitcode `portal` returns, with the parameters of
    /// `METAJIT_PARAMS` and the log selection of `METAJIT_LOG`.
    /// `on` is the thread-local flag the native fast path tests, kept equal to
    /// [`Params::enabled`].
    pub fn new(
        name: &'static str,
        portal: fn() -> &'static JitCode,
        on: &'static LocalKey<OnFlag>,
    ) -> JitDriver {
        let params = Params::from_env();
        on.with(|f| f.set(params.enabled));
        JitDriver {
            name,
            portal,
            on,
            params: RefCell::new(params),
            log: Selection::from_env(),
            counters: RefCell::new(vec![0; COUNTERS]),
            state: RefCell::new(State {
                codes: Codes::default(),
                backend: Backend::new(),
                cells: HashMap::new(),
                loops: Vec::new(),
                compiled: HashMap::new(),
                guards: HashMap::new(),
                next_guard: 0,
                stats: Stats::default(),
            }),
        }
    }

    /// Whether the JIT is on (the cheap test of the native fast path).
    #[inline]
    pub fn is_on(&self) -> bool {
        self.params.borrow().enabled
    }

    /// The parameters.
    pub fn params(&self) -> Params {
        self.params.borrow().clone()
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
        self.state.borrow().stats.clone()
    }

    /// Forgets every compiled trace, counter and statistic (parameters stay).
    pub fn reset(&self) {
        let mut s = self.state.borrow_mut();
        *s = State {
            codes: Codes::default(),
            backend: Backend::new(),
            cells: HashMap::new(),
            loops: Vec::new(),
            compiled: HashMap::new(),
            guards: HashMap::new(),
            next_guard: 0,
            stats: Stats::default(),
        };
        self.counters.borrow_mut().iter_mut().for_each(|c| *c = 0);
    }

    fn slot(greens: &[Value]) -> usize {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in greens {
            h = (h ^ to_ir(*v).bits()).wrapping_mul(0x0100_0000_01b3);
            h ^= h >> 29;
        }
        (h as usize) & (COUNTERS - 1)
    }

    fn key(greens: &[Value]) -> Vec<u64> {
        greens.iter().map(|v| to_ir(*v).bits()).collect()
    }

    /// The slow path of [`can_enter_jit`]: the counter of these greens reached the threshold.
    ///
    /// # Safety
    /// `greens` and `reds` are the values of the portal's greens and reds at a
    /// `can_enter_jit!` followed by the jump to the merge point, in a state the native
    /// interpreter is in (the objects they reference are live and not borrowed elsewhere).
    unsafe fn hot(&self, greens: &[Value], reds: &[Value], slot: usize) -> Option<Resumed> {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return None; // reentrant call while the JIT works: interpret
        };
        let params = self.params.borrow().clone();
        let key = Self::key(greens);
        let cell = *state
            .cells
            .entry(key.clone())
            .or_insert(CellState::Counting { aborts: 0 });
        match cell {
            CellState::Compiled { loop_no } => {
                let id = state.loops[loop_no as usize];
                state.stats.entries += 1;
                // SAFETY: forwarded.
                Some(unsafe { self.run_compiled(&mut state, &params, id, greens, reds) })
            }
            CellState::DontTrace => {
                self.counters.borrow_mut()[slot] = 0;
                None
            }
            CellState::Counting { aborts } => {
                let needed = params.threshold.saturating_mul(1 << aborts.min(16));
                if self.counters.borrow()[slot] < needed {
                    return None;
                }
                self.counters.borrow_mut()[slot] = 0;
                // SAFETY: forwarded.
                Some(unsafe { self.trace_loop(&mut state, &params, key, aborts, greens, reds) })
            }
        }
    }

    unsafe fn trace_loop(
        &self,
        state: &mut State,
        params: &Params,
        key: Vec<u64>,
        aborts: u32,
        greens: &[Value],
        reds: &[Value],
    ) -> Resumed {
        let portal = (self.portal)();
        let t0 = Instant::now();
        let first_guard = state.next_guard;
        let State { codes, cells, .. } = state;
        let tracer = Tracer::at_merge_point(
            codes,
            portal,
            greens,
            reds,
            Limits {
                trace_limit: params.trace_limit,
            },
            first_guard,
        );
        let start = greens.to_vec();
        let mut decide = |g: &[Value]| {
            if g == start.as_slice() {
                Close::Loop
            } else if let Some(CellState::Compiled { loop_no }) = cells.get(&Self::key(g)) {
                Close::Jump(*loop_no)
            } else {
                Close::Continue
            }
        };
        // SAFETY: forwarded from `hot`.
        let traced = unsafe { tracer.run(&mut decide) };
        state.stats.tracing += t0.elapsed();
        match traced {
            Traced::Closed {
                trace,
                close,
                greens,
                reds,
            } => {
                let loop_no = state.loops.len() as u32;
                match self.compile(state, params, &trace, TraceKind::Loop, None) {
                    Ok(id) => {
                        state.loops.push(id);
                        state.backend.define_target(loop_no, id);
                        state.cells.insert(key, CellState::Compiled { loop_no });
                        // The tracer stands at the merge point where the trace closed: its own
                        // start, or another compiled loop's, or neither.
                        let next = match close {
                            Close::Loop => Some(id),
                            Close::Jump(n) => Some(state.loops[n as usize]),
                            Close::Continue | Close::Finish => None,
                        };
                        let Some(next) = next else {
                            return merge_point(greens, reds);
                        };
                        state.stats.entries += 1;
                        // SAFETY: the tracer left the interpreter at the merge point with
                        // these greens and reds, the entry of `next`.
                        unsafe { self.run_compiled(state, params, next, &greens, &reds) }
                    }
                    Err(e) => {
                        self.aborted(state, &format!("compilation failed: {e}"));
                        state.cells.insert(key, CellState::DontTrace);
                        merge_point(greens, reds)
                    }
                }
            }
            Traced::Aborted { reason, frames } => {
                self.aborted(state, &reason.to_string());
                let next = if aborts + 1 >= params.max_aborts {
                    CellState::DontTrace
                } else {
                    CellState::Counting { aborts: aborts + 1 }
                };
                state.cells.insert(key, next);
                // SAFETY: the tracer left the interpreter in the state of `frames`.
                landed(unsafe { blackhole::run(frames) })
            }
        }
    }

    fn aborted(&self, state: &mut State, reason: &str) {
        if self.log.abort {
            log::line("abort", &format!("{}: {reason}", self.name));
        }
        state.stats.aborts.push(reason.to_string());
    }

    /// Optimizes and compiles a trace (a bridge when `parent` is the guard it attaches to).
    fn compile(
        &self,
        state: &mut State,
        params: &Params,
        trace: &Trace,
        kind: TraceKind,
        parent: Option<(TraceId, usize)>,
    ) -> Result<TraceId, String> {
        let what = if kind == TraceKind::Loop {
            "loop"
        } else {
            "bridge"
        };
        if self.log.trace {
            log::section(
                "log-noopt",
                &format!("{what} of {}", self.name),
                &trace.to_string(),
            );
        }
        let t0 = Instant::now();
        let (opt, _report) = optimize_with_report(trace, &params.enable_opts);
        state.stats.optimizing += t0.elapsed();
        if self.log.opt {
            log::section(
                "log-opt",
                &format!("{what} of {}", self.name),
                &opt.to_string(),
            );
        }
        let t0 = Instant::now();
        let opts = CompileOptions::default();
        let id = match parent {
            None => state.backend.compile(&opt, &opts),
            Some((p, op)) => state.backend.compile_bridge(p, op, &opt, &opts),
        }
        .map_err(|e| format!("{e:?}"))?;
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
                &format!("{what} {}", id.0),
                &state.backend.disassemble(id, &opt),
            );
        }
        for op in &opt.ops {
            if let Some(r) = &op.resume {
                state.guards.insert(
                    r.id,
                    GuardInfo {
                        failures: 0,
                        bridge_tried: false,
                    },
                );
                state.next_guard = state.next_guard.max(r.id + 1);
            }
        }
        state.stats.traces.push(TraceRecord {
            kind,
            recorded: trace.clone(),
            optimized: opt.clone(),
        });
        state.compiled.insert(id, Rc::new(opt));
        Ok(id)
    }

    /// Runs compiled loop `id` from the merge point (`reds`), until the interpreter must take
    /// over.
    unsafe fn run_compiled(
        &self,
        state: &mut State,
        params: &Params,
        mut id: TraceId,
        greens: &[Value],
        reds: &[Value],
    ) -> Resumed {
        let _ = greens;
        let mut inputs: Vec<crate::ir::Value> = reds.iter().map(|v| to_ir(*v)).collect();
        loop {
            let ended = state
                .backend
                .run(id, &inputs)
                .expect("compiled loops take the reds");
            match ended.outcome {
                Outcome::GuardFailed { id: gid, op, saved } => {
                    state.stats.guard_failures += 1;
                    let g = state
                        .guards
                        .get_mut(&gid)
                        .expect("every guard is registered");
                    g.failures += 1;
                    let bridge = !g.bridge_tried && g.failures >= params.trace_eagerness;
                    if bridge {
                        g.bridge_tried = true;
                    }
                    if self.log.guard {
                        log::line(
                            "guard",
                            &format!(
                                "guard {gid} of trace {} failed ({} times){}",
                                ended.trace.0,
                                g.failures,
                                if bridge { ", tracing a bridge" } else { "" }
                            ),
                        );
                    }
                    let parent = Rc::clone(&state.compiled[&ended.trace]);
                    let r = parent.ops[op].resume.as_ref().expect("a guard");
                    if bridge {
                        // SAFETY: the guard's exit left the interpreter in its resume state.
                        match unsafe {
                            self.trace_bridge(state, params, &parent, ended.trace, op, &saved)
                        } {
                            BridgeEnd::Jump(next, values) => {
                                id = next;
                                inputs = values;
                                continue;
                            }
                            BridgeEnd::Resumed(r) => return r,
                        }
                    }
                    let frames = resume::frames(&state.codes, &parent, r, &saved);
                    // SAFETY: the frames are the interpreter's state at the failed guard.
                    return landed(unsafe { blackhole::run(frames) });
                }
                Outcome::Finish(values) => {
                    return Resumed::MergePoint(values.into_iter().map(from_ir).collect())
                }
                Outcome::Jump { target, args } => {
                    id = state.loops[target as usize];
                    inputs = args;
                }
                Outcome::Iterations(_) => unreachable!("the runtime does not count iterations"),
            }
        }
    }

    unsafe fn trace_bridge(
        &self,
        state: &mut State,
        params: &Params,
        parent: &Trace,
        parent_id: TraceId,
        op: usize,
        saved: &[crate::ir::Value],
    ) -> BridgeEnd {
        let r = parent.ops[op].resume.as_ref().expect("a guard");
        let Some((trace, frames)) = resume::bridge_frames(&state.codes, parent, r, saved) else {
            self.aborted(state, "bridge: virtual objects in resume data");
            let frames = resume::frames(&state.codes, parent, r, saved);
            // SAFETY: forwarded.
            return BridgeEnd::Resumed(landed(unsafe { blackhole::run(frames) }));
        };
        let t0 = Instant::now();
        let first_guard = state.next_guard;
        let State { codes, cells, .. } = &mut *state;
        let tracer = Tracer::with_frames(
            codes,
            (self.portal)(),
            trace,
            frames,
            Limits {
                trace_limit: params.trace_limit,
            },
            first_guard,
        );
        let mut decide = |g: &[Value]| match cells.get(&Self::key(g)) {
            Some(CellState::Compiled { loop_no }) => Close::Jump(*loop_no),
            _ => Close::Continue,
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
            } => {
                // Guard ids of the bridge continue after the parent's.
                let max = trace
                    .ops
                    .iter()
                    .filter_map(|o| o.resume.as_ref())
                    .map(|r| r.id + 1)
                    .max();
                state.next_guard = state.next_guard.max(max.unwrap_or(0));
                match self.compile(
                    state,
                    params,
                    &trace,
                    TraceKind::Bridge,
                    Some((parent_id, op)),
                ) {
                    Ok(_) => {}
                    Err(e) => self.aborted(state, &format!("bridge compilation failed: {e}")),
                }
                match close {
                    Close::Jump(n) => BridgeEnd::Jump(
                        state.loops[n as usize],
                        reds.iter().map(|v| to_ir(*v)).collect(),
                    ),
                    _ => BridgeEnd::Resumed(merge_point(greens, reds)),
                }
            }
            Traced::Aborted { reason, frames } => {
                self.aborted(state, &format!("bridge: {reason}"));
                // SAFETY: the tracer left the interpreter in the state of `frames`.
                BridgeEnd::Resumed(landed(unsafe { blackhole::run(frames) }))
            }
        }
    }
}

enum BridgeEnd {
    Jump(TraceId, Vec<crate::ir::Value>),
    Resumed(Resumed),
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

impl Drop for JitDriver {
    fn drop(&mut self) {
        if self.log.summary {
            if let Ok(s) = self.state.try_borrow() {
                log::line("summary", &format!("{}: {}", self.name, s.stats.summary()));
            }
        }
    }
}

/// `can_enter_jit!()` in the native interpreter: counts the location `vals[..greens]` and,
/// when it is hot or compiled, runs the JIT from the merge point with these greens and reds
/// (`vals[greens..]`). `None`: nothing ran, the interpreter goes on as it was.
///
/// # Safety
/// Called by the `#[jit::interpreter]` expansion only: `vals` are the portal's greens and reds
/// at a `can_enter_jit!` directly followed by the jump to its merge point, the references among
/// them live and usable for everything the interpreter does with them, and the caller assigns
/// what it gets back to the greens and reds (or returns it) before using them again.
#[inline]
pub unsafe fn can_enter_jit(driver: &JitDriver, vals: &Vals, greens: usize) -> Option<Resumed> {
    if !driver.is_on() {
        return None;
    }
    let (g, r) = vals.as_slice().split_at(greens);
    let slot = JitDriver::slot(g);
    {
        let mut c = driver.counters.borrow_mut();
        c[slot] = c[slot].saturating_add(1);
        if c[slot] < driver.params.borrow().threshold {
            return None;
        }
    }
    // SAFETY: forwarded.
    unsafe { driver.hot(g, r, slot) }
}

/// Whether the JIT is on, as a thread-local flag the native interpreter tests at every
/// `can_enter_jit!` (`None` until the driver has been created on this thread).
///
/// An `Option<bool>` is one byte (rustc stores `Some(b)` as `b`), so with the JIT off the
/// test the native interpreter makes is one compare of a thread-local byte with 0 (the hint
/// overhead benchmark measures it: `hint_overhead --callgrind`, in `meta-jit/examples`).
pub struct OnFlag(Cell<Option<bool>>);

impl OnFlag {
    /// Not known yet.
    pub const fn unknown() -> OnFlag {
        OnFlag(Cell::new(None))
    }
    /// The flag.
    #[inline]
    pub fn get(&self) -> Option<bool> {
        self.0.get()
    }
    /// Sets the flag.
    pub fn set(&self, on: bool) {
        self.0.set(Some(on));
    }
}

/// The greens and reds of a `can_enter_jit!`, without allocating.
pub struct Vals {
    len: usize,
    v: [Value; 16],
}

impl Default for Vals {
    #[inline]
    fn default() -> Vals {
        Vals {
            len: 0,
            v: [Value::Int(0); 16],
        }
    }
}

impl Vals {
    /// Appends a value (at most 16 registers of greens and reds).
    #[inline]
    pub fn push(&mut self, v: Value) {
        assert!(
            self.len < 16,
            "a portal may have at most 16 registers of greens and reds"
        );
        self.v[self.len] = v;
        self.len += 1;
    }
    /// The values.
    #[inline]
    pub fn as_slice(&self) -> &[Value] {
        &self.v[..self.len]
    }
    /// How many values.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A variable that can be a green or a red: its register values, read without moving it.
pub trait Live {
    /// Appends the values, as `JitType::to_values` orders them.
    fn push_values(&self, out: &mut Vals);
}

macro_rules! live_scalar {
    ($($t:ty),*) => {$(
        impl Live for $t {
            // Inlined so that the portal never passes the address of a green or red to an
            // opaque function: that would keep the variable in memory in the whole loop.
            #[inline]
            fn push_values(&self, out: &mut Vals) {
                out.push(crate::lower::Scalar::to_value(*self));
            }
        }
    )*};
}
live_scalar!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, f64);

impl<T> Live for &T {
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(*self as *const T as usize));
    }
}
impl<T> Live for &mut T {
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(&**self as *const T as usize));
    }
}
impl<T> Live for &[T] {
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(self.as_ptr() as usize));
        out.push(Value::Int(self.len() as i64));
    }
}

/// Takes the next values of `it` as a variable of type `T` (the expansion assigns greens and
/// reds back with it).
///
/// # Safety
/// The values are those of a live `T` (see `JitType::from_values`).
pub unsafe fn take<T: crate::lower::JitType>(it: &mut std::vec::IntoIter<Value>) -> T {
    // SAFETY: forwarded.
    unsafe { T::from_values(it) }
}
