//! The meta-interpreter (RPython's `pyjitpl`): runs the interpreter's jitcode on concrete values
//! and records, as trace IR, every operation that depends on something not constant.
//!
//! Every register of every active jitcode frame holds a concrete value (in a runner
//! [`Frame`], executed by the runner's own [`Frame::exec`], so tracing, the runner and the
//! blackhole interpreter agree on every op) and a *shadow*: what the trace knows of it, a
//! constant or a trace op. An op whose inputs are all constant is folded on the spot (its
//! shadow becomes the constant the concrete execution computed); the others are executed and
//! recorded. Branching on a non-constant value records a guard whose resume data names every
//! active frame, its pc and the shadows of its live registers ([`JitCode::live_at`]).
//!
//! The trace starts at the portal's merge point (a loop) or at a failed guard's resume state (a
//! bridge) and ends where the caller's [`Close`] decision says, at a merge point of the portal
//! frame. Everything that cannot be traced aborts cleanly with the concrete state the
//! interpreter continues from ([`Traced::Aborted`]).
//!
//! Every value folded from the objects the greens reference is also written down, as a fact
//! of the trace's [`Fingerprint`], for the driver to check before it reuses the trace. A read of
//! a quasi-immutable field of a constant object folds under `guard_not_invalidated`; a write of
//! one records (and makes) the call into `crate::warm::quasi` that invalidates the code that
//! folded it.
//!
//! A call of the portal itself (a recursive portal call) is followed to the callee's merge
//! point, where the driver decides whether to go on inlining it or to record a
//! `call_assembler` of the callee's function-entry code (`portal`).
//!
//! Owns: frames, shadows, guards and their resume data, merge points and closing. The mapping
//! of each data op to IR is in `record`, the facts in `fingerprint`, what a repeated load,
//! pure op or guard can reuse in `heapcache`, the checks of hints in compiled code in `hints`. Must not know: optimization (beyond not
//! recording a repeat), machine code, hot counters, or anything about a guest language.

mod arith;
mod fingerprint;
mod heapcache;
mod hints;
mod inline;
mod portal;
mod record;

use hashbrown::{HashMap, HashSet};

use crate::ir::{self, DescrKind, FrameInfo, Op as IrOp, OpRef, Opcode, Resume, Trace};
use crate::jitcode::runner::Frame;
use crate::jitcode::{JitCode, Op, Register, Value};

pub use fingerprint::{Check, Fact, Fingerprint, GreenLife};
pub use inline::{inlinable, Inlinable};
pub use portal::{Assembler, PortalCalls, MAX_REDS};
pub use record::ir_type;

/// The jitcodes a driver's traces refer to: resume data names a frame's jitcode by its index
/// here.
#[derive(Default, Debug)]
pub struct Codes {
    list: Vec<&'static JitCode>,
}

impl Codes {
    /// The index of `code`, added on first use.
    pub fn index(&mut self, code: &'static JitCode) -> u32 {
        if let Some(i) = self.list.iter().position(|c| std::ptr::eq(*c, code)) {
            return i as u32;
        }
        self.list.push(code);
        self.list.len() as u32 - 1
    }
    /// The jitcode with index `i`.
    pub fn get(&self, i: u32) -> &'static JitCode {
        self.list[i as usize]
    }
}

/// What to do when the portal frame reaches its merge point with some greens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Close {
    /// Go on tracing.
    Continue,
    /// Close the loop: `jump` back to the trace's own start with the reds.
    Loop,
    /// `jump` to compiled loop `n` (a `Target(n)` descriptor) with the reds.
    Jump(u32),
    /// `finish` with the greens and the reds: the interpreter continues from there.
    Finish,
    /// A bridge or a function-entry trace reached the portal's return: `finish` with the
    /// returned values (the
    /// [`Traced::Closed`] reds), which the portal returns.
    Return,
    /// Go on tracing, unless these greens are those of a loop header (a merge point right
    /// after `can_enter_jit!`) the trace passed before: then the trace has unrolled an inner
    /// loop once, and it aborts with [`Abort::InnerLoop`] at this merge point, so that the
    /// driver can trace that loop first (RPython closes the inner loop there instead).
    TraceFirst,
    /// Stop with [`Abort::Reentered`]: these are the trace's own greens, but reached without
    /// passing `can_enter_jit!` (not as a loop header), so the trace left its loop and came
    /// back in from outside. The driver traces the loop again from here, its entry.
    Reenter,
}

/// Why tracing stopped without a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abort {
    /// The trace grew longer than the limit.
    TooLong,
    /// An op the tracer cannot record (with what it is).
    Unsupported(String),
    /// The interpreter is about to panic (overflow, bounds, `panic!`): the blackhole
    /// interpreter re-executes the op natively and raises the panic.
    Panic(String),
    /// The portal returned before the loop closed.
    PortalReturned,
    /// The trace reached an inner loop's header for the second time (see
    /// [`Close::TraceFirst`]); the interpreter stands at that merge point.
    InnerLoop,
    /// The trace came back to its start from outside its loop (see [`Close::Reenter`]); the
    /// interpreter stands at that merge point.
    Reentered,
}

impl std::fmt::Display for Abort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Abort::TooLong => write!(f, "trace too long"),
            Abort::Unsupported(s) => write!(f, "unsupported: {s}"),
            Abort::Panic(s) => write!(f, "the interpreter panics: {s}"),
            Abort::PortalReturned => write!(f, "the portal returned"),
            Abort::InnerLoop => write!(f, "an inner loop to trace first"),
            Abort::Reentered => write!(f, "the trace left its loop and came back in"),
        }
    }
}

/// How tracing ended.
#[derive(Debug)]
pub enum Traced {
    /// The trace is complete. `greens` and `reds` are the concrete values at the merge point
    /// where it closed, which is where the interpreter stands now.
    Closed {
        /// The trace (not optimized).
        trace: Trace,
        /// How it ends.
        close: Close,
        /// The greens at the closing merge point.
        greens: Vec<Value>,
        /// The reds at the closing merge point.
        reds: Vec<Value>,
        /// What the trace folded from the objects its greens reference.
        fingerprint: Fingerprint,
        /// The merge points the trace passed (see [`Mark`]).
        marks: Vec<Mark>,
    },
    /// Tracing stopped; the interpreter continues from `frames` (outermost first; the top
    /// frame's pc is an op not executed yet, the others' pcs their inline calls).
    Aborted {
        /// Why.
        reason: Abort,
        /// The concrete state.
        frames: Vec<Frame<'static>>,
        /// What the trace had folded from the objects its greens reference.
        fingerprint: Fingerprint,
        /// The merge points the trace passed (see [`Mark`]): the last one is where it was
        /// when it stopped.
        marks: Vec<Mark>,
    },
    /// The trace grew longer than the limit and was cut short at the last loop header (a
    /// merge point of the portal right after `can_enter_jit!`) it passed, where it now ends
    /// with a `finish` (the greens and the reds): the interpreter continues from there when
    /// compiled code gets there, and counts that loop towards compiling it. Only a tracer made
    /// [`Tracer::cutting`] returns it. Tracing ran on beyond that merge point: the
    /// interpreter continues from `frames`, as after [`Traced::Aborted`].
    Cut {
        /// The trace up to the merge point, ended by its `finish` (not optimized).
        trace: Trace,
        /// What the trace folded from the objects its greens reference (also past the cut:
        /// more facts to check, never fewer).
        fingerprint: Fingerprint,
        /// The merge points the trace passed up to the cut (see [`Mark`]).
        marks: Vec<Mark>,
        /// The concrete state where tracing stopped.
        frames: Vec<Frame<'static>>,
    },
}

/// Where a trace can end if it grows too long (see [`Tracer::cutting`]): the last loop header
/// of the portal frame that tracing went on from.
struct CutPoint {
    /// The length of the trace there (after the greens' promotions).
    ops: usize,
    /// How many marks the trace had passed there.
    marks: usize,
    /// The `finish` arguments there: the greens' shadows, then the reds'.
    args: Vec<OpRef>,
}

/// A merge point of the portal that a trace passed (PyPy's `debug_merge_point`): the ops
/// recorded from index `at` on come from the guest position these greens name, up to the next
/// mark. The driver renders the greens as text with the interpreter's location hook.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The index in the recorded trace of the first op recorded at this position.
    pub at: usize,
    /// The greens at the merge point.
    pub greens: Vec<Value>,
}

/// Parameters of one tracing run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Abort when the trace has more ops than this.
    pub trace_limit: usize,
    /// Record, before each `record_known_result!` and `record_exact_value!`, a call that
    /// checks the claim every time compiled code passes there (the JIT parameter
    /// `check_hints=1`; see `hints`).
    pub check_hints: bool,
}

/// One frame of the meta-interpreter: the concrete frame and the shadows of its ordinary
/// registers.
pub struct TraceFrame {
    /// The concrete registers and the pc.
    pub frame: Frame<'static>,
    /// Index of the jitcode in [`Codes`].
    pub code_index: u32,
    /// Shadows of the ordinary registers, per bank (int, float, ref).
    pub shadow: [Vec<OpRef>; 3],
    /// An inlined call of the portal that has not reached its merge point yet (see
    /// `portal`).
    pub portal_entry: bool,
    /// An inlined call of the portal that the trace goes on inlining: its callee's greens at
    /// its entry.
    pub portal_greens: Option<Vec<Value>>,
}

/// Converts a jitcode value to a trace IR value.
pub fn to_ir(v: Value) -> ir::Value {
    match v {
        Value::Int(i) => ir::Value::Int(i),
        Value::Float(f) => ir::Value::Float(f),
        Value::Ref(a) => ir::Value::Ref(a),
    }
}

/// Converts a trace IR value to a jitcode value.
pub fn from_ir(v: ir::Value) -> Value {
    match v {
        ir::Value::Int(i) => Value::Int(i),
        ir::Value::Float(f) => Value::Float(f),
        ir::Value::Ref(a) => Value::Ref(a),
    }
}

impl TraceFrame {
    /// A frame of `code` whose registers are all zero constants in the trace.
    pub fn new(code: &'static JitCode, code_index: u32, zero: [OpRef; 3]) -> TraceFrame {
        TraceFrame {
            frame: Frame::new(code),
            code_index,
            shadow: [0, 1, 2].map(|b| vec![zero[b]; usize::from(code.num_regs[b])]),
            portal_entry: false,
            portal_greens: None,
        }
    }
}

/// The meta-interpreter.
pub struct Tracer<'c> {
    /// The trace being recorded.
    pub trace: Trace,
    /// The active frames, outermost (the portal) first.
    pub frames: Vec<TraceFrame>,
    codes: &'c mut Codes,
    portal: &'static JitCode,
    limits: Limits,
    next_guard: u32,
    fp: Fingerprint,
    field_descrs: HashMap<String, ir::DescrId>,
    call_descrs: HashMap<usize, ir::DescrId>,
    /// Field and array descriptors of the jitcode by address, with their trace descriptors.
    descr_at: HashMap<usize, ir::DescrId>,
    /// The last op run was the portal's `can_enter_jit!`: the next merge point is a loop
    /// header.
    at_header: bool,
    /// The greens (as bits) of the loop headers the trace passed.
    headers: HashSet<Vec<u64>>,
    /// A bridge: the portal's return ends it ([`Close::Return`]) instead of aborting it.
    returns: bool,
    /// What the trace recorded that a repeat can reuse.
    cache: heapcache::HeapCache,
    /// The merge points passed.
    marks: Vec<Mark>,
    /// The inputs of the op being recorded (kept to reuse its allocation).
    scratch: Vec<record::Tv>,
    /// The greens the trace starts at (none for a bridge).
    start: Vec<Value>,
    /// What the driver says about recursive portal calls (none: they are inlined).
    calls: Option<&'c mut dyn PortalCalls>,
    /// The compiled loops the trace takes in where it reaches them (see `inline`).
    inlinable: Option<Inlinable>,
    /// The frames were replaced at a merge point (by an inlined loop): the top frame's pc is
    /// the next op to run.
    resumed: bool,
    /// A trace too long ends at its last loop header instead of aborting (see
    /// [`Tracer::cutting`]).
    cutting: bool,
    /// That merge point.
    cut: Option<CutPoint>,
}

impl<'c> Tracer<'c> {
    /// A tracer that starts a loop at the portal's merge point with these greens and reds
    /// (one value per register of the merge point's greens and reds): greens become
    /// constants, reds the trace's inputs. Guard ids start at `first_guard`. `life`: how long
    /// the objects the greens reference stay (see [`Fingerprint`]).
    pub fn at_merge_point(
        codes: &'c mut Codes,
        portal: &'static JitCode,
        greens: &[Value],
        reds: &[Value],
        limits: Limits,
        first_guard: u32,
        life: GreenLife,
    ) -> Tracer<'c> {
        let mp = merge_point_pc(portal);
        let Op::JitMergePoint {
            greens: gr,
            reds: rr,
        } = &portal.ops[mp]
        else {
            unreachable!()
        };
        let mut trace = Trace::new();
        let inputs: Vec<OpRef> = rr.iter().map(|r| trace.input(ir_type(r.kind))).collect();
        let roots = gr.iter().zip(greens).filter_map(|(_, v)| match v {
            Value::Ref(a) => Some((*a, life == GreenLife::Pinned)),
            _ => None,
        });
        let fp = if life == GreenLife::Static {
            Fingerprint::eternal()
        } else {
            Fingerprint::trusting(roots)
        };
        let mut t = Tracer::empty(codes, portal, trace, limits, first_guard, fp);
        let ci = t.codes.index(portal);
        let zero = t.zeros();
        let mut f = TraceFrame::new(portal, ci, zero);
        for (&r, &v) in gr.iter().zip(greens) {
            f.frame.set(r, v);
            f.shadow[r.kind.bank()][usize::from(r.index)] = t.trace.constant(to_ir(v));
        }
        for ((&r, &v), &i) in rr.iter().zip(reds).zip(&inputs) {
            f.frame.set(r, v);
            f.shadow[r.kind.bank()][usize::from(r.index)] = i;
        }
        f.frame.pc = mp + 1;
        t.frames.push(f);
        t.start = greens.to_vec();
        t.marks.push(Mark {
            at: t.trace.ops.len(),
            greens: greens.to_vec(),
        });
        t
    }

    /// A tracer that continues from `frames` (a bridge: the trace's inputs and the shadows
    /// were set up by the caller from a guard's resume data), trusting the addresses the
    /// guard's trace trusted (see [`Fingerprint`]).
    pub fn with_frames(
        codes: &'c mut Codes,
        portal: &'static JitCode,
        trace: Trace,
        frames: Vec<TraceFrame>,
        limits: Limits,
        first_guard: u32,
        trusted: Fingerprint,
    ) -> Tracer<'c> {
        let mut t = Tracer::empty(codes, portal, trace, limits, first_guard, trusted);
        t.frames = frames;
        t.returns = true;
        t
    }

    /// The same tracer, ended by the portal's return ([`Close::Return`]) instead of aborted
    /// there: a function-entry trace.
    pub fn returning(mut self) -> Tracer<'c> {
        self.returns = true;
        self
    }

    /// The same tracer, which, when the trace grows longer than the limit, ends it at the
    /// last loop header of the portal it passed with a `finish` there ([`Traced::Cut`])
    /// instead of aborting (when it passed none, it aborts). For a bridge: its compiled part then runs
    /// instead of the interpreter, which takes over at that merge point (a bridge that is
    /// too long otherwise sends every failure of its guard through the interpreter).
    pub fn cutting(mut self) -> Tracer<'c> {
        self.cutting = true;
        self
    }

    /// The same tracer, asking `calls` at every recursive portal call whether to inline it
    /// or call its compiled code (see `portal`); without, it inlines them all.
    pub fn with_calls(mut self, calls: &'c mut dyn PortalCalls) -> Tracer<'c> {
        self.calls = Some(calls);
        self
    }

    /// The same tracer, taking in the code of these loops (by loop number) where it reaches
    /// their merge point instead of closing with a `jump` to them (see `inline`).
    pub fn with_inlining(mut self, loops: Inlinable) -> Tracer<'c> {
        self.inlinable = Some(loops);
        self
    }

    fn empty(
        codes: &'c mut Codes,
        portal: &'static JitCode,
        trace: Trace,
        limits: Limits,
        next_guard: u32,
        fp: Fingerprint,
    ) -> Tracer<'c> {
        let mut trace = trace;
        // The trace grows op by op up to the limit: growing it by reallocation copied it and
        // touched fresh pages again (reserving saved about 5% of the tracing time of a
        // benchmark whose bridges run to 3,000 ops).
        trace.ops.reserve(
            limits
                .trace_limit
                .min(1 << 16)
                .saturating_sub(trace.ops.len())
                + 64,
        );
        Tracer {
            trace,
            frames: Vec::new(),
            codes,
            portal,
            limits,
            next_guard,
            fp,
            field_descrs: HashMap::new(),
            call_descrs: HashMap::new(),
            descr_at: HashMap::new(),
            at_header: false,
            headers: HashSet::new(),
            returns: false,
            cache: heapcache::HeapCache::default(),
            marks: Vec::new(),
            scratch: Vec::new(),
            start: Vec::new(),
            calls: None,
            inlinable: None,
            resumed: false,
            cutting: false,
            cut: None,
        }
    }

    /// The zero constants of the three kinds.
    pub fn zeros(&mut self) -> [OpRef; 3] {
        [self.trace.int(0), self.trace.float(0.0), self.trace.ptr(0)]
    }

    fn top(&mut self) -> &mut TraceFrame {
        self.frames.last_mut().expect("a frame is active")
    }

    /// The shadow of a register of the top frame (a constant register is its constant).
    fn shadow(&mut self, r: Register) -> OpRef {
        let f = self.frames.last().expect("a frame is active");
        if let Some(c) = f.frame.code.const_value(r) {
            return self.trace.constant(to_ir(c));
        }
        f.shadow[r.kind.bank()][usize::from(r.index)]
    }

    fn set_shadow(&mut self, r: Register, s: OpRef) {
        self.top().shadow[r.kind.bank()][usize::from(r.index)] = s;
    }

    fn value(&self, r: Register) -> Value {
        self.frames.last().expect("a frame is active").frame.get(r)
    }

    /// Records a guard on the current state of every frame (the top frame resumes at its pc).
    fn guard(&mut self, opcode: Opcode, args: &[OpRef]) {
        let mut resume = Resume {
            id: self.next_guard,
            ..Resume::default()
        };
        self.next_guard += 1;
        for f in &self.frames {
            let pc = f.frame.pc;
            let live = f.frame.code.live_at(pc).unwrap_or_else(|| {
                panic!(
                    "guard at pc {pc} of `{}`, no guard point",
                    f.frame.code.name
                )
            });
            let before = resume.values.len();
            for r in live.iter() {
                resume
                    .values
                    .push(f.shadow[r.kind.bank()][usize::from(r.index)]);
            }
            resume.frames.push(FrameInfo {
                code: f.code_index,
                pc: pc as u32,
                len: (resume.values.len() - before) as u32,
            });
        }
        self.trace.push(IrOp::new(opcode, args).with_resume(resume));
    }

    /// Makes `r` a constant with a `guard_value` if it is not one (`promote!`).
    fn promote(&mut self, r: Register) {
        let s = self.shadow(r);
        if !s.is_const() {
            let c = self.trace.constant(to_ir(self.value(r)));
            // Another register may hold the same value, promoted before.
            if self.cache.new_guard(Opcode::GuardValue, &[s, c]) {
                self.guard(Opcode::GuardValue, &[s, c]);
            }
            self.set_shadow(r, c);
        }
    }

    /// Runs until the trace closes or tracing aborts. `decide` is asked at every merge point
    /// of the portal frame, with the greens and whether the merge point is a loop header (the
    /// portal passed `can_enter_jit!` just before).
    ///
    /// # Safety
    /// The frames hold a state the native interpreter could be in (see
    /// [`crate::jitcode::runner::run`]): tracing executes the interpreter's loads, stores and
    /// calls for real.
    pub unsafe fn run(mut self, decide: &mut dyn FnMut(&[Value], bool) -> Close) -> Traced {
        loop {
            if self.trace.ops.len() > self.limits.trace_limit {
                if let Some(g) = self.outermost_inlined().map(<[Value]>::to_vec) {
                    if let Some(c) = self.calls.as_deref_mut() {
                        c.too_long(&g);
                    }
                }
                if let Some(t) = self.cut_short() {
                    return t;
                }
                return self.abort_here(Abort::TooLong);
            }
            let f = self.frames.last().expect("a frame is active");
            let code: &'static JitCode = f.frame.code;
            let pc = f.frame.pc;
            let op = &code.ops[pc];
            // SAFETY: forwarded from this function's contract.
            let step = unsafe { self.step(op) };
            match step {
                Step::Next => self.top().frame.pc = pc + 1,
                Step::Jumped => {}
                Step::Stop(t) => return *t,
                Step::MergePoint => {
                    if let Some(t) = self.merge_point(op, decide) {
                        return t;
                    }
                    if !std::mem::take(&mut self.resumed) {
                        self.top().frame.pc = pc + 1;
                    }
                }
            }
        }
    }

    /// One op of the top frame.
    unsafe fn step(&mut self, op: &'static Op) -> Step {
        let pc = self.frames.last().expect("a frame is active").frame.pc;
        match op {
            Op::Goto { target } => {
                self.top().frame.pc = *target as usize;
                Step::Jumped
            }
            Op::GotoIfNot { cond, target } => {
                let c = self.tv(*cond);
                let taken = c.1.int() == 0;
                let g = if taken {
                    Opcode::GuardFalse
                } else {
                    Opcode::GuardTrue
                };
                self.check(g, &[c]);
                self.top().frame.pc = if taken { *target as usize } else { pc + 1 };
                Step::Jumped
            }
            Op::Switch {
                value,
                cases,
                default,
            } => {
                self.promote(*value);
                let v = self.value(*value).int();
                self.top().frame.pc = crate::jitcode::runner::switch_target(v, cases, *default);
                Step::Jumped
            }
            Op::Promote { reg } => {
                self.promote(*reg);
                Step::Next
            }
            Op::InlineCall { callee, args, .. } => {
                let code = (callee.get)();
                let ci = self.codes.index(code);
                let zero = self.zeros();
                let mut nf = TraceFrame::new(code, ci, zero);
                for (&a, &p) in args.iter().zip(&code.args) {
                    let (v, s) = (self.value(a), self.shadow(a));
                    nf.frame.set(p, v);
                    nf.shadow[p.kind.bank()][usize::from(p.index)] = s;
                }
                nf.portal_entry = std::ptr::eq(code, self.portal);
                self.frames.push(nf);
                Step::Jumped
            }
            Op::Return { values } => {
                if self.frames.len() == 1 {
                    if !self.returns {
                        return Step::Stop(Box::new(self.abort_here(Abort::PortalReturned)));
                    }
                    // A bridge ends where the portal returns: the trace returns the values.
                    let shadows: Vec<OpRef> = values.iter().map(|&r| self.shadow(r)).collect();
                    let reds: Vec<Value> = values.iter().map(|&r| self.value(r)).collect();
                    self.trace.emit(Opcode::Finish, &shadows);
                    self.frames.clear();
                    return Step::Stop(Box::new(Traced::Closed {
                        trace: std::mem::take(&mut self.trace),
                        close: Close::Return,
                        greens: Vec::new(),
                        reds,
                        fingerprint: std::mem::take(&mut self.fp),
                        marks: std::mem::take(&mut self.marks),
                    }));
                }
                let vals: Vec<(Value, OpRef)> = values
                    .iter()
                    .map(|&r| (self.value(r), self.shadow(r)))
                    .collect();
                self.frames.pop();
                let f = self.top();
                let Op::InlineCall { dsts, .. } = &f.frame.code.ops[f.frame.pc] else {
                    unreachable!("a parent frame stands at its inline call")
                };
                for (&d, (v, s)) in dsts.iter().zip(vals) {
                    f.frame.set(d, v);
                    f.shadow[d.kind.bank()][usize::from(d.index)] = s;
                }
                f.frame.pc += 1;
                Step::Jumped
            }
            Op::Panic { message } => {
                Step::Stop(Box::new(self.abort_here(Abort::Panic(message.clone()))))
            }
            Op::JitMergePoint { .. } => {
                if self.frames.len() == 1 && std::ptr::eq(self.frames[0].frame.code, self.portal) {
                    Step::MergePoint
                } else if self.frames.last().is_some_and(|f| f.portal_entry) {
                    self.portal_entry(op)
                } else {
                    Step::Next
                }
            }
            Op::CanEnterJit { .. } => {
                self.at_header = self.frames.len() == 1;
                Step::Next
            }
            _ => {
                let mut inputs = std::mem::take(&mut self.scratch);
                self.inputs(op, &mut inputs);
                // SAFETY: forwarded from `run`'s contract: the runner executes the op on a
                // state the native interpreter could be in.
                if let Err(msg) = unsafe { self.top().frame.exec(op) } {
                    return Step::Stop(Box::new(self.abort_here(Abort::Panic(msg))));
                }
                let recorded = self.record(op, &inputs);
                self.scratch = inputs;
                match recorded {
                    Ok(()) => Step::Next,
                    Err(reason) => {
                        // The op has run: the interpreter continues after it.
                        self.top().frame.pc += 1;
                        Step::Stop(Box::new(self.abort_here(reason)))
                    }
                }
            }
        }
    }

    /// Ends the trace at its cut point (see [`Tracer::cutting`]), if it has one.
    fn cut_short(&mut self) -> Option<Traced> {
        if !self.cutting {
            return None;
        }
        let cut = self.cut.take()?;
        self.trace.ops.truncate(cut.ops);
        self.marks.truncate(cut.marks);
        self.trace.emit(Opcode::Finish, &cut.args);
        let frames = std::mem::take(&mut self.frames);
        Some(Traced::Cut {
            trace: std::mem::take(&mut self.trace),
            fingerprint: std::mem::take(&mut self.fp),
            marks: std::mem::take(&mut self.marks),
            frames: frames.into_iter().map(|f| f.frame).collect(),
        })
    }

    /// Aborts with the top frame at its current op (not executed).
    fn abort_here(&mut self, reason: Abort) -> Traced {
        let frames = std::mem::take(&mut self.frames);
        Traced::Aborted {
            reason,
            frames: frames.into_iter().map(|f| f.frame).collect(),
            fingerprint: std::mem::take(&mut self.fp),
            marks: std::mem::take(&mut self.marks),
        }
    }

    /// The portal frame is at its merge point: promote the greens, then ask `decide`. A
    /// `jump` to another loop needs every reference among the greens trusted (see
    /// [`Fingerprint`]): the driver checks the other loop's facts from them. Otherwise the
    /// trace finishes there, and the interpreter enters the other loop itself.
    fn merge_point(
        &mut self,
        op: &Op,
        decide: &mut dyn FnMut(&[Value], bool) -> Close,
    ) -> Option<Traced> {
        let Op::JitMergePoint { greens, reds } = op else {
            unreachable!()
        };
        let at = self.trace.ops.len();
        for &g in greens {
            self.promote(g);
        }
        let gv: Vec<Value> = greens.iter().map(|&r| self.value(r)).collect();
        let header = std::mem::take(&mut self.at_header);
        let mut close = decide(&gv, header);
        if matches!(close, Close::Jump(_))
            && !self.fp.is_eternal()
            && gv
                .iter()
                .any(|&v| matches!(v, Value::Ref(a) if a != 0) && !self.fp.is_trusted(v))
        {
            close = Close::Finish;
        }
        // Before the early returns: the shadow of a constant red interns its constant in the
        // trace, also when tracing goes on.
        let red_shadows: Vec<OpRef> = reds.iter().map(|&r| self.shadow(r)).collect();
        self.marks.push(Mark {
            at,
            greens: gv.clone(),
        });
        match close {
            Close::Continue => {
                if header {
                    self.cut_here(greens, &red_shadows);
                }
                return None;
            }
            Close::Return => unreachable!("the driver decides no return at a merge point"),
            Close::Reenter => return Some(self.abort_here(Abort::Reentered)),
            Close::TraceFirst => {
                if header
                    && !self
                        .headers
                        .insert(gv.iter().map(|&v| to_ir(v).bits()).collect())
                {
                    return Some(self.abort_here(Abort::InnerLoop));
                }
                if header {
                    self.cut_here(greens, &red_shadows);
                }
                return None;
            }
            Close::Loop => {
                self.trace.emit(Opcode::Jump, &red_shadows);
            }
            Close::Jump(n) => {
                let inlined = self
                    .inlinable
                    .as_ref()
                    .and_then(|m| m.get(&n))
                    .map(std::rc::Rc::clone);
                if let Some(t) = inlined {
                    let values: Vec<ir::Value> =
                        reds.iter().map(|&r| to_ir(self.value(r))).collect();
                    // SAFETY: tracing's contract: the concrete state is the interpreter's,
                    // here at the merge point of loop `n`, whose code `t` is.
                    if unsafe { self.inline_loop(&t, &red_shadows, &values) } {
                        return None;
                    }
                }
                let d = self.trace.descr(&format!("loop{n}"), DescrKind::Target(n));
                self.trace
                    .push(IrOp::new(Opcode::Jump, &red_shadows).with_descr(d));
            }
            Close::Finish => {
                let mut args: Vec<OpRef> = greens.iter().map(|&r| self.shadow(r)).collect();
                args.extend(red_shadows);
                self.trace.emit(Opcode::Finish, &args);
            }
        }
        let rv: Vec<Value> = reds.iter().map(|&r| self.value(r)).collect();
        Some(Traced::Closed {
            trace: std::mem::take(&mut self.trace),
            close,
            greens: gv,
            reds: rv,
            fingerprint: std::mem::take(&mut self.fp),
            marks: std::mem::take(&mut self.marks),
        })
    }
}

impl Tracer<'_> {
    /// Tracing goes on from this loop header of the portal frame (its greens promoted, its
    /// reds' shadows `reds`): remembers it as the place to end the trace if it grows too
    /// long. (A loop header, not any merge point: the interpreter that takes over there
    /// counts the loop, which gets code of its own when it is hot.)
    fn cut_here(&mut self, greens: &[Register], reds: &[OpRef]) {
        if !self.cutting {
            return;
        }
        let mut args = self.cut.take().map(|c| c.args).unwrap_or_default();
        args.clear();
        for &g in greens {
            let s = self.shadow(g);
            args.push(s);
        }
        args.extend_from_slice(reds);
        self.cut = Some(CutPoint {
            ops: self.trace.ops.len(),
            // The mark of this merge point is pushed already.
            marks: self.marks.len(),
            args,
        });
    }
}

enum Step {
    Next,
    Jumped,
    MergePoint,
    Stop(Box<Traced>),
}

/// The pc of the portal's merge point.
pub fn merge_point_pc(portal: &JitCode) -> usize {
    portal
        .ops
        .iter()
        .position(|op| matches!(op, Op::JitMergePoint { .. }))
        .expect("the portal has a merge point")
}
