//! The reference trace interpreter: executes a trace on concrete inputs against real memory.
//! It is the oracle the optimizer and the backend are tested against, so it is written for
//! obviousness, not speed: pure ops go through [`crate::ir::semantics`], memory ops read and
//! write the addresses they are given, calls go through [`crate::call`].
//!
//! It trusts the trace: a verified trace whose memory ops address live objects of the right
//! layout (the contract every recorded trace keeps). It knows nothing of optimization.

use crate::alloc::alloc_zeroed;
use crate::ir::semantics::{eval_ovf, eval_pure};
use crate::ir::{DescrKind, Op, OpRef, Opcode, PendingStore, Resume, Trace, Type, Value};

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// `finish(values)` was reached.
    Finish(Vec<Value>),
    /// A guard failed: its resume id, its op index, and the values of its resume data's
    /// [`Resume::live_ops`], in that order. The guard's pending stores ([`Resume::stores`])
    /// are done.
    GuardFailed {
        /// The guard's [`Resume::id`].
        id: u32,
        /// Its index in the trace.
        op: usize,
        /// The saved values.
        saved: Vec<Value>,
    },
    /// A `jump` to another trace's entry (descriptor `Target(n)`) with these values.
    Jump {
        /// The target number.
        target: u32,
        /// The values passed.
        args: Vec<Value>,
    },
    /// The loop ran the requested number of iterations; these are the values the last `jump`
    /// passed back to the loop header. The loop's pending stores ([`Trace::loop_stores`]) are
    /// done.
    Iterations(Vec<Value>),
}

/// A run that could not start, or that stopped before a memory access outside
/// [`Run::memory`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunError(pub String);

/// Options of a run.
#[derive(Clone, Debug)]
pub struct Run {
    /// Stop after this many jumps back to the loop header.
    pub max_iterations: usize,
    /// Whether `guard_not_invalidated` fails (the code was invalidated).
    pub invalidated: bool,
    /// The memory the run may touch, as (start, length) ranges; objects the run allocates are
    /// added as it goes. When set, a load or store outside it, or a call with a reference
    /// argument that points outside it, stops the run with an error naming the op instead of
    /// touching that memory. The property tests set it, so that a trace which would crash
    /// is reported only if it really reaches the bad access (not, say, after a guard that
    /// always fails).
    pub memory: Option<Vec<(usize, usize)>>,
    /// A dry run: stores go to an overlay that the run's later loads read through, and the
    /// memory is left as it was (a trace with allocations, calls or pending stores is not
    /// run dry: it is an error before the first op). For a caller that wants to know where a
    /// run would end before it does it.
    pub dry: bool,
}

impl Default for Run {
    fn default() -> Run {
        Run {
            max_iterations: 1000,
            invalidated: false,
            memory: None,
            dry: false,
        }
    }
}

/// Runs `trace` on `inputs` with the default options.
pub fn run(trace: &Trace, inputs: &[Value]) -> Result<Outcome, RunError> {
    Run::default().run(trace, inputs)
}

impl Run {
    /// Runs `trace` on `inputs`.
    pub fn run(&self, t: &Trace, inputs: &[Value]) -> Result<Outcome, RunError> {
        let ni = t.num_inputs();
        if inputs.len() != ni {
            return Err(RunError(format!(
                "{} inputs for a trace of {ni}",
                inputs.len()
            )));
        }
        for (k, (v, r)) in inputs.iter().zip(t.inputs()).enumerate() {
            if v.ty() != t.type_of(r) {
                return Err(RunError(format!(
                    "input {k} is {:?}, not {:?}",
                    v,
                    t.type_of(r)
                )));
            }
        }
        let mut vals: Vec<Option<Value>> = vec![None; t.ops.len()];
        for (k, v) in inputs.iter().enumerate() {
            vals[k] = Some(*v);
        }
        let mut memory = self.memory.clone();
        if self.dry {
            let effects = t.ops.iter().any(|op| {
                op.opcode.is_call()
                    || matches!(op.opcode, Opcode::New | Opcode::NewArray)
                    || op.resume.as_ref().is_some_and(|r| !r.stores.is_empty())
            });
            if effects || !t.loop_stores.is_empty() {
                return Err(RunError(
                    "a dry run of a trace with calls, allocations or pending stores".into(),
                ));
            }
        }
        let mut overlay: Option<hashbrown::HashMap<usize, u8>> =
            self.dry.then(hashbrown::HashMap::new);
        let header = t.label().map_or(ni, |l| l + 1);
        let mut iterations = 0;
        let mut pc = ni;
        let mut overflow = false;
        loop {
            let op = &t.ops[pc];
            let get = |r: OpRef| -> Value {
                match t.const_value(r) {
                    Some(c) => c,
                    None => vals[r.index()].expect("verified traces define values before use"),
                }
            };
            let args: Vec<Value> = op.args.iter().map(|&a| get(a)).collect();
            let result = match op.opcode {
                Opcode::Finish => return Ok(Outcome::Finish(args)),
                Opcode::Jump => {
                    if let Some(d) = op.descr {
                        if let DescrKind::Target(target) = t.get_descr(d).kind {
                            return Ok(Outcome::Jump { target, args });
                        }
                    }
                    iterations += 1;
                    if iterations >= self.max_iterations {
                        // Stopped here, the loop leaves memory as an exit would.
                        if let Some(m) = &memory {
                            for st in &t.loop_stores {
                                let (addr, size) = store_address(t, st, &get);
                                check_access(m, pc, op, addr, size)?;
                            }
                        }
                        do_stores(t, &t.loop_stores, &get);
                        return Ok(Outcome::Iterations(args));
                    }
                    let dest: Vec<OpRef> = match t.label() {
                        Some(l) => t.ops[l].args.to_vec(),
                        None => t.inputs().collect(),
                    };
                    for (d, v) in dest.iter().zip(args) {
                        vals[d.index()] = Some(v);
                    }
                    pc = header;
                    continue;
                }
                Opcode::Label => None,
                op_code if op_code.is_guard() => {
                    let ok = match op_code {
                        Opcode::GuardTrue => args[0].int() != 0,
                        Opcode::GuardFalse => args[0].int() == 0,
                        Opcode::GuardValue => args[0] == args[1],
                        Opcode::GuardNonnull => args[0].addr() != 0,
                        Opcode::GuardIsnull => args[0].addr() == 0,
                        Opcode::GuardNoOverflow => !overflow,
                        Opcode::GuardOverflow => overflow,
                        Opcode::GuardNotInvalidated => !self.invalidated,
                        _ => unreachable!(),
                    };
                    if !ok {
                        let r = op
                            .resume
                            .as_ref()
                            .expect("verified guards have resume data");
                        let saved = r.live_ops().iter().map(|&o| get(o)).collect();
                        // The exit does the stores the optimizer delayed past the guard.
                        if let Some(m) = &memory {
                            for st in &r.stores {
                                let (addr, size) = store_address(t, st, &get);
                                check_access(m, pc, op, addr, size)?;
                            }
                        }
                        do_stores(t, &r.stores, &get);
                        return Ok(Outcome::GuardFailed {
                            id: r.id,
                            op: pc,
                            saved,
                        });
                    }
                    None
                }
                o if o.is_ovf() => {
                    let (v, ovf) = eval_ovf(o, args[0].int(), args[1].int());
                    overflow = ovf;
                    Some(Value::Int(v))
                }
                o if o.is_call() => {
                    if let Some(m) = &memory {
                        for a in &args[1..] {
                            if let Value::Ref(p) = *a {
                                check_access(m, pc, op, p, 1)?;
                            }
                        }
                    }
                    let d = t
                        .get_descr(op.descr.expect("verified"))
                        .call()
                        .expect("verified");
                    // SAFETY: the trace's contract: its first argument is a function with the
                    // signature the descriptor gives, keeping the contract of `crate::call`.
                    unsafe { crate::call::call(args[0].addr(), d, &args[1..]) }
                }
                o if o.is_pure() => eval_pure(o, &args),
                Opcode::RecordKnownResult | Opcode::RecordExactValue | Opcode::QuasiimmutField => {
                    None
                }
                _ => {
                    if let Some(m) = &mut memory {
                        if let Some((addr, size)) = address(t, op, &args) {
                            check_access(m, pc, op, addr, size)?;
                        }
                    }
                    let r = memory_op(t, op, &args, overlay.as_mut());
                    if let (Some(m), Some(Value::Ref(p))) = (&mut memory, r) {
                        m.push((p, allocated_size(t, op, &args)));
                    }
                    r
                }
            };
            if op.ty() != Type::Void {
                vals[pc] = Some(result.expect("an op of a value type produced one"));
            }
            pc += 1;
        }
    }
}

/// The address and size a load or store touches (`None` for an allocation).
fn address(t: &Trace, op: &Op, args: &[Value]) -> Option<(usize, usize)> {
    if matches!(op.opcode, Opcode::New | Opcode::NewArray) {
        return None;
    }
    let d = &t.get_descr(op.descr?).kind;
    match d {
        DescrKind::Field(f) => Some((
            args[0].addr().wrapping_add(f.offset as usize),
            f.size as usize,
        )),
        DescrKind::Array(a) => {
            let index = args[1].int() as usize;
            let addr = args[0]
                .addr()
                .wrapping_add(a.base as usize)
                .wrapping_add(index.wrapping_mul(a.item_size as usize));
            Some((addr, a.item_size as usize))
        }
        _ => None,
    }
}

/// The size of the object an allocation op made.
fn allocated_size(t: &Trace, op: &Op, args: &[Value]) -> usize {
    match &t
        .get_descr(op.descr.expect("allocations have descriptors"))
        .kind
    {
        DescrKind::Size(s) => s.size as usize,
        DescrKind::Array(a) => {
            a.base as usize + args[0].int().max(0) as usize * a.item_size as usize
        }
        _ => 0,
    }
}

/// Fails unless `[addr, addr + size)` lies in one of the ranges of `memory`.
fn check_access(
    memory: &[(usize, usize)],
    pc: usize,
    op: &Op,
    addr: usize,
    size: usize,
) -> Result<(), RunError> {
    let inside = memory
        .iter()
        .any(|&(start, len)| addr >= start && addr.wrapping_add(size) <= start + len);
    if inside {
        return Ok(());
    }
    Err(RunError(format!(
        "op {pc} ({}) would touch {addr:#x}, which is outside the run's memory (not run: it \
         would crash)",
        op.opcode.name()
    )))
}

/// Executes a load, a store or an allocation.
fn memory_op(
    t: &Trace,
    op: &Op,
    args: &[Value],
    overlay: Option<&mut hashbrown::HashMap<usize, u8>>,
) -> Option<Value> {
    let d = &t
        .get_descr(op.descr.expect("memory ops have descriptors"))
        .kind;
    match (op.opcode, d) {
        (Opcode::New, DescrKind::Size(s)) => {
            Some(Value::Ref(alloc_zeroed(s.size as usize, s.align as usize)))
        }
        (Opcode::NewArray, DescrKind::Array(a)) => {
            let n = args[0].int().max(0) as usize;
            let size = a.base as usize + n * a.item_size as usize;
            Some(Value::Ref(alloc_zeroed(size, 8)))
        }
        (_, DescrKind::Field(f)) => {
            let addr = args[0].addr().wrapping_add(f.offset as usize);
            if op.opcode == Opcode::Setfield {
                store_to(overlay, addr, f.size, args[1]);
                None
            } else {
                Some(load_from(overlay, addr, f.size, f.signed, op.ty()))
            }
        }
        (_, DescrKind::Array(a)) => {
            let index = args[1].int() as usize;
            let addr = args[0]
                .addr()
                .wrapping_add(a.base as usize)
                .wrapping_add(index.wrapping_mul(a.item_size as usize));
            if op.opcode == Opcode::Setarrayitem {
                store_to(overlay, addr, a.item_size, args[2]);
                None
            } else {
                Some(load_from(overlay, addr, a.item_size, a.signed, op.ty()))
            }
        }
        _ => unreachable!("the verifier checks descriptor kinds"),
    }
}

/// A store into `overlay` (byte by byte, little-endian) when there is one, else into memory.
fn store_to(overlay: Option<&mut hashbrown::HashMap<usize, u8>>, addr: usize, size: u8, v: Value) {
    match overlay {
        Some(o) => {
            for (k, b) in v.bits().to_le_bytes().iter().take(usize::from(size)).enumerate() {
                o.insert(addr.wrapping_add(k), *b);
            }
        }
        None => store(addr, size, v),
    }
}

/// A load through `overlay` when there is one: the bytes stored there, the memory's for the
/// others.
fn load_from(
    overlay: Option<&mut hashbrown::HashMap<usize, u8>>,
    addr: usize,
    size: u8,
    signed: bool,
    ty: Type,
) -> Value {
    let Some(o) = overlay else {
        return load(addr, size, signed, ty);
    };
    let n = usize::from(size);
    if (0..n).all(|k| !o.contains_key(&addr.wrapping_add(k))) {
        return load(addr, size, signed, ty);
    }
    let mut bytes = [0u8; 8];
    for (k, b) in bytes.iter_mut().take(n).enumerate() {
        let a = addr.wrapping_add(k);
        *b = match o.get(&a) {
            Some(&b) => b,
            // SAFETY: the trace's contract: memory ops address live memory of the described
            // layout.
            None => unsafe { (a as *const u8).read() },
        };
    }
    // The same bytes in a local buffer, loaded as `load` loads them from memory.
    load(bytes.as_ptr() as usize, size, signed, ty)
}

/// Loads `size` bytes at `addr` as a value of type `ty`, extending integers as told.
pub fn load(addr: usize, size: u8, signed: bool, ty: Type) -> Value {
    let p = addr as *const u8;
    // SAFETY: the trace's contract: memory ops address live memory of the described layout.
    let bits = unsafe {
        match (size, signed) {
            (1, false) => p.read_unaligned() as u64,
            (1, true) => (p as *const i8).read_unaligned() as i64 as u64,
            (2, false) => (p as *const u16).read_unaligned() as u64,
            (2, true) => (p as *const i16).read_unaligned() as i64 as u64,
            (4, false) => (p as *const u32).read_unaligned() as u64,
            (4, true) => (p as *const i32).read_unaligned() as i64 as u64,
            _ => (p as *const u64).read_unaligned(),
        }
    };
    Value::from_bits(ty, bits)
}

/// Stores the low `size` bytes of `v` at `addr`.
pub fn store(addr: usize, size: u8, v: Value) {
    let p = addr as *mut u8;
    let bits = v.bits();
    // SAFETY: the trace's contract: memory ops address live memory of the described layout.
    unsafe {
        match size {
            1 => p.write_unaligned(bits as u8),
            2 => (p as *mut u16).write_unaligned(bits as u16),
            4 => (p as *mut u32).write_unaligned(bits as u32),
            _ => (p as *mut u64).write_unaligned(bits),
        }
    }
}

/// Rebuilds the values of a failed guard's frames from its saved values (in
/// [`Resume::live_ops`] order), allocating and filling its virtual objects, then does its
/// pending stores ([`Resume::stores`]). Returns one value per entry of [`Resume::values`].
pub fn materialize(t: &Trace, r: &Resume, saved: &[Value]) -> Vec<Value> {
    let live = r.live_ops();
    let mut objs: Vec<Option<usize>> = vec![None; r.virtuals.len()];
    // Allocate every virtual first, so they may point at each other (even in cycles).
    for (k, v) in r.virtuals.iter().enumerate() {
        let addr = match &t.get_descr(v.descr).kind {
            DescrKind::Size(s) => alloc_zeroed(s.size as usize, s.align as usize),
            DescrKind::Array(a) => {
                alloc_zeroed(a.base as usize + v.fields.len() * a.item_size as usize, 8)
            }
            _ => unreachable!("the verifier checks virtual descriptors"),
        };
        objs[k] = Some(addr);
    }
    let value = |x: OpRef| -> Value {
        if x.is_virtual() {
            Value::Ref(objs[x.index()].expect("allocated above"))
        } else if let Some(c) = t.const_value(x) {
            c
        } else {
            saved[live
                .iter()
                .position(|&l| l == x)
                .expect("live ops cover resume data")]
        }
    };
    for (k, v) in r.virtuals.iter().enumerate() {
        let base = objs[k].expect("allocated above");
        for (n, &(d, x)) in v.fields.iter().enumerate() {
            match &t.get_descr(d).kind {
                DescrKind::Field(f) => store(base + f.offset as usize, f.size, value(x)),
                DescrKind::Array(a) => store(
                    base + a.base as usize + n * a.item_size as usize,
                    a.item_size,
                    value(x),
                ),
                _ => unreachable!("the verifier checks virtual fields"),
            }
        }
    }
    do_stores(t, &r.stores, &value);
    r.values.iter().map(|&x| value(x)).collect()
}

/// Does the pending stores that `outcome`, an end of a run of `t` on `inputs` by something
/// other than [`Run::run`] (compiled code, whose exits leave them to resume), implies: a
/// failed guard's [`Resume::stores`], or, after the last iteration, [`Trace::loop_stores`].
pub fn exit_stores(t: &Trace, inputs: &[Value], outcome: &Outcome) {
    match outcome {
        Outcome::GuardFailed { op, saved, .. } => {
            let r = t.ops[*op].resume.as_ref().expect("a guard");
            let live = r.live_ops();
            let value = |x: OpRef| -> Value {
                t.const_value(x).unwrap_or_else(|| {
                    saved[live.iter().position(|&l| l == x).expect("saved")]
                })
            };
            do_stores(t, &r.stores, &value);
        }
        Outcome::Iterations(args) => {
            let jump = t.ops.last().expect("a loop");
            // A jump argument has the value the jump passed; an input that the loop carries
            // (a label argument) changed since the entry, and is one of those (verified); an
            // input the loop does not carry still has its entry value.
            let value = |x: OpRef| -> Value {
                if let Some(c) = t.const_value(x) {
                    c
                } else if let Some(k) = jump.args.iter().position(|&a| a == x) {
                    args[k]
                } else {
                    assert!(x.index() < t.num_inputs(), "verified");
                    inputs[x.index()]
                }
            };
            do_stores(t, &t.loop_stores, &value);
        }
        _ => {}
    }
}

/// The address and size a pending store writes, its values given by `value`.
fn store_address(t: &Trace, st: &PendingStore, value: &dyn Fn(OpRef) -> Value) -> (usize, usize) {
    let base = value(st.base).addr();
    match &t.get_descr(st.descr).kind {
        DescrKind::Field(f) => (base.wrapping_add(f.offset as usize), f.size as usize),
        DescrKind::Array(a) => {
            let index = st.index.map_or(0, |i| value(i).int()) as usize;
            let addr = base
                .wrapping_add(a.base as usize)
                .wrapping_add(index.wrapping_mul(a.item_size as usize));
            (addr, a.item_size as usize)
        }
        _ => unreachable!("the verifier checks pending stores"),
    }
}

/// Does pending stores ([`Resume::stores`], [`Trace::loop_stores`]) in order, their values
/// given by `value`: what an exit does before the interpreter reads the memory.
pub fn do_stores(t: &Trace, stores: &[PendingStore], value: &dyn Fn(OpRef) -> Value) {
    for st in stores {
        let (addr, size) = store_address(t, st, value);
        store(addr, size as u8, value(st.value));
    }
}
