//! The builder: turns a [`Case`] recipe into a heap, a trace and its inputs ([`Built`]),
//! *simulating while it generates*. Every op is executed as it is emitted, on the real heap
//! (and on objects of a private arena standing in for `new`), with the same semantics the
//! reference interpreter uses, so the builder knows each value at each point of the first
//! pass through the trace. That is what lets it make guards pass (or fail on purpose), state
//! only true facts, and keep every memory access in bounds.
//!
//! Safety of memory accesses holds on *every* execution, not just the simulated one: objects
//! are always live [`super::heap::Obj`]s (`next` is set right after `new`), array indices are
//! constants, masked into range, or behind a bounds-check guard. Facts hold on every execution
//! too: `record_known_result` states mathematical properties of the functions, and
//! `record_exact_value` is emitted only on values known to be the same on every execution of
//! that point (computed once, or in a loop from loop-invariant values by pure ops, elidable
//! calls and immutable loads).
//!
//! A recorded trace never holds a guard that fails on the recorded path, so the facts a guard
//! establishes are true there, and the optimizer may evaluate calls and loads on the
//! constants they give at optimization time. Guards that fail on purpose here keep that true
//! of pointers: they never say an object is null, or that an integer is an address other
//! than a heap object's.

mod steps;

use super::funcs::FUNCS;
use super::heap::{Arena, Descrs, Heap, HeapSnapshot, A64, ARR_LEN, IMM, NEXT};
use super::recipe::{Arg, Case, LoopArg, ResumeSpec, Shape};
use crate::interp::{self, Outcome, Run, RunError};
use crate::ir::semantics::{eval_ovf, eval_pure};
use crate::ir::{DescrId, DescrKind, FrameInfo, Op, OpRef, Opcode, Resume, Trace, Type, Value};

/// A built test case: the trace, its inputs, the heap they point into, and the run options.
#[derive(Debug)]
pub struct Built {
    /// The generated trace (it verifies).
    pub trace: Trace,
    /// Its inputs (references point into `heap`).
    pub inputs: Vec<Value>,
    /// The heap, in its initial state.
    pub heap: Heap,
    /// How to run it (iterations for loops, invalidation).
    pub run: Run,
}

/// What a run left: how it ended and the heap's contents after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// How the run ended.
    pub outcome: Outcome,
    /// The heap after the run.
    pub heap: HeapSnapshot,
}

impl Built {
    /// Resets the heap, runs `t` (this case's trace or a transformation of it) on the inputs
    /// with the reference interpreter, and snapshots the heap. Run it with an
    /// [`crate::alloc::Tracker`] alive if the result will be compared.
    pub fn run(&self, t: &Trace) -> Result<Observation, RunError> {
        self.observe(|inputs| self.run.run(t, inputs))
    }

    /// Resets the heap, runs `f` on the inputs (compiled code, say), and snapshots the heap.
    /// `f` must honour [`Built::run`]'s options itself (`max_iterations`, `invalidated`).
    pub fn observe<E>(
        &self,
        f: impl FnOnce(&[Value]) -> Result<Outcome, E>,
    ) -> Result<Observation, E> {
        self.heap.reset();
        let outcome = f(&self.inputs)?;
        Ok(Observation {
            outcome,
            heap: self.heap.snapshot(),
        })
    }

    /// The inputs as text, with heap references named (`p0 = obj1, i2 = 5, ...`).
    pub fn inputs_text(&self) -> String {
        let parts: Vec<String> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(k, v)| match v {
                Value::Int(i) => format!("i{k} = {i}"),
                Value::Float(f) => format!("f{k} = {f:?}"),
                Value::Ref(p) => format!("p{k} = {}", self.heap.name(*p)),
            })
            .collect();
        parts.join(", ")
    }

    /// The heap's initial contents and addresses as text.
    pub fn heap_text(&self) -> String {
        let spec = self.heap.spec();
        let n = spec.objs.len();
        let mut s = String::new();
        for (i, o) in spec.objs.iter().enumerate() {
            s.push_str(&format!(
                "obj{i} @{:#x}: a8..b64={:?} f={:?} next=obj{} imm={}\n",
                self.heap.obj(i),
                o.ints,
                o.f,
                o.next % n,
                o.imm
            ));
        }
        s.push_str(&format!("arr @{:#x}: {:?}\n", self.heap.arr(), spec.arr));
        s
    }
}

impl Case {
    /// Builds the heap, the trace and its inputs. The trace verifies (a failure to is a bug
    /// of the generator, and panics with the trace).
    pub fn build(&self) -> Built {
        let heap = Heap::new(&self.heap);
        let (trace, inputs) = {
            let mut b = Builder::new(self, &heap);
            b.inputs();
            for s in &self.steps {
                b.step(s);
            }
            b.end();
            (b.t, b.inputs)
        };
        heap.reset();
        if let Err(e) = crate::ir::verify::verify(&trace) {
            panic!(
                "generated trace does not verify: {e}\n{}",
                crate::ir::print::print(&trace)
            );
        }
        let memory = Some(heap.ranges());
        Built {
            trace,
            inputs,
            heap,
            run: Run {
                max_iterations: self.iterations.max(1) as usize,
                invalidated: self.invalidated,
                memory,
                dry: false,
            },
        }
    }
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.build();
        writeln!(
            f,
            "Case ({:?}, max_iterations {}, invalidated {})",
            self.shape, b.run.max_iterations, b.run.invalidated
        )?;
        write!(f, "{}", b.heap_text())?;
        writeln!(f, "inputs: {}", b.inputs_text())?;
        write!(f, "{}", crate::ir::print::print(&b.trace))
    }
}

/// What the builder knows about a class of reference, to keep memory accesses safe.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Class {
    Int,
    Float,
    /// A live `Obj`.
    Obj,
    /// A live array of these items and at least this length, on every execution.
    Array {
        descr: DescrId,
        len: u32,
    },
    /// A reference nothing may be loaded from.
    Opaque,
}

/// The simulated value of an op.
#[derive(Copy, Clone, Debug)]
struct Sim {
    /// Its value on the first pass.
    v: Value,
    /// Whether it has this value on every execution of its op.
    inv: bool,
    class: Class,
    /// An integer computed from an address (`cast_ptr_to_int`): no guard that fails on the
    /// recorded pass may test it, or the optimizer could take a false constant for an address.
    addr: bool,
}

/// A memory location accessed before.
#[derive(Copy, Clone, Debug)]
enum Loc {
    Field(OpRef, usize),
    Item(OpRef, OpRef, DescrId),
}

struct Builder<'a> {
    case: &'a Case,
    heap: &'a Heap,
    t: Trace,
    d: Descrs,
    arena: Arena,
    inputs: Vec<Value>,
    /// One entry per op of `t`.
    sims: Vec<Option<Sim>>,
    ints: Vec<OpRef>,
    floats: Vec<OpRef>,
    objs: Vec<OpRef>,
    arrays: Vec<OpRef>,
    all: Vec<OpRef>,
    pure_ops: Vec<usize>,
    pure_calls: Vec<usize>,
    guards: Vec<usize>,
    locs: Vec<Loc>,
    /// The loop header's values and how the `jump` treats them.
    header: Vec<(OpRef, LoopArg)>,
    /// Whether the ops emitted now run once per run (straight code, or a loop's preamble).
    once: bool,
    labeled: bool,
    next_id: u32,
    overflowed: bool,
    /// A guard failed in the simulated pass: what follows is dead code, whose simulated values
    /// the optimizer may see differently (it assumes the guard passed), so no more hints that
    /// claim simulated values.
    past_failure: bool,
}

/// The element `k` places back from the end of `list` (wrapping around), `None` if it is empty.
fn pick<T: Copy>(list: &[T], k: u8) -> Option<T> {
    (!list.is_empty()).then(|| list[list.len() - 1 - k as usize % list.len()])
}

impl<'a> Builder<'a> {
    fn new(case: &'a Case, heap: &'a Heap) -> Builder<'a> {
        let mut t = Trace::new();
        let d = Descrs::declare(&mut t);
        Builder {
            case,
            heap,
            t,
            d,
            arena: Arena::default(),
            inputs: Vec::new(),
            sims: Vec::new(),
            ints: Vec::new(),
            floats: Vec::new(),
            objs: Vec::new(),
            arrays: Vec::new(),
            all: Vec::new(),
            pure_ops: Vec::new(),
            pure_calls: Vec::new(),
            guards: Vec::new(),
            locs: Vec::new(),
            header: Vec::new(),
            once: case.shape != Shape::LoopInputs,
            labeled: false,
            next_id: 0,
            overflowed: false,
            past_failure: false,
        }
    }

    // ---- values ------------------------------------------------------------------------

    fn sim(&self, r: OpRef) -> Sim {
        match self.t.const_value(r) {
            Some(v) => Sim {
                v,
                inv: true,
                addr: false,
                class: match v {
                    Value::Int(_) => Class::Int,
                    Value::Float(_) => Class::Float,
                    Value::Ref(p) => match self.heap.root_index(p) {
                        Some(i) if i < self.heap.num_objs() => Class::Obj,
                        _ => Class::Opaque,
                    },
                },
            },
            None => self.sims[r.index()].expect("a value-defining op"),
        }
    }

    fn record(&mut self, r: OpRef, s: Sim) {
        self.sims[r.index()] = Some(s);
        match s.class {
            Class::Int => self.ints.push(r),
            Class::Float => self.floats.push(r),
            Class::Obj => self.objs.push(r),
            Class::Array { .. } => self.arrays.push(r),
            Class::Opaque => {}
        }
        self.all.push(r);
    }

    fn int(&mut self, a: Arg) -> OpRef {
        match a {
            Arg::Val(k) => pick(&self.ints, k).unwrap_or_else(|| self.t.int(k as i64)),
            Arg::Imm(c) => self.t.int(c),
        }
    }

    fn float(&mut self, a: Arg) -> OpRef {
        match a {
            Arg::Val(k) => match pick(&self.floats, k) {
                Some(r) => r,
                None => self.t.float(k as f64),
            },
            Arg::Imm(c) => {
                let f = match c {
                    0..=12 => super::recipe::SPECIAL_FLOATS[c as usize],
                    _ => c as f64 / 4.0,
                };
                self.t.float(f)
            }
        }
    }

    /// An object for an operand (`Val(k)` or `Imm(k)` both select the `k`-th most recent).
    fn obj(&self, a: Arg) -> Option<OpRef> {
        let k = match a {
            Arg::Val(k) => k,
            Arg::Imm(c) => c as u8,
        };
        pick(&self.objs, k)
    }

    /// A value of a field's or array item's kind.
    fn value_of_kind(&mut self, kind: Type, a: Arg) -> Option<OpRef> {
        match kind {
            Type::Int => Some(self.int(a)),
            Type::Float => Some(self.float(a)),
            _ => self.obj(a),
        }
    }

    // ---- emitting and simulating --------------------------------------------------------

    fn emit(&mut self, op: Op) -> OpRef {
        self.emit_sim(op, true)
    }

    /// Emits `op`; executes it on the simulated state unless `exec` is false (an access a
    /// guard just before protects, and which that guard stops in the simulated pass).
    fn emit_sim(&mut self, op: Op, exec: bool) -> OpRef {
        let args: Vec<Sim> = op.args.iter().map(|&a| self.sim(a)).collect();
        let vals: Vec<Value> = args.iter().map(|s| s.v).collect();
        let ty = op.ty();
        let v = if exec {
            self.exec(&op, &vals)
        } else {
            (ty != Type::Void).then(|| Value::from_bits(ty, 0))
        };
        let class = match ty {
            Type::Int => Class::Int,
            Type::Float => Class::Float,
            _ => match op.opcode {
                Opcode::New | Opcode::GetfieldR | Opcode::CallR => Class::Obj,
                // An integer is an object's address on every execution only if it is the
                // same on every execution and a heap object's address now.
                Opcode::CastIntToPtr => match v.map(|v| self.heap.root_index(v.addr())) {
                    Some(Some(i)) if args[0].inv && i < self.heap.num_objs() => Class::Obj,
                    _ => Class::Opaque,
                },
                Opcode::NewArray => Class::Array {
                    descr: op.descr.expect("new_array has a descriptor"),
                    len: vals[0].int().max(0) as u32,
                },
                Opcode::SameAsR => args[0].class,
                _ => Class::Opaque,
            },
        };
        let inv_kind = op.opcode.is_pure()
            || (matches!(
                op.opcode,
                Opcode::GetfieldI | Opcode::GetfieldF | Opcode::GetfieldR
            ) && op.descr == Some(self.d.fields[IMM]));
        let args_inv = args.iter().all(|s| s.inv);
        let opcode = op.opcode;
        let r = self.t.push(op);
        self.sims.push(None);
        if let Some(v) = v {
            let root = match v {
                Value::Ref(p) => self.heap.root_index(p).is_some(),
                _ => true,
            };
            let inv = (self.once || (inv_kind && args_inv)) && root;
            let addr = opcode == Opcode::CastPtrToInt
                || (ty == Type::Int
                    && (opcode.is_pure() || opcode.is_ovf())
                    && args.iter().any(|a| a.addr));
            self.record(
                r,
                Sim {
                    v,
                    inv,
                    class,
                    addr,
                },
            );
        }
        if opcode.is_pure() {
            self.pure_ops.push(r.index());
            if opcode.is_call() {
                self.pure_calls.push(r.index());
            }
        } else if opcode.is_guard()
            && !matches!(opcode, Opcode::GuardNoOverflow | Opcode::GuardOverflow)
        {
            self.guards.push(r.index());
        }
        r
    }

    /// Executes a non-guard op on the simulated state; returns its value.
    fn exec(&mut self, op: &Op, vals: &[Value]) -> Option<Value> {
        use Opcode::*;
        let descr = op.descr.map(|d| self.t.get_descr(d).kind.clone());
        match (op.opcode, descr) {
            (o, _) if o.is_guard() => None,
            (Label | Jump | Finish | RecordKnownResult | RecordExactValue | QuasiimmutField, _) => {
                None
            }
            (o, _) if o.is_ovf() => {
                let (v, ovf) = eval_ovf(o, vals[0].int(), vals[1].int());
                self.overflowed = ovf;
                Some(Value::Int(v))
            }
            (o, Some(DescrKind::Call(c))) if o.is_call() => {
                // SAFETY: the first argument is one of `FUNCS` with the signature `c`
                // describes, and the builder passes it only arguments that keep its contract
                // (live objects, arrays of at least `ARR_LEN` items for `mess_arr`).
                unsafe { crate::call::call(vals[0].addr(), &c, &vals[1..]) }
            }
            (o, _) if o.is_pure() => eval_pure(o, vals),
            (New, Some(DescrKind::Size(s))) => Some(Value::Ref(self.arena.alloc(s.size as usize))),
            (NewArray, Some(DescrKind::Array(a))) => {
                let n = vals[0].int().max(0) as usize;
                Some(Value::Ref(
                    self.arena.alloc(a.base as usize + n * a.item_size as usize),
                ))
            }
            (o, Some(DescrKind::Field(f))) => {
                let addr = vals[0].addr() + f.offset as usize;
                if o == Setfield {
                    interp::store(addr, f.size, vals[1]);
                    None
                } else {
                    Some(interp::load(addr, f.size, f.signed, op.ty()))
                }
            }
            (o, Some(DescrKind::Array(a))) => {
                let addr = vals[0].addr()
                    + a.base as usize
                    + vals[1].int() as usize * a.item_size as usize;
                if o == Setarrayitem {
                    interp::store(addr, a.item_size, vals[2]);
                    None
                } else {
                    Some(interp::load(addr, a.item_size, a.signed, op.ty()))
                }
            }
            (o, _) => unreachable!("the builder does not emit {}", o.name()),
        }
    }

    fn op(&mut self, opcode: Opcode, args: &[OpRef]) -> OpRef {
        self.emit(Op::new(opcode, args))
    }

    fn op_d(&mut self, opcode: Opcode, args: &[OpRef], d: DescrId) -> OpRef {
        self.emit(Op::new(opcode, args).with_descr(d))
    }

    fn resume(&mut self, spec: &ResumeSpec) -> Resume {
        let mut values: Vec<OpRef> = spec
            .vals
            .iter()
            .filter_map(|&k| pick(&self.all, k))
            .collect();
        for &c in &spec.consts {
            values.push(self.t.int(c));
        }
        let id = self.next_id;
        self.next_id += 1;
        let n = (spec.frames as usize).clamp(1, 3);
        if n == 1 {
            return Resume::flat(id, values);
        }
        let len = values.len();
        let frames = (0..n)
            .map(|k| FrameInfo {
                code: k as u32 + 1,
                pc: (k * 7 + 3) as u32,
                len: ((k + 1) * len / n - k * len / n) as u32,
            })
            .collect();
        Resume {
            id,
            frames,
            values,
            virtuals: vec![],
            stores: vec![],
        }
    }

    /// Emits a guard, unless it fails on the simulated pass and tests an integer computed
    /// from an address (see [`Sim::addr`]).
    fn guard(&mut self, opcode: Opcode, args: &[OpRef], spec: &ResumeSpec) {
        let sims: Vec<Sim> = args.iter().map(|&a| self.sim(a)).collect();
        let passes = match opcode {
            Opcode::GuardTrue => sims[0].v.int() != 0,
            Opcode::GuardFalse => sims[0].v.int() == 0,
            Opcode::GuardValue => sims[0].v == sims[1].v,
            Opcode::GuardNonnull => sims[0].v.addr() != 0,
            Opcode::GuardIsnull => sims[0].v.addr() == 0,
            Opcode::GuardNoOverflow => !self.overflowed,
            Opcode::GuardOverflow => self.overflowed,
            _ => true,
        };
        if !passes && sims.iter().any(|s| s.addr) {
            return;
        }
        self.past_failure |= !passes;
        let r = self.resume(spec);
        self.emit(Op::new(opcode, args).with_resume(r));
    }

    /// A guard on an int condition that passes in the simulated pass unless `fail`.
    fn guard_cond(&mut self, c: OpRef, fail: bool, spec: &ResumeSpec) {
        // Sometimes the condition's negation, as Rust writes `!cond` (`== 0`, `^ 1`), which
        // the guards stage reads back as the condition flipped.
        let c = match self.t.ops.len() % 4 {
            0 => {
                let zero = self.t.int(0);
                self.op(Opcode::IntEq, &[c, zero])
            }
            1 => {
                let one = self.t.int(1);
                self.op(Opcode::IntXor, &[c, one])
            }
            _ => c,
        };
        let truthy = self.sim(c).v.int() != 0;
        let opcode = if truthy != fail {
            Opcode::GuardTrue
        } else {
            Opcode::GuardFalse
        };
        self.guard(opcode, &[c], spec);
    }

    fn func(&mut self, f: usize) -> (OpRef, DescrId) {
        let func = &FUNCS[f];
        (self.t.func(func.name, (func.addr)()), self.d.funcs[f])
    }

    fn call(&mut self, f: usize, args: &[OpRef]) -> OpRef {
        let (fr, d) = self.func(f);
        let mut all = vec![fr];
        all.extend_from_slice(args);
        let func = &FUNCS[f];
        let opcode = if (func.effects)(&self.d).elidable {
            Opcode::call_pure(func.ret).expect("elidable functions return a value")
        } else {
            Opcode::call(func.ret)
        };
        self.op_d(opcode, &all, d)
    }

    fn known_result(&mut self, res: OpRef, f: usize, args: &[OpRef]) {
        if self.past_failure {
            return;
        }
        let (fr, d) = self.func(f);
        let mut all = vec![res, fr];
        all.extend_from_slice(args);
        self.op_d(Opcode::RecordKnownResult, &all, d);
    }

    // ---- the steps ---------------------------------------------------------------------

    fn inputs(&mut self) {
        let c = self.case;
        let n = self.heap.num_objs();
        let mut vals: Vec<(Value, Class)> = c
            .ref_inputs
            .iter()
            .map(|&i| (Value::Ref(self.heap.obj(i as usize % n)), Class::Obj))
            .collect();
        if c.arr_input {
            vals.push((
                Value::Ref(self.heap.arr()),
                Class::Array {
                    descr: self.d.arr,
                    len: ARR_LEN as u32,
                },
            ));
        }
        vals.extend(c.int_inputs.iter().map(|&i| (Value::Int(i), Class::Int)));
        vals.extend(
            c.float_inputs
                .iter()
                .map(|&f| (Value::Float(f), Class::Float)),
        );
        for (k, (v, class)) in vals.into_iter().enumerate() {
            let r = self.t.input(v.ty());
            self.sims.push(None);
            let arg = if c.loop_args.is_empty() {
                LoopArg {
                    sel: 0,
                    varying: false,
                    back: 0,
                }
            } else {
                c.loop_args[k % c.loop_args.len()]
            };
            let arg = LoopArg {
                varying: arg.varying && !matches!(class, Class::Array { .. }),
                ..arg
            };
            let inv = c.shape != Shape::LoopInputs || !arg.varying;
            self.record(
                r,
                Sim {
                    v,
                    inv,
                    class,
                    addr: false,
                },
            );
            if c.shape == Shape::LoopInputs {
                self.header.push((r, arg));
            }
            self.inputs.push(v);
        }
    }

    fn label(&mut self) {
        if self.case.shape != Shape::LoopLabel || self.labeled {
            return;
        }
        self.labeled = true;
        let mut args: Vec<OpRef> = Vec::new();
        for &arg in &self.case.loop_args {
            if let Some(v) = pick(&self.all, arg.sel) {
                if !args.contains(&v) {
                    args.push(v);
                    let class = self.sim(v).class;
                    let arg = LoopArg {
                        varying: arg.varying
                            && matches!(class, Class::Int | Class::Float | Class::Obj),
                        ..arg
                    };
                    self.header.push((v, arg));
                }
            }
        }
        self.op(Opcode::Label, &args);
        self.once = false;
        let varying: Vec<OpRef> = self
            .header
            .iter()
            .filter(|h| h.1.varying)
            .map(|h| h.0)
            .collect();
        for &v in &varying {
            if let Some(s) = self.sims[v.index()].as_mut() {
                s.inv = false;
            }
        }
        // An index that was in range (masked, or checked by a guard in the preamble) may not
        // be once the jump passes another value for it.
        self.locs
            .retain(|l| !matches!(l, Loc::Item(_, i, _) if varying.contains(i)));
    }

    /// A new object whose `next` is a loop-invariant object (objects always point to live
    /// objects) and whose `a64` is a recent integer; `None` without an invariant object.
    fn fresh_for_next_iteration(&mut self, k: u8) -> Option<OpRef> {
        let fixed: Vec<OpRef> = self
            .objs
            .iter()
            .copied()
            .filter(|&r| self.sim(r).inv)
            .collect();
        let next = pick(&fixed, k)?;
        let p = self.op_d(Opcode::New, &[], self.d.obj);
        self.op_d(Opcode::Setfield, &[p, next], self.d.fields[NEXT]);
        let x = self.int(Arg::Val(k));
        self.op_d(Opcode::Setfield, &[p, x], self.d.fields[A64]);
        Some(p)
    }

    fn end(&mut self) {
        match self.case.shape {
            Shape::Straight => {
                let vals: Vec<OpRef> = self
                    .case
                    .finish
                    .iter()
                    .filter_map(|&k| pick(&self.all, k))
                    .collect();
                self.op(Opcode::Finish, &vals);
            }
            Shape::LoopInputs | Shape::LoopLabel => {
                self.label();
                let header = self.header.clone();
                let mut vals: Vec<OpRef> = Vec::with_capacity(header.len());
                for &(v, arg) in &header {
                    if !arg.varying {
                        vals.push(v);
                        continue;
                    }
                    let class = self.sim(v).class;
                    if matches!(class, Class::Obj) && arg.back % 2 == 1 {
                        // A fresh object for the next iteration (a boxed value): the loop
                        // may carry it across its label as its fields.
                        if let Some(p) = self.fresh_for_next_iteration(arg.back) {
                            vals.push(p);
                            continue;
                        }
                    }
                    let list = match class {
                        Class::Int => &self.ints,
                        Class::Float => &self.floats,
                        Class::Obj => &self.objs,
                        _ => {
                            vals.push(v);
                            continue;
                        }
                    };
                    vals.push(pick(list, arg.back).unwrap_or(v));
                }
                self.op(Opcode::Jump, &vals);
            }
        }
    }
}
