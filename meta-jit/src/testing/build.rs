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

use super::funcs::{self, FUNCS};
use super::heap::{Arena, Descrs, Heap, HeapSnapshot, ARR_LEN, FIELDS, IMM, NEXT};
use super::recipe::{Arg, Case, Kind, LoopArg, ResumeSpec, Shape, Step};
use crate::interp::{self, Outcome, Run, RunError};
use crate::ir::semantics::{eval_ovf, eval_pure};
use crate::ir::{
    DescrId, DescrKind, Flags, FrameInfo, Op, OpRef, Opcode, Resume, Trace, Type, Value,
};

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
        Built {
            trace,
            inputs,
            heap,
            run: Run {
                max_iterations: self.iterations.max(1) as usize,
                invalidated: self.invalidated,
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

const INT2: [Opcode; 21] = {
    use Opcode::*;
    [
        IntAdd,
        IntSub,
        IntMul,
        IntFloorDiv,
        IntMod,
        IntAnd,
        IntOr,
        IntXor,
        IntLshift,
        IntRshift,
        UintRshift,
        IntLt,
        IntLe,
        IntEq,
        IntNe,
        IntGt,
        IntGe,
        UintLt,
        UintLe,
        UintGt,
        UintGe,
    ]
};
const INT_CMP: [Opcode; 10] = {
    use Opcode::*;
    [
        IntLt, IntLe, IntEq, IntNe, IntGt, IntGe, UintLt, UintLe, UintGt, UintGe,
    ]
};
const INT1: [Opcode; 4] = [
    Opcode::IntNeg,
    Opcode::IntInvert,
    Opcode::IntIsZero,
    Opcode::IntIsTrue,
];
const FLOAT2: [Opcode; 10] = {
    use Opcode::*;
    [
        FloatAdd,
        FloatSub,
        FloatMul,
        FloatTrueDiv,
        FloatLt,
        FloatLe,
        FloatEq,
        FloatNe,
        FloatGt,
        FloatGe,
    ]
};
const FLOAT_CMP: [Opcode; 6] = {
    use Opcode::*;
    [FloatLt, FloatLe, FloatEq, FloatNe, FloatGt, FloatGe]
};
const OVF: [Opcode; 3] = [Opcode::IntAddOvf, Opcode::IntSubOvf, Opcode::IntMulOvf];

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
}

fn pick(list: &[OpRef], k: u8) -> Option<OpRef> {
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
        self.emit(Op::new(opcode, args.to_vec()))
    }

    fn op_d(&mut self, opcode: Opcode, args: &[OpRef], d: DescrId) -> OpRef {
        self.emit(Op::new(opcode, args.to_vec()).with_descr(d))
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
        let r = self.resume(spec);
        self.emit(Op::new(opcode, args.to_vec()).with_resume(r));
    }

    /// A guard on an int condition that passes in the simulated pass unless `fail`.
    fn guard_cond(&mut self, c: OpRef, fail: bool, spec: &ResumeSpec) {
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

    fn step(&mut self, s: &Step) {
        use Opcode::*;
        match s.kind {
            Kind::Int2 => {
                let (a, b) = (self.int(s.a), self.int(s.b));
                self.op(INT2[s.x as usize % INT2.len()], &[a, b]);
            }
            Kind::Int1 => {
                let a = self.int(s.a);
                self.op(INT1[s.x as usize % INT1.len()], &[a]);
            }
            Kind::Float2 => {
                let (a, b) = (self.float(s.a), self.float(s.b));
                self.op(FLOAT2[s.x as usize % FLOAT2.len()], &[a, b]);
            }
            Kind::Float1 => {
                let a = self.float(s.a);
                self.op(if s.x & 1 == 0 { FloatNeg } else { FloatAbs }, &[a]);
            }
            Kind::Cast => match s.x % 5 {
                0 => {
                    let a = self.int(s.a);
                    self.op(CastIntToFloat, &[a]);
                }
                1 => {
                    let a = self.float(s.a);
                    self.op(CastFloatToInt, &[a]);
                }
                2 => {
                    let a = self.float(s.a);
                    self.op(FloatToBits, &[a]);
                }
                3 => {
                    let a = self.int(s.a);
                    self.op(FloatFromBits, &[a]);
                }
                _ => {
                    // Only addresses that are the same on every run become integers.
                    let fixed: Vec<OpRef> = self
                        .objs
                        .iter()
                        .copied()
                        .filter(|&r| self.sim(r).inv)
                        .collect();
                    if let Some(p) = pick(&fixed, s.y) {
                        let i = self.op(CastPtrToInt, &[p]);
                        self.op(CastIntToPtr, &[i]);
                    }
                }
            },
            Kind::Signext => {
                let a = self.int(s.a);
                let w = self.t.int([1, 2, 4, 8][s.x as usize % 4]);
                self.op(IntSignext, &[a, w]);
            }
            Kind::Identity => self.identity(s),
            Kind::Repeat => {
                if let Some(&i) = pick_idx(&self.pure_ops, s.x) {
                    let mut op = self.t.ops[i].clone();
                    if s.fail && op.opcode.flags().has(Flags::COMMUTATIVE) {
                        op.args.swap(0, 1);
                    }
                    self.emit(op);
                }
            }
            Kind::Ovf => {
                let (a, b) = (self.int(s.a), self.int(s.b));
                self.op(OVF[s.x as usize % 3], &[a, b]);
                let opcode = if self.overflowed != s.fail {
                    GuardOverflow
                } else {
                    GuardNoOverflow
                };
                self.guard(opcode, &[], &s.resume);
            }
            Kind::Elidable => self.elidable(s),
            Kind::ElidableAgain => {
                if let Some(&i) = pick_idx(&self.pure_calls, s.x) {
                    let mut op = self.t.ops[i].clone();
                    let res = OpRef::op(i);
                    if s.fail && op.args.len() > 1 && self.t.type_of(op.args[1]) == op.ty() {
                        op.args[1] = res;
                    }
                    self.emit(op);
                }
            }
            Kind::Exact => {
                let fixed: Vec<OpRef> = self
                    .all
                    .iter()
                    .copied()
                    .filter(|&r| {
                        let s = self.sim(r);
                        s.inv && matches!(s.class, Class::Int | Class::Float | Class::Obj)
                    })
                    .collect();
                if let Some(v) = pick(&fixed, s.x) {
                    let c = self.t.constant(self.sim(v).v);
                    self.op(RecordExactValue, &[v, c]);
                }
            }
            Kind::Guard => self.guard_step(s),
            Kind::GuardAgain => {
                if let Some(&i) = pick_idx(&self.guards, s.x) {
                    let op = self.t.ops[i].clone();
                    self.guard(op.opcode, &op.args, &s.resume);
                }
            }
            Kind::Load => {
                if let Some(p) = pick(&self.objs, s.x) {
                    let f = s.y as usize % FIELDS.len();
                    self.op_d(Opcode::getfield(FIELDS[f].kind), &[p], self.d.fields[f]);
                    self.locs.push(Loc::Field(p, f));
                }
            }
            Kind::Store => {
                if let Some(p) = pick(&self.objs, s.x) {
                    let f = s.y as usize % (FIELDS.len() - 1);
                    self.store_field(p, f, s.a);
                }
            }
            Kind::Reload => match pick_idx(&self.locs, s.x).copied() {
                Some(Loc::Field(p, f)) => {
                    self.op_d(Opcode::getfield(FIELDS[f].kind), &[p], self.d.fields[f]);
                }
                Some(Loc::Item(a, i, d)) => {
                    self.op_d(GetarrayitemI, &[a, i], d);
                }
                None => {}
            },
            Kind::Restore => match pick_idx(&self.locs, s.x).copied() {
                Some(Loc::Field(p, f)) if f != IMM => self.store_field(p, f, s.a),
                Some(Loc::Item(a, i, d)) => {
                    let v = self.int(s.a);
                    self.op_d(Setarrayitem, &[a, i, v], d);
                }
                _ => {}
            },
            Kind::Item => self.item(s),
            Kind::New => self.new_obj(s),
            Kind::NewArray => {
                let descr = if s.y % 2 == 1 {
                    self.d.bytes
                } else {
                    self.d.arr
                };
                let len = if s.y & 0x10 != 0 {
                    // A computed length, the same on every run.
                    let fixed: Vec<OpRef> = self
                        .ints
                        .iter()
                        .copied()
                        .filter(|&r| self.sim(r).inv)
                        .collect();
                    match pick(&fixed, s.x) {
                        Some(v) => {
                            let m = self.t.int(15);
                            self.op(IntAnd, &[v, m])
                        }
                        None => self.t.int(s.x as i64 % 16 + 1),
                    }
                } else {
                    self.t.int(s.x as i64 % 16 + 1)
                };
                let a = self.op_d(NewArray, &[len], descr);
                let n = self.sim(len).v.int();
                for k in 0..(s.y as i64 / 2 % 3).min(n) {
                    let i = self.t.int(k);
                    let v = self.int(s.a);
                    self.op_d(Setarrayitem, &[a, i, v], descr);
                }
            }
            Kind::Call => self.residual(s),
            Kind::PtrCmp => {
                if let (Some(a), Some(b)) = (pick(&self.objs, s.x), pick(&self.objs, s.y)) {
                    self.op(if s.fail { PtrNe } else { PtrEq }, &[a, b]);
                }
            }
            Kind::Promote => {
                if let Some(p) = pick(&self.objs, s.x) {
                    let n = self.heap.num_objs();
                    if let Some(i) = self.heap.root_index(self.sim(p).v.addr()) {
                        let target = if s.fail { (i + 1) % n } else { i };
                        if target != i || !s.fail {
                            let c = self.t.ptr(self.heap.obj(target));
                            self.guard(GuardValue, &[p, c], &s.resume);
                        }
                    }
                }
            }
            Kind::Label => self.label(),
        }
    }

    fn store_field(&mut self, p: OpRef, f: usize, a: Arg) {
        debug_assert!(f != IMM, "imm is written only at initialization");
        if let Some(v) = self.value_of_kind(FIELDS[f].kind, a) {
            self.op_d(Opcode::Setfield, &[p, v], self.d.fields[f]);
            self.locs.push(Loc::Field(p, f));
        }
    }

    fn identity(&mut self, s: &Step) {
        use Opcode::*;
        let a = self.int(s.a);
        let c = |b: &mut Self, i: i64| b.t.int(i);
        match s.x % 30 {
            0 => {
                let z = c(self, 0);
                self.op(IntAdd, &[a, z]);
            }
            1 => {
                let z = c(self, 0);
                self.op(IntAdd, &[z, a]);
            }
            2 => {
                let z = c(self, 0);
                self.op(IntSub, &[a, z]);
            }
            3 => {
                let one = c(self, 1);
                self.op(IntMul, &[a, one]);
            }
            4 => {
                let one = c(self, 1);
                self.op(IntMul, &[one, a]);
            }
            5 => {
                let z = c(self, 0);
                self.op(IntOr, &[a, z]);
            }
            6 => {
                let m = c(self, -1);
                self.op(IntAnd, &[a, m]);
            }
            7 => {
                let z = c(self, 0);
                self.op(IntXor, &[a, z]);
            }
            8 => {
                let z = c(self, 0);
                self.op(IntLshift, &[a, z]);
            }
            9 => {
                let z = c(self, 64);
                self.op(IntRshift, &[a, z]);
            }
            10 => {
                self.op(SameAsI, &[a]);
            }
            11 => {
                self.op(IntSub, &[a, a]);
            }
            12 => {
                self.op(IntXor, &[a, a]);
            }
            13 => {
                self.op(IntEq, &[a, a]);
            }
            14 => {
                self.op(IntLt, &[a, a]);
            }
            15 => {
                self.op(IntLe, &[a, a]);
            }
            16 => {
                self.op(UintGt, &[a, a]);
            }
            17 => {
                let n = self.op(IntNeg, &[a]);
                self.op(IntNeg, &[n]);
            }
            18 => {
                let n = self.op(IntInvert, &[a]);
                self.op(IntInvert, &[n]);
            }
            19 => {
                let z = c(self, 0);
                self.op(IntMul, &[a, z]);
            }
            20 => {
                let z = c(self, 0);
                self.op(IntAnd, &[z, a]);
            }
            21 => {
                // Constants only: folds all the way.
                let (x, y) = (c(self, s.y as i64), c(self, s.x as i64 - 100));
                let m = self.op(IntMul, &[x, y]);
                let k = c(self, 3);
                self.op(IntAdd, &[m, k]);
            }
            22 => {
                let f = self.float(s.b);
                self.op(SameAsF, &[f]);
            }
            23 => {
                if let Some(p) = self.obj(s.b) {
                    self.op(SameAsR, &[p]);
                }
            }
            24 => {
                let f = self.float(s.b);
                let z = self.t.float(0.0);
                self.op(FloatAdd, &[f, z]);
            }
            25 => {
                let f = self.float(s.b);
                let one = self.t.float(1.0);
                self.op(FloatMul, &[f, one]);
            }
            26 => {
                let z = self.op(IntIsZero, &[a]);
                self.op(IntIsTrue, &[z]);
            }
            27 => {
                let b = self.int(s.b);
                let d = self.op(IntSub, &[a, b]);
                self.op(IntAdd, &[d, b]);
            }
            28 => {
                let b = self.int(s.b);
                let cmp = self.op(IntLt, &[a, b]);
                self.op(IntLt, &[a, b]);
                self.op(IntGe, &[a, b]);
                self.op(IntIsZero, &[cmp]);
            }
            _ => {
                let w = c(self, 8);
                self.op(IntSignext, &[a, w]);
            }
        }
    }

    fn elidable(&mut self, s: &Step) {
        let f = funcs::ELIDABLE[s.x as usize % funcs::ELIDABLE.len()];
        let mut args = Vec::new();
        for (k, &ty) in FUNCS[f].args.iter().enumerate() {
            let a = if k == 0 { s.a } else { s.b };
            match ty {
                Type::Int => args.push(self.int(a)),
                Type::Float => args.push(self.float(a)),
                _ => match self.obj(a) {
                    Some(p) => args.push(p),
                    None => return,
                },
            }
        }
        let fact = s.y % 4;
        if fact == 3 && (f == funcs::NEG || f == funcs::LOWER) {
            // A fact stated before any call, about the result of a pure op.
            let x = args[0];
            let y = if f == funcs::NEG {
                self.op(Opcode::IntNeg, &[x])
            } else {
                let m = self.t.int(!0x2020_2020_2020_2020);
                self.op(Opcode::IntAnd, &[x, m])
            };
            if f == funcs::NEG {
                self.known_result(x, f, &[y]);
                self.call(f, &[y]);
            } else {
                self.known_result(y, f, &[x]);
                self.call(f, &[x]);
            }
            return;
        }
        let r = self.call(f, &args);
        if fact == 0 {
            return;
        }
        match f {
            funcs::NEG => self.known_result(args[0], f, &[r]),
            funcs::LOWER | funcs::WABS => self.known_result(r, f, &[r]),
            _ => self.known_result(r, f, &args),
        }
        if fact >= 2 {
            match f {
                funcs::NEG | funcs::LOWER | funcs::WABS => self.call(f, &[r]),
                _ => self.call(f, &args),
            };
        }
    }

    fn guard_step(&mut self, s: &Step) {
        use Opcode::*;
        match s.x % 9 {
            0 | 1 => {
                let c = self.int(s.a);
                self.guard_cond(c, s.fail, &s.resume);
            }
            2 | 3 => {
                let (a, b) = (self.int(s.a), self.int(s.b));
                let c = self.op(INT_CMP[s.y as usize % INT_CMP.len()], &[a, b]);
                self.guard_cond(c, s.fail, &s.resume);
            }
            4 => {
                let a = self.int(s.a);
                let v = self.sim(a).v.int();
                // Failing on purpose must not claim an integer is a bogus address: the
                // optimizer may load from a constant pointer at optimization time.
                let wrong = match self.heap.root_index(v as usize) {
                    Some(i) if self.heap.num_objs() > 1 => {
                        Some(self.heap.obj((i + 1) % self.heap.num_objs()) as i64)
                    }
                    Some(_) => None,
                    None => Some(v.wrapping_add(1)),
                };
                let c = match (s.fail, wrong) {
                    (false, _) => Some(v),
                    (true, w) => w,
                };
                if let Some(c) = c {
                    let c = self.t.int(c);
                    self.guard(GuardValue, &[a, c], &s.resume);
                }
            }
            5 => {
                // Null tests. A guard failing on purpose says "not null" of a null reference,
                // never "null" of an object: a false null fact would let the optimizer call
                // or load through a null pointer at optimization time.
                let null = if s.y & 2 == 0 {
                    self.t.ptr(0)
                } else {
                    let z = self.t.ptr(0);
                    self.op(SameAsR, &[z])
                };
                if s.fail {
                    self.guard(GuardNonnull, &[null], &s.resume);
                } else if s.y & 1 == 0 {
                    self.guard(GuardIsnull, &[null], &s.resume);
                } else if let Some(p) = self.obj(s.a).or_else(|| pick(&self.arrays, s.y)) {
                    self.guard(GuardNonnull, &[p], &s.resume);
                }
            }
            6 => {
                self.guard(GuardNotInvalidated, &[], &s.resume);
            }
            7 => {
                let (a, b) = (self.float(s.a), self.float(s.b));
                let c = self.op(FLOAT_CMP[s.y as usize % FLOAT_CMP.len()], &[a, b]);
                self.guard_cond(c, s.fail, &s.resume);
            }
            _ => {
                let a = self.float(s.a);
                let v = self.sim(a).v.float();
                let c = self.t.float(if s.fail { v + 1.0 } else { v });
                if self.sim(c).v != Value::Float(v) || !s.fail {
                    self.guard(GuardValue, &[a, c], &s.resume);
                }
            }
        }
    }

    fn item(&mut self, s: &Step) {
        use Opcode::*;
        let Some(arr) = pick(&self.arrays, s.x) else {
            return;
        };
        let Class::Array { descr, len } = self.sim(arr).class else {
            unreachable!("arrays are of class Array");
        };
        if len == 0 {
            return;
        }
        let konst = |a: Arg| match a {
            Arg::Val(k) => k as i64,
            Arg::Imm(c) => c,
        };
        let mut exec = true;
        let x = self.int(s.a);
        // A bounds check on an address-derived index that fails would be skipped: mask it.
        let mode = if s.y % 3 == 2 && self.sim(x).addr {
            1
        } else {
            s.y % 3
        };
        let idx = match mode {
            0 => self.t.int(konst(s.a).rem_euclid(len as i64)),
            1 => {
                // The largest mask 2^k - 1 below `len`.
                let mask = ((len as u64 + 1).next_power_of_two() / 2 - 1) as i64;
                let m = self.t.int(mask);
                self.op(IntAnd, &[x, m])
            }
            _ => {
                let n = self.t.int(len as i64);
                let ok = self.op(UintLt, &[x, n]);
                exec = self.sim(ok).v.int() != 0;
                self.guard(GuardTrue, &[ok], &s.resume);
                x
            }
        };
        if s.fail {
            let v = self.int(s.b);
            self.emit_sim(
                Op::new(Setarrayitem, vec![arr, idx, v]).with_descr(descr),
                exec,
            );
        } else {
            self.emit_sim(
                Op::new(GetarrayitemI, vec![arr, idx]).with_descr(descr),
                exec,
            );
        }
        if exec {
            self.locs.push(Loc::Item(arr, idx, descr));
        }
    }

    fn new_obj(&mut self, s: &Step) {
        use Opcode::*;
        let p = self.op_d(New, &[], self.d.obj);
        // `next` first: objects always point to live objects.
        let next = self.obj(s.a).expect("`p` itself is an object");
        self.op_d(Setfield, &[p, next], self.d.fields[NEXT]);
        if s.x & 1 != 0 {
            let v = self.int(s.b);
            self.op_d(Setfield, &[p, v], self.d.fields[IMM]);
        }
        for (bit, f) in [(2, 6), (4, 8), (8, 0), (16, 5)] {
            if s.x & bit != 0 {
                let arg = if bit == 16 { s.b } else { s.c };
                if let Some(v) = self.value_of_kind(FIELDS[f].kind, arg) {
                    self.op_d(Setfield, &[p, v], self.d.fields[f]);
                }
            }
        }
        match s.y % 4 {
            1 => {
                // Escapes into another object (maybe a heap object, maybe a fresh one).
                let q = self.obj(s.c).expect("there is an object");
                self.op_d(Setfield, &[q, p], self.d.fields[NEXT]);
            }
            2 => {
                let x = self.int(s.c);
                match s.y / 4 % 3 {
                    0 => self.call(funcs::SET_A64, &[p, x]),
                    1 => self.call(funcs::MESS, &[p, x]),
                    _ => self.call(funcs::READ_OBJ, &[p]),
                };
            }
            _ => {}
        }
    }

    fn residual(&mut self, s: &Step) {
        let f = funcs::RESIDUAL[s.x as usize % funcs::RESIDUAL.len()];
        let x = self.int(s.a);
        let p = pick(&self.objs, s.y);
        match (f, p) {
            (funcs::SET_A64 | funcs::MESS, Some(p)) => {
                self.call(f, &[p, x]);
            }
            (funcs::READ_OBJ | funcs::NEXT_OF, Some(p)) => {
                self.call(f, &[p]);
            }
            (funcs::HASH, _) => {
                self.call(f, &[x]);
            }
            (funcs::MESS_ARR, _) => {
                let big: Vec<OpRef> = self
                    .arrays
                    .iter()
                    .copied()
                    .filter(|&a| {
                        matches!(self.sim(a).class, Class::Array { descr, len }
                            if descr == self.d.arr && len as usize >= ARR_LEN)
                    })
                    .collect();
                if let Some(a) = pick(&big, s.y) {
                    self.call(f, &[a, x]);
                }
            }
            _ => {}
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
                let vals: Vec<OpRef> = header
                    .iter()
                    .map(|&(v, arg)| {
                        if !arg.varying {
                            return v;
                        }
                        let list = match self.sim(v).class {
                            Class::Int => &self.ints,
                            Class::Float => &self.floats,
                            Class::Obj => &self.objs,
                            _ => return v,
                        };
                        pick(list, arg.back).unwrap_or(v)
                    })
                    .collect();
                self.op(Opcode::Jump, &vals);
            }
        }
    }
}

fn pick_idx<T>(list: &[T], k: u8) -> Option<&T> {
    (!list.is_empty()).then(|| &list[list.len() - 1 - k as usize % list.len()])
}
