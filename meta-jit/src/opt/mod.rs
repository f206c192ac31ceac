//! The optimizer: one forward pass over a trace, then a backward dead-code sweep.
//!
//! Every op of the input trace is read once, in order. Its arguments are mapped to the output
//! trace and read through the union-find ([`Optimizer::find`]): replacing a value with another
//! (an earlier op or a constant) is a `union` whose representative is the replacement, so
//! every later use sees the replacement without rewriting anything. The op then goes through
//! the stages, in the one order fixed in [`Optimizer::process`]; a stage passes it on
//! (possibly rewritten), replaces its result with a value, or removes it. What survives is
//! emitted, and the stages that learn from emitted ops (CSE table, heap cache, guard facts)
//! are told. Then [`dse`] removes stores overwritten before anything observes them (with the
//! heap stage), and [`dce`] drops ops whose results are unused and that have no effect.
//!
//! The stages, one module each: [`fold`] (constant folding and algebraic simplification),
//! [`bounds`] (integer ranges deciding comparisons),
//! [`pure`] (CSE of pure ops and elidable calls, `record_known_result`), [`exact`]
//! (`record_exact_value`), [`guards`] (guard removal and strengthening), [`heap`] (load
//! forwarding, redundant stores), [`virtuals`] (allocation removal), [`dce`]. Loops are
//! peeled first ([`unroll`]); a peeled loop that only counts is then rewritten to skip to its
//! last turn ([`counted`]). Last, stores into virtualizable frames are delayed to where
//! something could see them ([`vable`]).
//!
//! The optimizer knows the IR and nothing else: not the tracer, not the backend, not any guest
//! language. Its contract: the output trace, run by the reference interpreter on any inputs,
//! ends the same way as the input trace (same finish values, same failing guard with the same
//! rebuilt frames, same heap), which the random-trace property tests check.

pub mod bounds;
pub mod carry;
pub mod counted;
pub mod dce;
pub mod dse;
pub mod exact;
pub mod fold;
pub mod guards;
pub mod heap;
pub mod pure;
pub mod unroll;
pub mod vable;
pub mod virtuals;

#[cfg(test)]
mod tests;

use crate::ir::{Op, OpRef, Opcode, Trace, Type, Value};
use union_find::{QuickUnionUf, Union, UnionFind, UnionResult};

/// Which stages run (RPython's `enable_opts`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Constant folding and algebraic simplification.
    pub fold: bool,
    /// Integer ranges and relations that decide comparisons.
    pub bounds: bool,
    /// CSE of pure ops and elidable calls, with `record_known_result` facts.
    pub pure: bool,
    /// `record_exact_value` facts.
    pub exact: bool,
    /// Guard removal and strengthening.
    pub guards: bool,
    /// Heap cache: load forwarding and redundant store removal.
    pub heap: bool,
    /// Allocation removal (virtuals).
    pub virtuals: bool,
    /// The backward dead-code sweep.
    pub dce: bool,
    /// Loop peeling: a trace that loops to its inputs is optimized as preamble and loop.
    pub unroll: bool,
    /// Counted loops skip to their last turn ([`counted`]; needs `unroll`).
    pub counted: bool,
    /// Stores into virtualizable frames wait in registers until something could see them
    /// ([`vable`]).
    pub vable: bool,
    /// Every guard's resume data describes the state whichever way the guard goes: the
    /// guards stage does not write into a guard's own resume data the value its failure
    /// implies for its condition (`guards::on_failure`). Off in [`Options::all`]; the
    /// tracer needs it on for a loop it inlines (`crate::trace`'s `inline`), where the path
    /// it follows may leave through any guard.
    pub either_way: bool,
}

impl Options {
    /// Every stage on.
    pub fn all() -> Options {
        Options {
            fold: true,
            bounds: true,
            pure: true,
            exact: true,
            guards: true,
            heap: true,
            virtuals: true,
            dce: true,
            unroll: true,
            counted: true,
            vable: true,
            either_way: false,
        }
    }

    /// Every stage off: the trace comes out as it went in (renumbered).
    pub fn none() -> Options {
        Options {
            fold: false,
            bounds: false,
            pure: false,
            exact: false,
            guards: false,
            heap: false,
            virtuals: false,
            dce: false,
            unroll: false,
            counted: false,
            vable: false,
            either_way: false,
        }
    }

    /// Parses a colon-separated list of stage names (`"fold:pure:dce"`, RPython's
    /// `enable_opts` syntax), or `"all"`.
    pub fn parse(s: &str) -> Result<Options, String> {
        if s == "all" {
            return Ok(Options::all());
        }
        let mut o = Options::none();
        for name in s.split(':').filter(|n| !n.is_empty()) {
            let flag = match name {
                "fold" => &mut o.fold,
                "bounds" => &mut o.bounds,
                "pure" => &mut o.pure,
                "exact" => &mut o.exact,
                "guards" => &mut o.guards,
                "heap" => &mut o.heap,
                "virtuals" => &mut o.virtuals,
                "dce" => &mut o.dce,
                "unroll" => &mut o.unroll,
                "counted" => &mut o.counted,
                "vable" => &mut o.vable,
                _ => return Err(format!("unknown optimization `{name}`")),
            };
            *flag = true;
        }
        Ok(o)
    }
}

impl Default for Options {
    fn default() -> Options {
        Options::all()
    }
}

/// What the optimizer found that its caller should know.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Resume ids of guards that always fail (the code after them never runs).
    pub failing_guards: Vec<u32>,
    /// `(object address, field descriptor name)` of quasi-immutable fields whose value the
    /// optimized code assumes: a write to one must invalidate it.
    pub quasi_immutable: Vec<(usize, String)>,
    /// Set if the loop was peeled ([`unroll`]).
    pub peeled: Option<PeelReport>,
    /// Set if the peeled loop is a counted loop that skips to its last turn ([`counted`]).
    pub counted: bool,
    /// How many times the part from the label on was optimized (0 for a trace without
    /// label): each round after the first settled some location or range the label assumed.
    pub rounds: usize,
}

/// How a peeled loop relates to the loop it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PeelReport {
    /// The inputs the loop carries, in the order of the label's first arguments (the label may
    /// have more: values of memory the loop carries).
    pub carried: Vec<usize>,
    /// Guards of the loop body have the resume id of their preamble copy plus this.
    pub id_offset: u32,
    /// The smallest resume id of a loop body guard.
    pub first_copy_id: u32,
    /// Per carried input (in `carried` order): `None` when the label has its value, or the
    /// number of label arguments that carry it as a virtual object's fields ([`carry`]; the
    /// `jump` passes the leaves in their place). Empty when nothing is carried virtually.
    pub carried_virtual: Vec<Option<usize>>,
}

/// Optimizes a trace with the given stages.
pub fn optimize(trace: &Trace, opts: &Options) -> Trace {
    optimize_with_report(trace, opts).0
}

/// Optimizes a trace and reports what its caller must know.
pub fn optimize_with_report(trace: &Trace, opts: &Options) -> (Trace, Report) {
    if !opts.unroll || !unroll::peelable(trace) {
        let (mut out, report) = optimize_rounds(trace, opts);
        if opts.vable {
            out = vable::sink(out);
        }
        return (out, report);
    }
    let (mut out, mut report, p, carried_virtual) = optimize_peeled(trace, opts);
    if opts.counted {
        if let Some(skipping) = counted::skip_to_last_turn(&out) {
            debug_assert_eq!(
                crate::ir::verify::verify(&skipping),
                Ok(()),
                "counted:\n{skipping}"
            );
            out = skipping;
            report.counted = true;
        }
    }
    if opts.vable {
        out = vable::sink(out);
    }
    report.peeled = Some(PeelReport {
        carried_virtual,
        carried: p.carried,
        id_offset: p.id_offset,
        first_copy_id: p.first_copy_id,
    });
    (out, report)
}

/// One optimization of a trace as it is (no peeling). A loop whose body changes a location
/// the heap cache imported at the label is optimized again, carrying that location's value in
/// a label argument or not importing it; each round settles at least one more location, and
/// after a few rounds nothing is imported. A loop whose `jump` does not keep a range assumed
/// at the label is optimized again without assuming it (see [`bounds`]).
fn optimize_rounds(trace: &Trace, opts: &Options) -> (Trace, Report) {
    let start = Optimizer::new(trace, opts);
    let o = settle(start, 0, trace, false);
    (finish(o.out, opts), o.report)
}

/// Peels a loop that jumps to its own inputs and optimizes it, preamble once. The preamble
/// (the loop's body as it is, up to its `jump`) is optimized first; what its `jump` would pass
/// back tells which inputs come back unchanged (`ptr + 1 - 1` is `ptr`): those stay
/// loop-invariant in the peeled loop. The optimizer then goes on into the peeled trace's
/// label and body, whose preamble is the same ops at the same positions. Rounds (see
/// [`optimize_rounds`]) start again from the state at the end of the preamble, so each costs
/// the body only. Also returns how the label carries each carried input
/// ([`PeelReport::carried_virtual`]).
fn optimize_peeled(
    trace: &Trace,
    opts: &Options,
) -> (Trace, Report, unroll::Peeled, Vec<Option<usize>>) {
    let once = Options {
        unroll: false,
        ..opts.clone()
    };
    let jump_at = trace.ops.len() - 1;
    let peeled: unroll::Peeled;
    let mut o = Optimizer::new(trace, &once);
    for (i, op) in trace.ops[..jump_at].iter().enumerate() {
        o.process_input(i, op);
    }
    let same = o.same_at_jump(&trace.ops[jump_at]);
    peeled = unroll::peel_with(trace, |k| same.get(k) == Some(&true))
        .expect("peelable, checked by the caller");
    debug_assert_eq!(peeled.trace.ops[..jump_at], trace.ops[..jump_at]);
    debug_assert_eq!(peeled.trace.consts.len(), trace.consts.len());
    o.input = &peeled.trace;
    o.out.ops.reserve(peeled.trace.ops.len() - jump_at);
    let o = settle(o, jump_at, &peeled.trace, true);
    let carried_virtual = o.virtuals.carry.virtual_slots();
    let out = finish(o.out, opts);
    (out, o.report, peeled, carried_virtual)
}

/// Optimizes `trace.ops[from..]`, starting from `start` (which has optimized the ops before
/// `from`), in as many rounds as the loop's label assumptions need. The ops before the label
/// do not depend on what the label assumes, so they are optimized once, and each round starts
/// again from a copy of the state at the label.
fn settle<'a>(
    mut start: Optimizer<'a>,
    from: usize,
    trace: &'a Trace,
    peeled: bool,
) -> Optimizer<'a> {
    let label_at = trace.ops[from..]
        .iter()
        .position(|op| op.opcode == Opcode::Label)
        .map(|p| p + from);
    let upto = label_at.unwrap_or(trace.ops.len());
    for (i, op) in trace.ops.iter().enumerate().take(upto).skip(from) {
        start.process_input(i, op);
    }
    let Some(label_at) = label_at else {
        return start;
    };
    let (mut carried, mut banned) = (hashbrown::HashSet::new(), hashbrown::HashSet::new());
    let (mut unassumed, mut unseeded) = (hashbrown::HashSet::new(), hashbrown::HashSet::new());
    let (mut not_virtual, mut unconst) = (hashbrown::HashSet::new(), hashbrown::HashSet::new());
    // Rounds so far, and those of them in which the heap cache had something to settle (after
    // four of those, the label imports nothing).
    let (mut tries, mut heap_rounds) = (0, 0);
    loop {
        let mut o = start.snapshot();
        o.heap.carried = carried.clone();
        o.heap.banned = banned.clone();
        o.heap.unseeded = unseeded.clone();
        o.heap.seed = true;
        o.heap_import = heap_rounds < 4;
        o.bounds.banned = unassumed.clone();
        o.virtuals.carry.peeled = peeled;
        o.virtuals.carry.banned = not_virtual.clone();
        o.virtuals.carry.unconst = unconst.clone();
        for (i, op) in trace.ops.iter().enumerate().skip(label_at) {
            o.process_input(i, op);
        }
        tries += 1;
        let carry_broken = std::mem::take(&mut o.virtuals.carry.broken);
        let const_broken = std::mem::take(&mut o.virtuals.carry.const_broken);
        let heap_settled = o.heap.broken.is_empty() && o.heap.unneeded.is_empty();
        let carry_settled = carry_broken.is_empty() && const_broken.is_empty();
        if heap_settled && o.bounds.broken.is_empty() && carry_settled {
            o.report.rounds = tries;
            return o;
        }
        not_virtual.extend(carry_broken);
        unconst.extend(const_broken);
        unseeded.extend(o.heap.unneeded.iter().copied());
        for &(k, known) in &o.heap.broken {
            if known {
                carried.insert(k);
            } else {
                banned.insert(k);
            }
        }
        unassumed.extend(o.bounds.broken.iter().copied());
        heap_rounds += usize::from(!heap_settled);
    }
}

/// The dead-store sweep, the backward sweep and (in debug builds) the verifier, on an
/// optimized trace.
fn finish(mut out: Trace, opts: &Options) -> Trace {
    if opts.heap {
        out = dse::sweep(out).0;
    }
    if opts.dce {
        out = dce::sweep(out);
    }
    debug_assert_eq!(crate::ir::verify::verify(&out), Ok(()), "optimized:\n{out}");
    out
}

/// What a stage does with an op.
pub enum Step {
    /// Pass it on to the next stage (maybe rewritten).
    Next(Op),
    /// Its result is this value; emit nothing.
    Replace(OpRef),
    /// Emit nothing (an op that defines no value).
    Remove,
}

/// The payload of a union-find class: the value that represents it.
#[derive(Copy, Clone, Debug)]
struct Rep(OpRef);

impl Union for Rep {
    /// The class of the second argument absorbs the first, keeping its representative: callers
    /// always pass the replacement second.
    fn union(_old: Rep, new: Rep) -> UnionResult<Rep> {
        UnionResult::Right(new)
    }
}

/// The state of one optimization: the output trace, the union-find over its values, and each
/// stage's tables.
pub struct Optimizer<'a> {
    /// The stages that run.
    pub opts: &'a Options,
    /// The trace being optimized.
    pub input: &'a Trace,
    /// The trace being emitted.
    pub out: Trace,
    /// What the caller should know.
    pub report: Report,
    /// Input op index -> its value in the output (before `find`).
    map: Vec<OpRef>,
    uf: QuickUnionUf<Rep>,
    /// Output op index -> its union-find key.
    uf_key: Vec<usize>,
    /// CSE state.
    pub pure: pure::Table,
    /// Guard facts.
    pub guards: guards::Facts,
    /// Integer bounds.
    pub bounds: bounds::Facts,
    /// Heap cache.
    pub heap: heap::Cache,
    /// Virtual objects.
    pub virtuals: virtuals::Virtuals,
    /// The loop-carried values after the label: `jump` redefines them, so the ops that computed
    /// them before the label say nothing about them after it.
    loop_vars: hashbrown::HashSet<OpRef>,
    /// The output index of the label.
    label_at: usize,
    /// Whether the previous input op was an `*_ovf` op that was not emitted, and if so whether
    /// it overflowed (the guard after it is then decided).
    pending_ovf: Option<bool>,
    /// Whether the heap cache may carry what it knows across the label.
    heap_import: bool,
}

impl<'a> Optimizer<'a> {
    fn new(input: &'a Trace, opts: &'a Options) -> Optimizer<'a> {
        Optimizer {
            opts,
            input,
            out: {
                let mut out = Trace::with_tables_of(input);
                out.ops.reserve(input.ops.len());
                out
            },
            report: Report::default(),
            map: Vec::with_capacity(input.ops.len()),
            uf: QuickUnionUf::from_iter(std::iter::empty()),
            uf_key: Vec::with_capacity(input.ops.len()),
            pure: pure::Table::default(),
            guards: guards::Facts::default(),
            bounds: bounds::Facts::default(),
            heap: heap::Cache::new(input),
            virtuals: virtuals::Virtuals::default(),
            loop_vars: hashbrown::HashSet::new(),
            label_at: 0,
            pending_ovf: None,
            heap_import: true,
        }
    }

    /// A copy of this state to go on from, while this one stays as it is.
    fn snapshot(&mut self) -> Optimizer<'a> {
        // The union-find cannot be cloned: rebuild the same classes, each with its
        // representative.
        let n = self.uf.size();
        let reps: Vec<usize> = (0..n).map(|k| self.uf.find(k)).collect();
        let mut uf: QuickUnionUf<Rep> =
            QuickUnionUf::from_iter(reps.iter().map(|&r| *self.uf.get(r)));
        for (k, &r) in reps.iter().enumerate() {
            if k != r {
                uf.union(k, r);
            }
        }
        Optimizer {
            opts: self.opts,
            input: self.input,
            out: self.out.clone(),
            report: self.report.clone(),
            map: self.map.clone(),
            uf,
            uf_key: self.uf_key.clone(),
            pure: self.pure.clone(),
            guards: self.guards.clone(),
            bounds: self.bounds.clone(),
            heap: self.heap.clone(),
            virtuals: self.virtuals.clone(),
            loop_vars: self.loop_vars.clone(),
            label_at: self.label_at,
            pending_ovf: self.pending_ovf,
            heap_import: self.heap_import,
        }
    }

    /// For a loop without label, before its `jump` is optimized: whether the `jump` passes
    /// back each input's own value.
    fn same_at_jump(&mut self, jump: &Op) -> Vec<bool> {
        let n = self.input.num_inputs();
        (0..n)
            .map(|k| {
                let a = jump.args.get(k).map(|&a| self.map_arg(a));
                a == Some(self.find(OpRef::op(k)))
            })
            .collect()
    }

    /// The current representative of an output value: a constant, an emitted op, or a
    /// virtual object that has not escaped.
    pub fn find(&mut self, v: OpRef) -> OpRef {
        if v.is_const() {
            return v;
        }
        if v.is_virtual() {
            return self.virtuals.forced(v).map_or(v, |p| self.find(p));
        }
        let key = self.uf_key[v.index()];
        let root = self.uf.find(key);
        self.uf.get(root).0
    }

    /// From now on, `v` is `with` (an earlier value or a constant).
    pub fn replace(&mut self, v: OpRef, with: OpRef) {
        let v = self.find(v);
        let with = self.find(with);
        if v == with || !v.is_op() {
            return;
        }
        let a = self.uf_key[v.index()];
        let b = if with.is_op() {
            self.uf_key[with.index()]
        } else {
            self.uf.insert(Rep(with))
        };
        self.uf.union(a, b);
    }

    /// The constant value of `v`, if it is known.
    pub fn const_value(&mut self, v: OpRef) -> Option<Value> {
        let v = self.find(v);
        self.out.const_value(v)
    }

    /// The output op that defines `v`, if `v` is an emitted op. Not for a loop-carried value
    /// (`jump` redefines it), nor for an op before the label that reads one (its arguments
    /// there mean their first iteration's values).
    pub fn producer(&mut self, v: OpRef) -> Option<&Op> {
        let v = self.find(v);
        if !v.is_op() {
            return None;
        }
        let op = &self.out.ops[v.index()];
        let stale = !self.loop_vars.is_empty()
            && v.index() < self.label_at
            && (self.loop_vars.contains(&v) || op.args.iter().any(|a| self.loop_vars.contains(a)));
        (!stale).then_some(op)
    }

    /// `v` as `(base, constant offset)`, in wrapping arithmetic: `x + c`, `c + x` and `x - c`
    /// (also their `*_ovf` forms, whose value is the wrapped result too) give `(x, ±c)`;
    /// anything else, constants included, is `(v, 0)`. The base of an op is never a constant
    /// (an unfolded `7 + 3` is its own base), so callers may give constants a base of their
    /// own.
    pub fn offset_parts(&mut self, v: OpRef) -> (OpRef, i64) {
        let v = self.find(v);
        let Some(p) = self.producer(v) else {
            return (v, 0);
        };
        let opcode = p.opcode;
        let args = [p.args.first().copied(), p.args.get(1).copied()];
        let sign = match opcode {
            Opcode::IntAdd | Opcode::IntAddOvf => 1,
            Opcode::IntSub | Opcode::IntSubOvf => -1,
            _ => return (v, 0),
        };
        let (Some(a), Some(b)) = (args[0], args[1]) else {
            return (v, 0);
        };
        match (self.const_value(a), self.const_value(b)) {
            (Some(_), Some(_)) => (v, 0),
            (_, Some(Value::Int(c))) => (self.find(a), c.wrapping_mul(sign)),
            (Some(Value::Int(c)), _) if sign == 1 => (self.find(b), c),
            _ => (v, 0),
        }
    }

    /// Emits an op derived from the current one (a normalization, say), through the stages.
    pub fn derived(&mut self, op: Op) -> OpRef {
        let pending = self.pending_ovf.take();
        let r = self.process(op).expect("derived ops define a value");
        self.pending_ovf = pending;
        r
    }

    /// The value a load of a `size`-byte integer location returns after `v` was stored there:
    /// truncated to `size` bytes, then sign- or zero-extended.
    pub fn narrowed(&mut self, v: OpRef, size: u8, signed: bool) -> OpRef {
        if size >= 8 || self.type_of(v) != Type::Int {
            return v;
        }
        let op = if signed {
            let n = self.out.int(size as i64);
            Op::new(Opcode::IntSignext, &[v, n])
        } else {
            let mask = self.out.int((1i64 << (8 * size as u32)) - 1);
            Op::new(Opcode::IntAnd, &[v, mask])
        };
        self.derived(op)
    }

    /// The type of a value of the output.
    pub fn type_of(&self, v: OpRef) -> Type {
        self.out.type_of(v)
    }

    fn process_input(&mut self, i: usize, op: &Op) {
        if op.opcode.is_input() {
            let r = self.push(op.clone());
            self.map.push(r);
            return;
        }
        let mut new = op.clone();
        new.map_ops(|a| self.map_arg(a));
        if let Some(r) = new.resume.as_deref_mut() {
            virtuals::import(self, r);
        }
        let result = if op.opcode == Opcode::Label {
            self.label(new)
        } else {
            self.process(new)
        };
        debug_assert_eq!(self.map.len(), i);
        self.map.push(result.unwrap_or(OpRef::constant(0)));
    }

    fn map_arg(&mut self, a: OpRef) -> OpRef {
        let v = if a.is_op() { self.map[a.index()] } else { a };
        self.find(v)
    }

    /// Runs an op through the stages in their fixed order and emits what survives. Returns the
    /// value of its result (`None` for ops that define none).
    pub fn process(&mut self, op: Op) -> Option<OpRef> {
        let ty = op.ty();
        let mut op = op;
        if let Some(decided) = self.pending_ovf.take() {
            // The `*_ovf` op before this overflow guard was folded away: the guard is decided.
            return self.decided_ovf_guard(op, decided);
        }
        type Stage = fn(&mut Optimizer, Op) -> Step;
        let stages: [(bool, Stage); 7] = [
            (self.opts.virtuals, virtuals::optimize),
            (self.opts.fold, fold::optimize),
            (self.opts.bounds, bounds::optimize),
            (self.opts.exact, exact::optimize),
            (self.opts.guards, guards::optimize),
            (self.opts.pure, pure::optimize),
            (self.opts.heap, heap::optimize),
        ];
        for (on, stage) in stages {
            if !on {
                continue;
            }
            match stage(self, op) {
                Step::Next(o) => op = o,
                Step::Replace(v) => {
                    debug_assert!(ty != Type::Void);
                    return Some(v);
                }
                Step::Remove => return None,
            }
        }
        if op.opcode.is_ovf() {
            if let Some(v) = self.fold_ovf(&op) {
                return Some(v);
            }
        }
        Some(self.emit(op)).filter(|_| ty != Type::Void)
    }

    /// Emits an op whose arguments are final, and tells the stages that learn from it.
    pub fn emit(&mut self, mut op: Op) -> OpRef {
        if let Some(r) = op.resume.take() {
            // Every value final: virtual objects described, the rest found.
            op.resume = Some(Box::new(virtuals::describe(self, *r)));
            if self.opts.guards && !self.opts.either_way {
                guards::on_failure(self, &mut op);
            }
        }
        let r = self.push(op);
        if self.opts.pure {
            pure::emitted(self, r);
        }
        if self.opts.bounds {
            bounds::emitted(self, r);
        }
        if self.opts.guards {
            guards::emitted(self, r);
        }
        if self.opts.heap {
            heap::emitted(self, r);
        }
        r
    }

    /// Emits `same_as(v)`: a value equal to `v` that the union-find does not know is `v` (a
    /// label argument).
    pub fn emit_box(&mut self, v: OpRef, ty: Type) -> OpRef {
        self.push(Op::new(Opcode::same_as(ty), &[v]))
    }

    fn push(&mut self, op: Op) -> OpRef {
        let r = self.out.push(op);
        let key = self.uf.insert(Rep(r));
        self.uf_key.push(key);
        r
    }

    /// An `*_ovf` op whose arguments are constants folds, and so does `x + 0`, `x - 0`,
    /// `x * 1`, `x * 0`, and an addition or subtraction the bounds stage's ranges say cannot
    /// overflow; the overflow guard after it is then decided.
    fn fold_ovf(&mut self, op: &Op) -> Option<OpRef> {
        if !self.opts.fold {
            return None;
        }
        let (a, b) = (op.args[0], op.args[1]);
        let (ca, cb) = (self.const_value(a), self.const_value(b));
        let (value, overflow) = match (ca, cb) {
            (Some(x), Some(y)) => {
                let (v, o) = crate::ir::semantics::eval_ovf(op.opcode, x.int(), y.int());
                (self.out.int(v), o)
            }
            (_, Some(Value::Int(0))) if op.opcode != Opcode::IntMulOvf => (a, false),
            (Some(Value::Int(0)), _) if op.opcode == Opcode::IntAddOvf => (b, false),
            (_, Some(Value::Int(1))) if op.opcode == Opcode::IntMulOvf => (a, false),
            (Some(Value::Int(1)), _) if op.opcode == Opcode::IntMulOvf => (b, false),
            (_, Some(Value::Int(0))) | (Some(Value::Int(0)), _)
                if op.opcode == Opcode::IntMulOvf =>
            {
                (self.out.int(0), false)
            }
            _ if self.opts.bounds
                && matches!(op.opcode, Opcode::IntAddOvf | Opcode::IntSubOvf)
                && bounds::cannot_overflow(self, op.opcode == Opcode::IntAddOvf, a, b) =>
            {
                // The ranges say it cannot overflow: a plain op, and the guard goes.
                let plain = if op.opcode == Opcode::IntAddOvf {
                    Opcode::IntAdd
                } else {
                    Opcode::IntSub
                };
                let v = self.derived(Op::new(plain, &[a, b]));
                (v, false)
            }
            _ => return None,
        };
        self.pending_ovf = Some(overflow);
        Some(value)
    }

    fn decided_ovf_guard(&mut self, op: Op, overflowed: bool) -> Option<OpRef> {
        let fails = match op.opcode {
            Opcode::GuardNoOverflow => overflowed,
            Opcode::GuardOverflow => !overflowed,
            _ => unreachable!("the verifier pairs *_ovf ops with overflow guards"),
        };
        if fails {
            // Keep a guard that always fails, where the failing one was.
            let zero = self.out.int(0);
            let mut g = Op::new(Opcode::GuardTrue, &[zero]);
            g.resume = op.resume;
            let id = g.resume.as_ref().map_or(0, |r| r.id);
            self.report.failing_guards.push(id);
            self.emit(g);
        }
        None
    }

    /// The loop header. Its arguments become loop-carried values: each must be an op that no
    /// other value of the trace is known to equal, so a constant, a duplicate, a virtual or a
    /// value shared with another op gets a fresh `same_as`. Everything learnt before the label
    /// about those values stops holding, so the stages forget what they know.
    fn label(&mut self, mut op: Op) -> Option<OpRef> {
        let label_at = self.map.len();
        let slots = if self.virtuals.carry.peeled && self.opts.virtuals {
            carry::at_label(self, &mut op.args)
        } else {
            virtuals::force_all(self);
            vec![carry::Slot::Plain; op.args.len()]
        };
        // How many input ops (the label's arguments included) each output value stands for.
        let mut shared = hashbrown::HashMap::<OpRef, u32>::new();
        for k in 0..label_at {
            let v = self.map[k];
            if self.input.ops[k].ty() != Type::Void {
                let f = self.find(v);
                *shared.entry(f).or_default() += 1;
            }
        }
        let input_args = self.input.ops[label_at].args.clone();
        let mut seen = hashbrown::HashSet::new();
        let mut first = Vec::with_capacity(op.args.len());
        for k in 0..op.args.len() {
            let mut v = virtuals::force(self, op.args[k]);
            v = self.find(v);
            let int = self.type_of(v) == Type::Int;
            first.push(if int && self.opts.bounds {
                bounds::range(self, v)
            } else {
                (i64::MIN, i64::MAX)
            });
            if !v.is_op() || seen.contains(&v) || shared.get(&v).copied().unwrap_or(0) > 1 {
                let ty = self.type_of(v);
                v = self.emit_box(v, ty);
            }
            seen.insert(v);
            op.args[k] = v;
        }
        // Facts about values other than the loop-carried ones still hold in the loop (they are
        // loop-invariant). What memory holds may change on every iteration: the heap cache
        // keeps what it knows only of locations the body turns out to leave alone.
        let mut vars: hashbrown::HashSet<OpRef> = op.args.iter().copied().collect();
        let below = bounds::below_at_label(self, &op.args);
        pure::forget(self, &vars);
        guards::forget(self, &vars);
        bounds::forget(self, &vars);
        if self.opts.bounds {
            bounds::assume_at_label(self, &op.args, &first, below);
        }
        if self.heap_import {
            let boxes = heap::at_label(self, &vars);
            vars.extend(boxes.iter().copied());
            op.args.extend(boxes);
        } else {
            self.heap.clear();
        }
        self.pending_ovf = None;
        let mut boxes = op.args.clone().into_iter();
        for (a, slot) in input_args.iter().zip(&slots) {
            self.map[a.index()] = match slot {
                carry::Slot::Plain => boxes.next().expect("a box per plain slot"),
                carry::Slot::Virtual(shape) => carry::rebuild(self, shape, &mut boxes),
            };
        }
        self.loop_vars = vars;
        self.label_at = self.push(op).index();
        None
    }
}
