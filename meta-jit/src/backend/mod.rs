//! The backend: compiles traces to x86-64 machine code, runs them, attaches bridges to their
//! guards, and frees them.
//!
//! This module is the driver. It owns every compiled trace of a [`Backend`]: its executable
//! memory (`code.rs`), its data block (invalidation flag and one bridge address per guard), its
//! exit table, and which traces jump into which. Code generation is in `x64/` and knows
//! nothing of the other traces beyond the addresses the driver gives it.
//!
//! How compiled code meets Rust: a trace is entered as `extern "C" fn(*mut u64) -> u64` with a
//! *deadframe*, a word array holding the iteration counter then the input values. Every exit
//! (a failing guard, `finish`, a `jump` to an unlinked target, the iteration limit) stores the
//! values it hands back in the deadframe and returns `trace << 32 | exit`. [`Backend::run`]
//! turns that into the reference interpreter's [`Outcome`], so tests compare the two directly.
//!
//! ```
//! use meta_jit::backend::{Backend, CompileOptions};
//! use meta_jit::interp::Outcome;
//! use meta_jit::ir::{parse::parse, Value};
//!
//! let t = parse("[i0, i1]
//!     i2 = int_add(i0, i1)
//!     i3 = int_sub(i1, 1)
//!     i4 = int_gt(i3, 0)
//!     guard_true(i4) [i2, i3]
//!     jump(i2, i3)").unwrap();
//! let mut b = Backend::new();
//! let id = b.compile(&t, &CompileOptions::default()).unwrap();
//! let end = b.run(id, &[Value::Int(0), Value::Int(10)]).unwrap();
//! assert_eq!(end.outcome, Outcome::GuardFailed { id: 0, op: 5, saved: vec![Value::Int(55), Value::Int(0)] });
//! ```

#[cfg(test)]
mod assembler_tests;
pub mod check;
mod code;
#[cfg(feature = "disasm")]
pub mod disasm;
mod x64;

pub use x64::CompileError;

use crate::interp::{Outcome, RunError};
use crate::ir::verify::verify;
use crate::ir::{Trace, Type, Value};
use code::{CodeArena, CodeMemory};
use hashbrown::HashMap;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use x64::regs::Loc;
use x64::{ExitInfo, ExitKind, Saved};

/// The number of a compiled trace in its [`Backend`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId(pub u32);

/// Options of a compilation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Count loop iterations at the back-edge and exit with [`Outcome::Iterations`] when the
    /// count given to [`Backend::run_with`] runs out (for tests against the reference
    /// interpreter's `Run { max_iterations }`; the runtime does not use it).
    pub count_iterations: bool,
    /// The trace's `finish` is where the portal returns (a function-entry trace or a bridge
    /// that runs to the return): its exit code carries [`RETURN_FLAG`] and it stores every
    /// value it hands back, constants too, so that a `call_assembler` reads the result from
    /// the deadframe without asking the runtime.
    pub returns: bool,
}

/// The bit of an exit code that says the exit is the `finish` of a trace compiled with
/// [`CompileOptions::returns`].
pub const RETURN_FLAG: u64 = 1 << 31;

/// The words of the deadframe a `call_assembler` keeps on the machine stack for the callee's
/// code (see `x64::call`): while any run waits, no trace handing back more than
/// `ASSEMBLER_FRAME_WORDS - 1` values is compiled, and the runtime uses that path only while
/// every compiled trace fits ([`Backend::frame_values`]). Even, to keep the stack aligned.
pub const ASSEMBLER_FRAME_WORDS: usize = DEADFRAME_MIN + 2;

/// How a run of compiled code ended: in which trace (a bridge or a trace jumped to may end
/// it), and how, exactly as the reference interpreter reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    /// The trace whose exit was taken.
    pub trace: TraceId,
    /// How it ended.
    pub outcome: Outcome,
}

/// One compiled trace.
struct Compiled {
    code: CodeMemory,
    /// Word 0: invalidated flag; word 1 + k: where the stub of guard slot k jumps: its
    /// bridge's entry, or its own code for "no bridge" (`no_bridge`). Shared with the
    /// [`Invalidation`] handles of the trace.
    data: Arc<[AtomicU64]>,
    exits: Vec<ExitInfo>,
    inner_entry: usize,
    /// Where a jump with the inputs in place comes in ([`x64::Assembled::placed_entry`]).
    placed_entry: Option<usize>,
    /// Where each input is at the placed entry.
    input_locs: Vec<Option<Loc>>,
    input_types: Vec<Type>,
    /// For a bridge: its parent and the parent's guard slot that jumps to it.
    parent: Option<(TraceId, usize)>,
    /// Traces whose code jumps into this one (bridges attached to it, linked jumps).
    entered_from: Vec<TraceId>,
    /// The index of the first op that has code (the first after the inputs), and where the
    /// code of each op from it on starts (4 bytes an op: a trace of 10,000 ops keeps 40 KB).
    op_first: usize,
    op_starts: Vec<u32>,
    /// Where the ops' code ends (out-of-line slow paths and exit stubs follow).
    ops_end: u32,
    stub_starts: Vec<(u32, usize)>,
    epilogue: usize,
    pool: usize,
    slots: u32,
    /// For each guard slot, the offset of its stub's code for "no bridge attached".
    no_bridge: Box<[u32]>,
    /// The heap objects the code and the resume data name, alive as long as this trace.
    _pins: crate::gc::Pins,
}

/// A set of compiled traces that may jump into each other.
#[derive(Default)]
pub struct Backend {
    traces: Vec<Option<Compiled>>,
    /// The executable memory the traces share.
    arena: CodeArena,
    targets: HashMap<u32, TraceId>,
    frame_values: usize,
    /// The deadframe lengths of the runs entered and not left yet, innermost last (see
    /// [`Backend::enter`]): code may be suspended in a call while the portal runs again.
    running: RefCell<Vec<usize>>,
    /// Traces freed while code was running: their code and tables stay until no run is left
    /// (a suspended run may return into them), see [`Backend::reap`].
    graveyard: Vec<(TraceId, Compiled)>,
    /// Deadframes of runs that were left, for the next runs (a loop entered often does not
    /// allocate one each time).
    spare: RefCell<Vec<Vec<u64>>>,
}

/// A run of compiled code entered and not left yet: [`Backend::enter`], then
/// [`Running::call`], then [`Backend::leave`].
pub struct Running {
    entry: usize,
    frame: Vec<u64>,
}

impl Running {
    /// Runs the compiled code until one of its exits; returns the raw exit code for
    /// [`Backend::leave`].
    ///
    /// # Safety
    /// The backend that entered this run has not left it, and every function the trace calls
    /// keeps the contract of `crate::call`.
    pub unsafe fn call(&mut self) -> u64 {
        // SAFETY: `entry` is the native entry of code the backend generated (the prologue of
        // `x64::compile`); it follows the C ABI with one pointer argument. The code stays
        // mapped while the run is not left (a trace freed meanwhile waits in the graveyard).
        // The deadframe holds at least `1 + frame_values` words for every trace this run can
        // reach: the backend's maximum when the run was entered, and a trace compiled since
        // then needs no more than the shortest deadframe of the runs entered (checked by
        // `compile_inner`).
        // The collector finds the run's values on the stack below this frame (see gc).
        let top = 0u64;
        let _run = crate::gc::Run::enter(std::hint::black_box(&top) as *const u64 as usize, &self.frame);
        unsafe {
            let entry: extern "C" fn(*mut u64) -> u64 = std::mem::transmute(self.entry);
            entry(self.frame.as_mut_ptr())
        }
    }
}

/// Words a deadframe has at least: room for the traces compiled while a run is suspended
/// (a trace that needs more is not compiled then).
const DEADFRAME_MIN: usize = 256;

/// Deadframes kept for the next runs at most.
const SPARE_FRAMES: usize = 8;

/// Invalidates one compiled trace when asked (see [`Backend::invalidation`]).
#[derive(Clone, Debug)]
pub struct Invalidation(Weak<[AtomicU64]>);

impl Invalidation {
    /// Makes the trace's `guard_not_invalidated` guards fail from now on.
    pub fn invalidate(&self) {
        if let Some(d) = self.0.upgrade() {
            d[0].store(1, Ordering::Release);
        }
    }

    /// Whether the trace is freed.
    pub fn is_gone(&self) -> bool {
        self.0.strong_count() == 0
    }
}

/// Statistics of one compiled trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// Bytes of machine code (stubs and constants included).
    pub code_bytes: usize,
    /// Spill slots of its frame.
    pub spill_slots: u32,
    /// Number of exits (guards, finish, unlinked jumps, iteration limit).
    pub exits: usize,
    /// About how many bytes of heap its tables take (exits and what each saves, op and stub
    /// positions, the bridge slots): an estimate for the JIT's memory limit.
    pub table_bytes: usize,
}

impl Backend {
    /// An empty backend.
    pub fn new() -> Backend {
        Backend::default()
    }

    /// Compiles a trace (verified first) and returns its number.
    pub fn compile(&mut self, t: &Trace, opts: &CompileOptions) -> Result<TraceId, CompileError> {
        self.compile_inner(t, opts, None)
    }

    /// Compiles `bridge`, whose inputs are the live values of guard `guard_op` (its op index)
    /// of trace `parent`, in order, and attaches it: from now on that guard's exit jumps
    /// straight to the bridge.
    pub fn compile_bridge(
        &mut self,
        parent: TraceId,
        guard_op: usize,
        bridge: &Trace,
        opts: &CompileOptions,
    ) -> Result<TraceId, CompileError> {
        let p = self
            .get(parent)
            .ok_or_else(|| CompileError(format!("no trace {parent:?}")))?;
        let exit = p
            .exits
            .iter()
            .find(|e| matches!(e.kind, ExitKind::Guard { op, .. } if op == guard_op))
            .ok_or_else(|| {
                CompileError(format!("trace {parent:?} has no guard at op {guard_op}"))
            })?;
        let ExitKind::Guard { slot, .. } = exit.kind else {
            unreachable!()
        };
        let want: Vec<Type> = exit
            .values
            .iter()
            .map(|s| match s {
                Saved::Frame(t) => *t,
                Saved::Const(v) => v.ty(),
            })
            .collect();
        let got: Vec<Type> = bridge.inputs().map(|r| bridge.type_of(r)).collect();
        if want != got {
            return Err(CompileError(format!(
                "the bridge takes {got:?}, the guard saves {want:?}"
            )));
        }
        let at = exit.at.clone();
        self.compile_inner(bridge, opts, Some((parent, slot, &at)))
    }

    fn compile_inner(
        &mut self,
        t: &Trace,
        opts: &CompileOptions,
        parent: Option<(TraceId, usize, &[Loc])>,
    ) -> Result<TraceId, CompileError> {
        verify(t).map_err(|e| CompileError(e.to_string()))?;
        // Objects the machine code and the resume data name stay alive as long as the trace.
        let pins = crate::gc::pin_constants(&t.consts);
        self.reap();
        let id = TraceId(self.traces.len() as u32);
        let guards = t.ops.iter().filter(|op| op.opcode.is_guard()).count();
        let data: Arc<[AtomicU64]> = (0..1 + guards).map(|_| AtomicU64::new(0)).collect();
        let mut linked = Vec::new();
        let targets = |n: u32| -> Option<x64::Entry> {
            let to = *self.targets.get(&n)?;
            let c = self.get(to)?;
            let in_regs = c
                .input_locs
                .iter()
                .flatten()
                .all(|l| matches!(l, Loc::Reg(_)));
            Some(x64::Entry {
                inner: c.inner_entry,
                placed: c
                    .placed_entry
                    .filter(|_| in_regs)
                    .map(|at| (at, c.input_locs.clone())),
            })
        };
        let link = x64::Link {
            trace_id: id.0,
            data: data.as_ptr() as usize,
            targets: &targets,
            count_iterations: opts.count_iterations,
            returns: opts.returns,
            inputs_at: parent.map(|p| p.2),
        };
        let mut asm = x64::compile(t, &link)?;
        if let Some(&least) = self.running.borrow().iter().min() {
            // A `call_assembler` of a waiting run may have a deadframe on the stack.
            let least = least.min(ASSEMBLER_FRAME_WORDS);
            if 1 + asm.frame_values > least {
                return Err(CompileError(format!(
                    "the trace hands back {} values, more than the deadframe of a run waiting \
                     in a call holds",
                    asm.frame_values
                )));
            }
        }
        for op in &t.ops {
            if let Some(d) = op.descr {
                if let crate::ir::DescrKind::Target(n) = t.get_descr(d).kind {
                    if let Some(&to) = self.targets.get(&n) {
                        linked.push(to);
                    }
                }
            }
        }
        let far = std::mem::take(&mut asm.far_jumps);
        let mut bytes = std::mem::take(&mut asm.code);
        let code = self
            .arena
            .place_with(&mut bytes, |addr, code| {
                x64::patch_far_jumps(addr, code, &far)
            })
            .map_err(|e| CompileError(format!("mmap: {e}")))?;
        let inner_entry = code.addr() + asm.inner_entry;
        for (k, &at) in asm.no_bridge.iter().enumerate() {
            data[1 + k].store((code.addr() + at as usize) as u64, Ordering::Release);
        }
        self.frame_values = self.frame_values.max(asm.frame_values);
        for to in linked {
            if let Some(c) = self.get_mut(to) {
                c.entered_from.push(id);
            }
        }
        let parent = parent.map(|(p, slot, _)| (p, slot));
        if let Some((p, slot)) = parent {
            let pc = self.get_mut(p).expect("checked by compile_bridge");
            pc.entered_from.push(id);
            // The guard's stub reads this word and jumps there, its values in place.
            let entry = code.addr() + asm.placed_entry.expect("a bridge has a placed entry");
            pc.data[1 + slot].store(entry as u64, Ordering::Release);
        }
        let placed_entry = asm.placed_entry.map(|at| code.addr() + at);
        asm.exits.shrink_to_fit();
        self.traces.push(Some(Compiled {
            placed_entry,
            input_locs: asm.input_locs,
            code,
            data,
            exits: asm.exits,
            inner_entry,
            input_types: t.inputs().map(|r| t.type_of(r)).collect(),
            parent,
            entered_from: Vec::new(),
            op_first: asm.op_starts.first().map_or(0, |s| s.0),
            op_starts: asm.op_starts.iter().map(|s| s.1 as u32).collect(),
            ops_end: asm.ops_end as u32,
            stub_starts: asm.stub_starts,
            epilogue: asm.epilogue,
            pool: asm.pool,
            slots: asm.slots,
            no_bridge: std::mem::take(&mut asm.no_bridge).into_boxed_slice(),
            _pins: pins,
        }));
        Ok(id)
    }

    fn get(&self, id: TraceId) -> Option<&Compiled> {
        self.traces.get(id.0 as usize).and_then(Option::as_ref)
    }

    fn get_mut(&mut self, id: TraceId) -> Option<&mut Compiled> {
        self.traces.get_mut(id.0 as usize).and_then(Option::as_mut)
    }

    /// Makes `jump(..., descr=T)` with `T = target(n)` go to trace `id` in traces compiled
    /// from now on (a jump to a target that is not defined exits with [`Outcome::Jump`]).
    pub fn define_target(&mut self, n: u32, id: TraceId) {
        self.targets.insert(n, id);
    }

    /// Runs trace `id` on `inputs` (no iteration limit).
    pub fn run(&self, id: TraceId, inputs: &[Value]) -> Result<Ended, RunError> {
        self.run_with(id, inputs, u64::MAX)
    }

    /// Runs trace `id` on `inputs`; a trace compiled with
    /// [`CompileOptions::count_iterations`] stops after `max_iterations` back-edges, as the
    /// reference interpreter's `Run { max_iterations }` does.
    pub fn run_with(
        &self,
        id: TraceId,
        inputs: &[Value],
        max_iterations: u64,
    ) -> Result<Ended, RunError> {
        let mut run = self.enter(id, inputs, max_iterations)?;
        // SAFETY: entered just now and left just after.
        let code = unsafe { run.call() };
        Ok(self.leave(run, code))
    }

    /// Enters trace `id` with `inputs` (see [`Backend::run_with`] for `max_iterations`): the
    /// run's code and everything it can reach stay in place until [`Backend::leave`], even if
    /// they are freed meanwhile (the driver lets the portal run again while code waits in a
    /// call). Runs are left in the reverse order they were entered.
    pub fn enter(
        &self,
        id: TraceId,
        inputs: &[Value],
        max_iterations: u64,
    ) -> Result<Running, RunError> {
        let c = self
            .get(id)
            .ok_or_else(|| RunError(format!("no trace {id:?}")))?;
        if inputs.len() != c.input_types.len() {
            return Err(RunError(format!(
                "{} inputs for a trace of {}",
                inputs.len(),
                c.input_types.len()
            )));
        }
        for (k, (v, &t)) in inputs.iter().zip(&c.input_types).enumerate() {
            if v.ty() != t {
                return Err(RunError(format!("input {k} is {v:?}, not {t:?}")));
            }
        }
        let len = 1 + self.frame_values.max(inputs.len()).max(DEADFRAME_MIN);
        let mut frame = self.spare.borrow_mut().pop().unwrap_or_default();
        // Only what the code reads is set: the counter and the inputs (an exit writes every
        // value it hands back before the driver reads it).
        frame.resize(len.max(frame.len()), 0);
        // The interpreter stops when the count of back-edges reaches the limit (at the first
        // one for a limit of 0), compiled code when the counter drops to 0 or below.
        frame[0] = max_iterations.clamp(1, i64::MAX as u64);
        for (k, v) in inputs.iter().enumerate() {
            frame[1 + k] = v.bits();
        }
        self.running.borrow_mut().push(frame.len());
        Ok(Running {
            entry: c.code.addr(),
            frame,
        })
    }

    /// Leaves a run that returned `code` from [`Running::call`]: how it ended. Call
    /// [`Backend::reap`] afterwards to free what was freed while it ran.
    pub fn leave(&self, run: Running, code: u64) -> Ended {
        let left = self.running.borrow_mut().pop();
        debug_assert_eq!(left, Some(run.frame.len()), "runs are left innermost first");
        let frame = run.frame;
        let ended = self.ended(code, &frame);
        let mut spare = self.spare.borrow_mut();
        // As many as runs usually nest; a deep recursion's frames are not all kept.
        if spare.len() < SPARE_FRAMES {
            spare.push(frame);
        }
        ended
    }

    /// How code that returned `code` with the deadframe `frame` ended (what [`Backend::leave`]
    /// reads; also for the deadframe a `call_assembler` keeps on the stack).
    pub fn ended(&self, code: u64, frame: &[u64]) -> Ended {
        let (tid, exit) = (
            TraceId((code >> 32) as u32),
            (code & 0xffff_ffff & !RETURN_FLAG) as usize,
        );
        let ended = self
            .get(tid)
            .or_else(|| {
                self.graveyard
                    .iter()
                    .find(|(t, _)| *t == tid)
                    .map(|(_, c)| c)
            })
            .and_then(|c| c.exits.get(exit))
            .expect("compiled code returns the code of one of this backend's exits");
        let values: Vec<Value> = ended
            .values
            .iter()
            .enumerate()
            .map(|(k, s)| match s {
                Saved::Frame(t) => Value::from_bits(*t, frame[1 + k]),
                Saved::Const(v) => *v,
            })
            .collect();
        let outcome = match ended.kind {
            ExitKind::Guard { id, op, .. } => Outcome::GuardFailed {
                id,
                op,
                saved: values,
            },
            ExitKind::Finish => Outcome::Finish(values),
            ExitKind::Jump { target } => Outcome::Jump {
                target,
                args: values,
            },
            ExitKind::Iterations => Outcome::Iterations(values),
        };
        Ended {
            trace: tid,
            outcome,
        }
    }

    /// The most deadframe values any trace compiled so far hands back.
    pub fn frame_values(&self) -> usize {
        self.frame_values
    }

    /// How many runs are entered and not left (more than one while the portal runs again
    /// from a call that compiled code made).
    pub fn running(&self) -> usize {
        self.running.borrow().len()
    }

    /// Frees the code of the traces freed while code was running, once no run is left.
    pub fn reap(&mut self) {
        if self.running() == 0 {
            for (_, c) in std::mem::take(&mut self.graveyard) {
                self.arena.free(c.code);
            }
        }
    }

    /// Marks trace `id` invalidated: its `guard_not_invalidated` guards fail from now on.
    pub fn invalidate(&self, id: TraceId) {
        if let Some(c) = self.get(id) {
            c.data[0].store(1, Ordering::Release);
        }
    }

    /// Whether trace `id` was invalidated (see [`Backend::invalidate`]).
    pub fn is_invalidated(&self, id: TraceId) -> bool {
        self.get(id)
            .is_some_and(|c| c.data[0].load(Ordering::Acquire) != 0)
    }

    /// A handle that invalidates trace `id` from anywhere, also from another thread or while
    /// the trace runs, as long as the trace is not freed (after that it does nothing).
    pub fn invalidation(&self, id: TraceId) -> Option<Invalidation> {
        self.get(id).map(|c| Invalidation(Arc::downgrade(&c.data)))
    }

    /// Frees trace `id`'s code, with every trace that jumps into it (its bridges, traces
    /// linked to it), and detaches it from its parent guard if it is a bridge. Returns the
    /// traces freed. (It cannot happen while compiled code runs: [`Backend::run`] borrows the
    /// backend for as long as the code runs, and this needs it mutably.)
    pub fn free(&mut self, id: TraceId) -> Vec<TraceId> {
        let mut freed = Vec::new();
        let mut todo = vec![id];
        while let Some(t) = todo.pop() {
            let Some(c) = self.traces.get_mut(t.0 as usize).and_then(Option::take) else {
                continue;
            };
            if let Some((p, slot)) = c.parent {
                if let Some(pc) = self.get_mut(p) {
                    let back = pc.code.addr() + pc.no_bridge[slot] as usize;
                    pc.data[1 + slot].store(back as u64, Ordering::Release);
                    pc.entered_from.retain(|&x| x != t);
                }
            }
            self.targets.retain(|_, v| *v != t);
            todo.extend(c.entered_from.iter().copied());
            if self.running() == 0 {
                self.arena.free(c.code);
            } else {
                // A suspended run may return into it: freed when no run is left.
                self.graveyard.push((t, c));
            }
            freed.push(t);
        }
        freed
    }

    /// Bytes of executable memory the traces took, in the chunks that are still mapped (the
    /// room of a freed trace counts until its chunk goes).
    pub fn code_memory(&self) -> usize {
        self.arena.used()
    }

    /// Whether trace `id` is compiled (not freed).
    pub fn is_live(&self, id: TraceId) -> bool {
        self.get(id).is_some()
    }

    /// The address of trace `id`'s code.
    pub fn code_addr(&self, id: TraceId) -> Option<usize> {
        self.get(id).map(|c| c.code.addr())
    }

    /// Statistics of trace `id`.
    pub fn info(&self, id: TraceId) -> Option<CodeInfo> {
        self.get(id).map(|c| CodeInfo {
            code_bytes: c.code.len(),
            spill_slots: c.slots,
            exits: c.exits.len(),
            table_bytes: {
                use std::mem::size_of;
                let exits: usize = c
                    .exits
                    .iter()
                    .map(|e| {
                        size_of::<x64::ExitInfo>()
                            + e.values.len() * size_of::<x64::Saved>()
                            + e.at.len() * size_of::<x64::regs::Loc>()
                    })
                    .sum();
                size_of::<Compiled>()
                    + exits
                    + c.data.len() * 8
                    + (c.input_locs.capacity() + c.input_types.capacity()) * 16
                    + c.op_starts.capacity() * size_of::<u32>()
                    + c.stub_starts.capacity() * size_of::<(u32, usize)>()
            },
        })
    }

    /// The machine code of trace `id`, disassembled, with each line of `t` (the trace it was
    /// compiled from) as a comment above its instructions.
    pub fn disassemble(&self, id: TraceId, t: &Trace) -> String {
        let Some(c) = self.get(id) else {
            return format!("; trace {id:?} is not compiled\n");
        };
        let names = crate::ir::print::Names::new(t);
        let mut sections = vec![(0, format!("trace {} entry", id.0))];
        for (k, &at) in c.op_starts.iter().enumerate() {
            sections.push((at as usize, names.op_line(t, c.op_first + k)));
        }
        let first_stub = c.stub_starts.first().map_or(c.epilogue, |s| s.1);
        if (c.ops_end as usize) < first_stub {
            sections.push((
                c.ops_end as usize,
                "out of line: allocation slow paths, safe points".to_string(),
            ));
        }
        for &(e, at) in &c.stub_starts {
            let what = match &c.exits[e as usize].kind {
                ExitKind::Guard { id, op, .. } => format!("exit {e}: guard #{id} (op {op})"),
                ExitKind::Iterations => format!("exit {e}: iteration limit"),
                k => format!("exit {e}: {k:?}"),
            };
            sections.push((at, what));
        }
        sections.push((c.epilogue, "epilogue".to_string()));
        #[cfg(feature = "disasm")]
        return disasm::listing(self.arena.bytes(&c.code), &sections, c.pool);
        #[cfg(not(feature = "disasm"))]
        return format!(
            "; {} bytes of code: meta-jit was built without its `disasm` feature\n",
            self.arena.bytes(&c.code).len()
        );
    }

    /// The code of op `i` of trace `id`, one instruction per line (for tests).
    pub fn op_code(&self, id: TraceId, i: usize) -> Vec<String> {
        let Some(c) = self.get(id) else {
            return vec![];
        };
        let Some(k) = i.checked_sub(c.op_first).filter(|&k| k < c.op_starts.len()) else {
            return vec![];
        };
        let start = c.op_starts[k] as usize;
        let end = c.op_starts.get(k + 1).copied().unwrap_or(c.ops_end) as usize;
        #[cfg(feature = "disasm")]
        return disasm::instructions(&self.arena.bytes(&c.code)[start..end]);
        #[cfg(not(feature = "disasm"))]
        return vec![format!("({} bytes; no `disasm` feature)", end - start)];
    }
}
