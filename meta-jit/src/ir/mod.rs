//! The trace IR: one linear block of SSA operations, where an op *is* the value it defines.
//!
//! Values are named by [`OpRef`], a `u32` whose top bits tell an op (an index into
//! [`Trace::ops`]) from a constant (an index into the constant pool) or, inside resume data
//! only, a virtual object (an index into that guard's [`Resume::virtuals`]), so "is this a
//! constant" is one test. Trace inputs are the first ops (`input_i`, `input_f`, `input_r`).
//! Guards carry [`Resume`] data: which interpreter frames to rebuild and from which values;
//! the optimizer maps its values but never interprets its frames.
//!
//! This module owns the data and its invariants ([`verify`]); it knows nothing of how traces
//! are recorded, optimized or compiled. The text form is in [`print`](mod@print) and
//! [`parse`], the meaning of pure ops in [`semantics`].

mod descr;
mod opcode;
pub mod parse;
pub mod print;
pub mod semantics;
pub mod verify;

pub use descr::*;
pub use opcode::{Args, Flags, Opcode};

use hashbrown::HashMap;
use std::fmt;

/// The kind of a value. `Void` is the "result" of ops that define none; `Any` appears only in
/// argument specifications.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// A 64-bit integer (narrower integers and booleans are widened).
    Int,
    /// A 64-bit float.
    Float,
    /// A pointer-sized reference to memory.
    Ref,
    /// No value.
    Void,
    /// Any of `Int`, `Float`, `Ref` (argument specifications only).
    Any,
}

impl Type {
    /// The letter of the text form: `i`, `f`, `p` (refs) or `n` (void).
    pub fn letter(self) -> char {
        match self {
            Type::Int => 'i',
            Type::Float => 'f',
            Type::Ref => 'p',
            Type::Void | Type::Any => 'n',
        }
    }

    /// The type of a letter (`r` is accepted for `p`).
    pub fn from_letter(c: char) -> Option<Type> {
        match c {
            'i' => Some(Type::Int),
            'f' => Some(Type::Float),
            'p' | 'r' => Some(Type::Ref),
            'n' => Some(Type::Void),
            _ => None,
        }
    }
}

/// A reference to a value: an op, a constant, or (in resume data) a virtual object.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpRef(u32);

const CONST_BIT: u32 = 1 << 31;
const VIRTUAL_BIT: u32 = 1 << 30;
const INDEX_MASK: u32 = VIRTUAL_BIT - 1;

impl OpRef {
    /// The op at index `i` of the trace.
    pub fn op(i: usize) -> OpRef {
        debug_assert!(i < INDEX_MASK as usize);
        OpRef(i as u32)
    }

    /// The constant at index `i` of the pool.
    pub fn constant(i: usize) -> OpRef {
        debug_assert!(i < INDEX_MASK as usize);
        OpRef(i as u32 | CONST_BIT)
    }

    /// The virtual object at index `i` of a guard's resume data.
    pub fn virtual_obj(i: usize) -> OpRef {
        debug_assert!(i < INDEX_MASK as usize);
        OpRef(i as u32 | VIRTUAL_BIT)
    }

    /// Whether this is an op.
    pub fn is_op(self) -> bool {
        self.0 & (CONST_BIT | VIRTUAL_BIT) == 0
    }

    /// Whether this is a constant.
    pub fn is_const(self) -> bool {
        self.0 & CONST_BIT != 0
    }

    /// Whether this is a virtual object of resume data.
    pub fn is_virtual(self) -> bool {
        self.0 & VIRTUAL_BIT != 0
    }

    /// The index in the ops, the pool or the virtuals, whichever this refers to.
    pub fn index(self) -> usize {
        (self.0 & INDEX_MASK) as usize
    }

    /// Its bits, for a compact encoding ([`OpRef::from_bits`] gives it back).
    pub fn bits(self) -> u32 {
        self.0
    }

    /// The reference with these bits (from [`OpRef::bits`]).
    pub fn from_bits(bits: u32) -> OpRef {
        OpRef(bits)
    }
}

impl fmt::Debug for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_const() {
            write!(f, "c{}", self.index())
        } else if self.is_virtual() {
            write!(f, "v{}", self.index())
        } else {
            write!(f, "op{}", self.index())
        }
    }
}

/// A concrete value, as the reference interpreter and compiled code see it. Floats compare by
/// their bits, so a NaN equals itself.
#[derive(Copy, Clone, Debug)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// An address.
    Ref(usize),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        self.bits() == other.bits() && self.ty() == other.ty()
    }
}
impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.ty().hash(h);
        self.bits().hash(h);
    }
}

impl Value {
    /// The value's type.
    pub fn ty(self) -> Type {
        match self {
            Value::Int(_) => Type::Int,
            Value::Float(_) => Type::Float,
            Value::Ref(_) => Type::Ref,
        }
    }

    /// The 64 bits that machine code holds for it.
    pub fn bits(self) -> u64 {
        match self {
            Value::Int(i) => i as u64,
            Value::Float(f) => f.to_bits(),
            Value::Ref(p) => p as u64,
        }
    }

    /// The value of type `ty` with these bits.
    pub fn from_bits(ty: Type, bits: u64) -> Value {
        match ty {
            Type::Int => Value::Int(bits as i64),
            Type::Float => Value::Float(f64::from_bits(bits)),
            _ => Value::Ref(bits as usize),
        }
    }

    /// The integer (panics on another kind: the verifier rules that out).
    pub fn int(self) -> i64 {
        match self {
            Value::Int(i) => i,
            v => panic!("expected an int, got {v:?}"),
        }
    }

    /// The float.
    pub fn float(self) -> f64 {
        match self {
            Value::Float(f) => f,
            v => panic!("expected a float, got {v:?}"),
        }
    }

    /// The address.
    pub fn addr(self) -> usize {
        match self {
            Value::Ref(p) => p,
            v => panic!("expected a reference, got {v:?}"),
        }
    }
}

/// A constant of the pool. Functions are constants too, with a name for the text form.
#[derive(Clone, Debug, PartialEq)]
pub enum Const {
    /// A plain value.
    Value(Value),
    /// The address of a function, with its name.
    Func {
        /// Name in the text form (`ConstFn(name)`).
        name: String,
        /// Its address.
        addr: usize,
    },
}

impl Const {
    /// The value (a function is its address as a reference).
    pub fn value(&self) -> Value {
        match self {
            Const::Value(v) => *v,
            Const::Func { addr, .. } => Value::Ref(*addr),
        }
    }
}

/// The arguments of an op: up to four are stored inline, so the tracer and the optimizer,
/// which create and copy ops all the time, rarely allocate for them.
pub type OpArgs = smallvec::SmallVec<[OpRef; 4]>;

/// One operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// What it does.
    pub opcode: Opcode,
    /// Its arguments (for calls, the function first).
    pub args: OpArgs,
    /// Its descriptor, for ops that take one.
    pub descr: Option<DescrId>,
    /// Resume data, for guards.
    pub resume: Option<Box<Resume>>,
}

impl Op {
    /// An op with no descriptor and no resume data.
    pub fn new(opcode: Opcode, args: &[OpRef]) -> Op {
        Op {
            opcode,
            args: OpArgs::from_slice(args),
            descr: None,
            resume: None,
        }
    }

    /// The same op with a descriptor.
    pub fn with_descr(mut self, d: DescrId) -> Op {
        self.descr = Some(d);
        self
    }

    /// The same op with resume data.
    pub fn with_resume(mut self, r: Resume) -> Op {
        self.resume = Some(Box::new(r));
        self
    }

    /// The type of the value it defines.
    pub fn ty(&self) -> Type {
        self.opcode.result()
    }

    /// Replaces every op value it uses (arguments, resume values, virtuals' fields) by
    /// `f` of it; constants and virtual objects stay. For copying ops into another trace.
    pub fn map_ops(&mut self, mut f: impl FnMut(OpRef) -> OpRef) {
        let mut m = |r: &mut OpRef| {
            if r.is_op() {
                *r = f(*r);
            }
        };
        self.args.iter_mut().for_each(&mut m);
        if let Some(r) = self.resume.as_deref_mut() {
            r.values.iter_mut().for_each(&mut m);
            for virt in r.virtuals.iter_mut() {
                for field in virt.fields.iter_mut() {
                    m(&mut field.1);
                }
            }
            for st in r.stores.iter_mut() {
                st.refs_mut().for_each(&mut m);
            }
        }
    }
}

/// Resume data of a guard: how to rebuild the interpreter's frames when it fails. The
/// optimizer maps `values` and the virtuals' fields through its replacements and adds
/// virtuals; it never looks at `frames`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Resume {
    /// A number that identifies the guard across optimization (the optimizer keeps it).
    pub id: u32,
    /// The frames, outermost first; each takes the next `len` entries of `values`.
    pub frames: Vec<FrameInfo>,
    /// The values of every frame's live registers: ops, constants or virtuals.
    pub values: Vec<OpRef>,
    /// Objects the optimizer removed that the interpreter needs back.
    pub virtuals: Vec<Virtual>,
    /// Stores the optimizer delayed past this guard (virtualizable fields kept in registers,
    /// [`crate::opt::vable`]): done, in order, into the real memory before the interpreter
    /// resumes. Empty for the tracer's guards.
    pub stores: Vec<PendingStore>,
}

/// A store that a failing guard does before the interpreter resumes: `setfield(base, value,
/// descr)` for a field descriptor, `setarrayitem(base, index, value, descr)` for an array.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PendingStore {
    /// A field or array descriptor.
    pub descr: DescrId,
    /// The object or array written.
    pub base: OpRef,
    /// The item's index (arrays only).
    pub index: Option<OpRef>,
    /// The value stored.
    pub value: OpRef,
}

impl PendingStore {
    /// Its base, index (if any) and value, in that order.
    pub fn refs(&self) -> impl Iterator<Item = OpRef> {
        [Some(self.base), self.index, Some(self.value)]
            .into_iter()
            .flatten()
    }
    /// The same, to rewrite in place.
    pub fn refs_mut(&mut self) -> impl Iterator<Item = &mut OpRef> {
        [Some(&mut self.base), self.index.as_mut(), Some(&mut self.value)]
            .into_iter()
            .flatten()
    }
}

/// One interpreter frame of resume data.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameInfo {
    /// Which jitcode.
    pub code: u32,
    /// Where in it.
    pub pc: u32,
    /// How many values it takes from [`Resume::values`].
    pub len: u32,
}

/// An object that exists only in resume data: materialized when its guard fails.
#[derive(Clone, Debug, PartialEq)]
pub struct Virtual {
    /// The size or array descriptor it was allocated with.
    pub descr: DescrId,
    /// For a struct, `(field descriptor, value)` pairs; for an array, one entry per item with
    /// the array descriptor.
    pub fields: Vec<(DescrId, OpRef)>,
}

impl Resume {
    /// About how many bytes of heap it takes, with its box (an estimate for the JIT's memory
    /// limit).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<Resume>()
            + self.frames.capacity() * size_of::<FrameInfo>()
            + self.values.capacity() * size_of::<OpRef>()
            + self
                .virtuals
                .iter()
                .map(|v| size_of::<Virtual>() + v.fields.capacity() * 8)
                .sum::<usize>()
            + self.stores.capacity() * size_of::<PendingStore>()
    }

    /// Resume data with one frame (code 0, pc 0) holding these values.
    pub fn flat(id: u32, values: Vec<OpRef>) -> Resume {
        let len = values.len() as u32;
        Resume {
            id,
            frames: vec![FrameInfo {
                code: 0,
                pc: 0,
                len,
            }],
            values,
            virtuals: vec![],
            stores: vec![],
        }
    }

    /// Every value it names: `values`, then the virtuals' fields, then the pending stores'
    /// bases, indexes and values.
    pub fn refs(&self) -> impl Iterator<Item = OpRef> + '_ {
        let fields = self
            .virtuals
            .iter()
            .flat_map(|v| v.fields.iter().map(|f| f.1));
        let stores = self.stores.iter().flat_map(|s| s.refs());
        self.values.iter().copied().chain(fields).chain(stores)
    }

    /// The distinct ops whose values a failing guard must save, in order of first appearance
    /// in `values`, then in the virtuals' fields, then in the pending stores. Compiled code
    /// and the reference interpreter both save exactly these, in this order.
    pub fn live_ops(&self) -> Vec<OpRef> {
        let mut out = Vec::with_capacity(self.values.len());
        // Beyond a few values, a set answers "seen" (a guard of a call-heavy trace names tens).
        let mut seen = hashbrown::HashSet::new();
        for r in self.refs().filter(|r| r.is_op()) {
            let new = if out.len() < 16 {
                !out.contains(&r)
            } else {
                if seen.is_empty() {
                    seen.extend(out.iter().copied());
                }
                seen.insert(r)
            };
            if new {
                out.push(r);
                if !seen.is_empty() {
                    seen.insert(r);
                }
            }
        }
        out
    }
}

/// A trace: ops (inputs first), the constant pool and the descriptor table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The ops, in order; the first ones are the inputs.
    pub ops: Vec<Op>,
    /// The constant pool.
    pub consts: Vec<Const>,
    /// The descriptor table.
    pub descrs: Vec<Descr>,
    /// The stores a loop's closing `jump` (to its own label or inputs) leaves pending: memory
    /// the loop keeps in registers across iterations ([`crate::opt::vable`]). Every value, base
    /// and index is a constant, an input or an argument of the `jump`. Printed after the
    /// `jump` (`jump(i3) <r(p0)=i3>`). A run stopped after some iterations
    /// ([`crate::interp::Outcome::Iterations`]) does them, as an exit from the loop would.
    pub loop_stores: Vec<PendingStore>,
    const_index: HashMap<ConstKey, u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ConstKey {
    Value(Value),
    Func(usize),
}

impl Trace {
    /// An empty trace.
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Gives back the room its tables grew into, and drops the index that finds a constant's
    /// pool entry (for a trace kept for long; the index is built again if a constant is
    /// added).
    pub fn shrink_to_fit(&mut self) {
        self.ops.shrink_to_fit();
        self.consts.shrink_to_fit();
        self.descrs.shrink_to_fit();
        self.loop_stores.shrink_to_fit();
        self.const_index = HashMap::new();
    }

    /// About how many bytes of heap the trace takes: its ops, their resume data, its pools
    /// (an estimate for the JIT's memory limit, not an exact count).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let resume: usize = self
            .ops
            .iter()
            .filter_map(|op| op.resume.as_deref())
            .map(Resume::heap_bytes)
            .sum();
        let args: usize = self
            .ops
            .iter()
            .filter(|op| op.args.spilled())
            .map(|op| op.args.len() * size_of::<OpRef>())
            .sum();
        self.ops.capacity() * size_of::<Op>()
            + resume
            + args
            + self.loop_stores.capacity() * size_of::<PendingStore>()
            + self.consts.capacity() * size_of::<Const>()
            + self.descrs.capacity() * size_of::<Descr>()
            + self.const_index.capacity() * (size_of::<ConstKey>() + 4)
    }

    /// An empty trace sharing `other`'s constants and descriptors (so refs to them stay valid).
    pub fn with_tables_of(other: &Trace) -> Trace {
        Trace {
            ops: Vec::new(),
            consts: other.consts.clone(),
            descrs: other.descrs.clone(),
            loop_stores: Vec::new(),
            const_index: other.const_index.clone(),
        }
    }

    /// Adds an input of type `ty`; inputs must come before every other op.
    pub fn input(&mut self, ty: Type) -> OpRef {
        debug_assert!(self.ops.iter().all(|op| op.opcode.is_input()));
        self.push(Op::new(Opcode::input(ty), &[]))
    }

    /// The inputs.
    pub fn inputs(&self) -> impl Iterator<Item = OpRef> + '_ {
        self.ops
            .iter()
            .take_while(|op| op.opcode.is_input())
            .enumerate()
            .map(|(i, _)| OpRef::op(i))
    }

    /// How many inputs the trace has.
    pub fn num_inputs(&self) -> usize {
        self.ops
            .iter()
            .take_while(|op| op.opcode.is_input())
            .count()
    }

    /// Appends an op and returns its value.
    pub fn push(&mut self, op: Op) -> OpRef {
        self.ops.push(op);
        OpRef::op(self.ops.len() - 1)
    }

    /// Appends an op built from its parts.
    pub fn emit(&mut self, opcode: Opcode, args: &[OpRef]) -> OpRef {
        self.push(Op::new(opcode, args))
    }

    /// The constant with this value (added to the pool once).
    pub fn constant(&mut self, v: Value) -> OpRef {
        self.intern(ConstKey::Value(v), Const::Value(v))
    }

    /// An integer constant.
    pub fn int(&mut self, i: i64) -> OpRef {
        self.constant(Value::Int(i))
    }

    /// A float constant.
    pub fn float(&mut self, f: f64) -> OpRef {
        self.constant(Value::Float(f))
    }

    /// A reference constant.
    pub fn ptr(&mut self, p: usize) -> OpRef {
        self.constant(Value::Ref(p))
    }

    /// A function constant (one per address; the first name given is kept).
    pub fn func(&mut self, name: &str, addr: usize) -> OpRef {
        self.intern(
            ConstKey::Func(addr),
            Const::Func {
                name: name.to_string(),
                addr,
            },
        )
    }

    fn intern(&mut self, key: ConstKey, c: Const) -> OpRef {
        if self.const_index.is_empty() && !self.consts.is_empty() {
            // Dropped by `shrink_to_fit`: build it again (the first entry of a key wins).
            for (i, c) in self.consts.iter().enumerate().rev() {
                let k = match c {
                    Const::Value(v) => ConstKey::Value(*v),
                    Const::Func { addr, .. } => ConstKey::Func(*addr),
                };
                self.const_index.insert(k, i as u32);
            }
        }
        if let Some(&i) = self.const_index.get(&key) {
            return OpRef::constant(i as usize);
        }
        self.consts.push(c);
        let i = self.consts.len() - 1;
        self.const_index.insert(key, i as u32);
        OpRef::constant(i)
    }

    /// Adds a descriptor (one per name: adding a name again returns the first, which must be
    /// the same descriptor).
    pub fn descr(&mut self, name: &str, kind: DescrKind) -> DescrId {
        if let Some(i) = self.descrs.iter().position(|d| d.name == name) {
            debug_assert!(
                self.descrs[i].kind == kind,
                "descriptor `{name}` declared again as another descriptor"
            );
            return DescrId(i as u32);
        }
        self.descrs.push(Descr {
            name: name.to_string(),
            kind,
        });
        DescrId(self.descrs.len() as u32 - 1)
    }

    /// The descriptor behind an id.
    pub fn get_descr(&self, d: DescrId) -> &Descr {
        &self.descrs[d.0 as usize]
    }

    /// The op behind a value (panics for a constant).
    pub fn op(&self, r: OpRef) -> &Op {
        debug_assert!(r.is_op());
        &self.ops[r.index()]
    }

    /// The constant behind a value, if it is one.
    pub fn const_of(&self, r: OpRef) -> Option<&Const> {
        r.is_const().then(|| &self.consts[r.index()])
    }

    /// The constant value behind a value, if it is one.
    pub fn const_value(&self, r: OpRef) -> Option<Value> {
        self.const_of(r).map(Const::value)
    }

    /// The type of a value (ops and constants; a function constant is a `Ref`).
    pub fn type_of(&self, r: OpRef) -> Type {
        if r.is_const() {
            self.consts[r.index()].value().ty()
        } else if r.is_virtual() {
            Type::Ref
        } else {
            self.ops[r.index()].ty()
        }
    }

    /// The label op's index, if the trace has one.
    pub fn label(&self) -> Option<usize> {
        self.ops.iter().position(|op| op.opcode == Opcode::Label)
    }
}

impl fmt::Display for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print::print(self))
    }
}

#[cfg(test)]
mod tests;
