//! The jitcode format: registers, descriptors, the op enum and the finished [`JitCode`].
//!
//! Owns: what a jitcode op *is* and what each op carries so that a tracer can record one trace IR
//! op from it (kinds, integer widths, overflow mode, field/array/call descriptors) and a blackhole
//! interpreter can resume at any guard point (the liveness table).
//! Must not know: how jitcode is produced (the builder and the macros), how it is executed (the
//! runner, later the tracer), or anything about a guest language.
//!
//! Registers live in three banks, one per [`Kind`], like RPython's jitcode. In each bank the
//! indices `0..num_regs` are ordinary registers and the indices from `num_regs` up name the
//! constants of the pool (`consts_*[index - num_regs]`), so "is this operand a constant" is one
//! compare and ops need no separate constant operand form.
#![deny(unsafe_code)]

use std::fmt;
use std::sync::Arc;

/// The three kinds of values jitcode, trace IR and machine code handle.
///
/// Narrower integers, `bool` and `char` widen to `Int` (an `i64`); `f64` is `Float`; every
/// pointer-sized address (references, raw pointers, slice data pointers) is `Ref`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    /// A 64-bit integer register (`i`).
    Int,
    /// A 64-bit float register (`f`).
    Float,
    /// A pointer-sized address register (`r`).
    Ref,
}

impl Kind {
    /// The one-letter prefix used in the text form (`i`, `f`, `r`).
    pub fn letter(self) -> char {
        match self {
            Kind::Int => 'i',
            Kind::Float => 'f',
            Kind::Ref => 'r',
        }
    }

    /// The index of this kind's register bank in per-bank arrays such as
    /// [`JitCode::num_regs`]: int 0, float 1, ref 2.
    pub fn bank(self) -> usize {
        match self {
            Kind::Int => 0,
            Kind::Float => 1,
            Kind::Ref => 2,
        }
    }
}

/// A register operand: a bank and an index in it (constants above `num_regs`, see module doc).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Register {
    /// The bank.
    pub kind: Kind,
    /// The index in the bank.
    pub index: u16,
}

/// A concrete value of one of the three kinds, as passed to and returned from calls and runs.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Value {
    /// An integer, canonical for its Rust type (sign-extended if signed, zero-extended if not).
    Int(i64),
    /// A float.
    Float(f64),
    /// An address.
    Ref(usize),
}

impl Value {
    /// The kind of this value.
    #[inline]
    pub fn kind(self) -> Kind {
        match self {
            Value::Int(_) => Kind::Int,
            Value::Float(_) => Kind::Float,
            Value::Ref(_) => Kind::Ref,
        }
    }
    /// The integer, panicking on another kind (a codewriter bug).
    #[inline]
    pub fn int(self) -> i64 {
        match self {
            Value::Int(v) => v,
            other => panic!("expected an int value, got {other:?}"),
        }
    }
    /// The float, panicking on another kind.
    #[inline]
    pub fn float(self) -> f64 {
        match self {
            Value::Float(v) => v,
            other => panic!("expected a float value, got {other:?}"),
        }
    }
    /// The address, panicking on another kind.
    #[inline]
    pub fn addr(self) -> usize {
        match self {
            Value::Ref(v) => v,
            other => panic!("expected a ref value, got {other:?}"),
        }
    }
}

/// A Rust integer type as held in an `Int` register: its width and signedness. `bool` is the
/// unsigned 1-bit type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct IntTy {
    /// Width in bits: 1 (bool), 8, 16, 32 or 64.
    pub bits: u8,
    /// Whether the type is signed.
    pub signed: bool,
}

impl IntTy {
    /// `i64`, the widest signed type.
    pub const I64: IntTy = IntTy {
        bits: 64,
        signed: true,
    };
    /// `bool`.
    pub const BOOL: IntTy = IntTy {
        bits: 1,
        signed: false,
    };

    /// Brings an arbitrary integer into the canonical form of this type (truncating to `bits`,
    /// then sign- or zero-extending), which is what Rust's wrapping and `as` semantics give.
    pub fn canonical(self, v: i128) -> i64 {
        let bits = u32::from(self.bits);
        if bits == 64 {
            return v as i64;
        }
        let mask = (1i128 << bits) - 1;
        let t = v & mask;
        if self.signed && t >> (bits - 1) == 1 {
            (t - (1i128 << bits)) as i64
        } else {
            t as i64
        }
    }
    /// The mathematical value of a canonical register content.
    pub fn widen(self, v: i64) -> i128 {
        if self.signed {
            i128::from(v)
        } else {
            i128::from(v as u64)
        }
    }
    /// Smallest value of the type.
    pub fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }
    /// Largest value of the type.
    pub fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }
    /// The Rust name of the type, for the text form.
    pub fn name(self) -> String {
        if self.bits == 1 {
            "bool".into()
        } else {
            format!("{}{}", if self.signed { 'i' } else { 'u' }, self.bits)
        }
    }
}

/// What happens when an integer operation's mathematical result does not fit its type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Overflow {
    /// Wrap around (Rust release builds, `wrapping_*`). The tracer records the plain op.
    Wrap,
    /// Panic like Rust's overflow checks. The tracer records the `*_ovf` op and
    /// `guard_no_overflow`; this op is a guard point.
    Check,
}

/// Binary integer operations. Division and remainder truncate toward zero (Rust semantics) and
/// always check for a zero divisor and `MIN / -1`, as Rust does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IntBinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (truncating)
    Div,
    /// `%` (sign of the dividend)
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<` (amount checked against the width under [`Overflow::Check`], masked under `Wrap`)
    Shl,
    /// `>>`: arithmetic for signed types, logical for unsigned ones.
    Shr,
}

/// Unary integer operations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IntUnOp {
    /// `-x` (signed types only).
    Neg,
    /// `!x` (bitwise; logical for `bool`).
    Not,
}

/// Comparisons, shared by ints, floats and refs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Cmp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

/// Binary float operations (`f64`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FloatBinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (true division)
    Div,
    /// `%` (fmod)
    Rem,
}

/// Unary float operations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FloatUnOp {
    /// `-x`
    Neg,
    /// `x.abs()`
    Abs,
}

/// Where a scalar lives inside an object, and how to load it: RPython's field descriptor.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct FieldDescr {
    /// A readable name (`Struct.field`) for the text form and the JIT log.
    pub name: String,
    /// Byte offset from the object's address.
    pub offset: usize,
    /// Size in bytes: 1, 2, 4 or 8.
    pub size: u8,
    /// Whether an `Int` load sign-extends (otherwise it zero-extends).
    pub signed: bool,
    /// The register kind the value loads into.
    pub kind: Kind,
    /// The field never changes after the object is built (`#[jit(immutable)]`): loads from a
    /// constant object fold.
    pub immutable: bool,
    /// The field rarely changes (`#[jit(quasi_immutable)]`): loads from a constant object fold
    /// under `guard_not_invalidated`, and a write invalidates machine code that folded it.
    pub quasi_immutable: bool,
    /// The field (or, in an [`ArrayDescr`], the item) belongs to a virtualizable frame
    /// (`#[jit(virtualizable)]`): the optimizer may keep its stores in registers until the
    /// trace exits.
    pub vable: bool,
    /// The field is the length of a Rust `Vec` or slice whose items are not zero-sized (see
    /// `ir::FieldDescr::length`).
    pub length: bool,
    /// The alias class (see `ir::may_alias`): the stored type's name (safe Rust reaches
    /// a `u8` only as a `u8`, wherever it lives) for an access through a reference of unseen
    /// origin; `TYPE|PATH` for one whose access path the codewriter saw (`i64|S.f`, the field
    /// `f` of struct `S`), which aliases only the same path and the wide `TYPE`; or a name of
    /// its own for a location only the framework's projections reach (a `Vec`'s pointer and
    /// length, an enum's tag).
    pub class: String,
}

/// The size and alignment of an object traced code allocates ([`Op::New`]): RPython's size
/// descriptor.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SizeDescr {
    /// The type's name (for the text form and the JIT log).
    pub name: String,
    /// Size in bytes.
    pub size: usize,
    /// Alignment in bytes (a power of two).
    pub align: usize,
}

/// An array of items laid out `item_size` apart from a data pointer, and the scalar inside each
/// item that an access reads or writes (for arrays of scalars `item.offset` is 0; for arrays of
/// structs and enums this is RPython's interior field descriptor).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ArrayDescr {
    /// Distance between items in bytes.
    pub item_size: usize,
    /// The scalar accessed inside the item (offset relative to the item's start).
    pub item: FieldDescr,
}

/// What a called function may do, for the optimizer (RPython's effect info).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Effect {
    /// `#[elidable]`: the result depends only on the arguments; constant-folded, CSE'd, removed
    /// when unused. Reads no mutable memory, writes nothing observable.
    Elidable,
    /// `#[loop_invariant]`: called at most once per loop iteration of the compiled loop; the
    /// result is reused.
    LoopInvariant,
    /// `#[dont_look_inside]`: may read and write any memory.
    Residual,
    /// `#[dont_look_inside(writes_nothing)]`: may read any memory, writes none that traced code
    /// reads (the author's declaration), so the heap caches keep what they know across it.
    ResidualWritesNothing,
}

/// Describes a function that jitcode calls without looking inside: how to call it natively (an
/// `extern "C"` shim with one `i64`/`f64`/pointer-sized argument per argument register), how
/// the jitcode runner calls it (`dynamic`), and its effects.
pub struct CallDescr {
    /// The function's Rust path as written at its definition (for the text form and logs).
    pub name: &'static str,
    /// Kinds of the shim's arguments, in order.
    pub arg_kinds: Vec<Kind>,
    /// Kind of the shim's result, `None` for `()`.
    pub result_kind: Option<Kind>,
    /// The effects.
    pub effect: Effect,
    /// Address of the `extern "C"` shim (for the backend to call).
    pub shim: usize,
    /// Calls the function with argument values of the kinds above (for the jitcode runner, the
    /// tracer and the blackhole interpreter).
    pub dynamic: fn(&[Value]) -> Option<Value>,
}

impl fmt::Debug for CallDescr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CallDescr({} {:?} -> {:?}, {:?})",
            self.name, self.arg_kinds, self.result_kind, self.effect
        )
    }
}

/// Where a `record_known_result!` or `record_exact_value!` is written, as the codewriter saw it:
/// every checker (jitcode runner, blackhole interpreter, tracer, compiled code) reports a
/// violation of the hint at this location.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HintSite {
    /// Source file (`file!()` at the hint).
    pub file: &'static str,
    /// Line of the hint.
    pub line: u32,
    /// Column of the hint.
    pub column: u32,
    /// The claim as written: `f(a, b)` for `record_known_result!`, the value expression for
    /// `record_exact_value!`.
    pub call: &'static str,
    /// The argument expressions as written, in order (empty for `record_exact_value!`).
    pub args: &'static [&'static str],
}

/// A reference to another function's jitcode, resolved lazily so that recursive and mutually
/// recursive functions can refer to each other while their jitcode is being built.
#[derive(Clone, Copy)]
pub struct JitCodeRef {
    /// The callee's name (for the text form).
    pub name: &'static str,
    /// Returns the callee's jitcode, building it on first use.
    pub get: fn() -> &'static JitCode,
}

impl fmt::Debug for JitCodeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<jitcode {}>", self.name)
    }
}

/// One jitcode op. Control-flow targets are op indices (`pc`) in the finished jitcode. Ops
/// marked *guard point* are those where traced code can leave through a guard; the jitcode
/// stores the registers live there (see [`JitCode::live_at`]).
#[derive(Clone, Debug)]
pub enum Op {
    /// `dst = src` (both of the same kind).
    Move {
        /// Destination.
        dst: Register,
        /// Source.
        src: Register,
    },
    /// `dst = a op b` on integers of type `ty`. A guard point when `overflow` is `Check` or the
    /// op is a division or remainder (zero divisor, `MIN / -1`).
    IntBinary {
        /// The operation.
        op: IntBinOp,
        /// The Rust type of both operands and the result (shifts: of the left operand).
        ty: IntTy,
        /// Overflow behaviour.
        overflow: Overflow,
        /// Result.
        dst: Register,
        /// Left operand.
        a: Register,
        /// Right operand.
        b: Register,
    },
    /// `dst = op a` on integers of type `ty`; a guard point when `overflow` is `Check` (`-MIN`).
    IntUnary {
        /// The operation.
        op: IntUnOp,
        /// The type.
        ty: IntTy,
        /// Overflow behaviour.
        overflow: Overflow,
        /// Result.
        dst: Register,
        /// Operand.
        a: Register,
    },
    /// `dst = a cmp b` (`dst` is a bool in an int register).
    IntCompare {
        /// The comparison.
        cmp: Cmp,
        /// Signed (`int_lt`) or unsigned (`uint_lt`) comparison.
        signed: bool,
        /// Result.
        dst: Register,
        /// Left operand.
        a: Register,
        /// Right operand.
        b: Register,
    },
    /// `dst = src as to` between integer types (truncation or extension).
    IntCast {
        /// Source type.
        from: IntTy,
        /// Target type.
        to: IntTy,
        /// Result.
        dst: Register,
        /// Operand.
        src: Register,
    },
    /// `dst = a op b` on floats.
    FloatBinary {
        /// The operation.
        op: FloatBinOp,
        /// Result.
        dst: Register,
        /// Left operand.
        a: Register,
        /// Right operand.
        b: Register,
    },
    /// `dst = op a` on floats.
    FloatUnary {
        /// The operation.
        op: FloatUnOp,
        /// Result.
        dst: Register,
        /// Operand.
        a: Register,
    },
    /// `dst = a cmp b` on floats (IEEE: comparisons with NaN are false except `!=`).
    FloatCompare {
        /// The comparison.
        cmp: Cmp,
        /// Result (int register).
        dst: Register,
        /// Left operand.
        a: Register,
        /// Right operand.
        b: Register,
    },
    /// `dst = src as f64` from an integer of type `from` (`cast_int_to_float`).
    IntToFloat {
        /// Source type.
        from: IntTy,
        /// Result (float register).
        dst: Register,
        /// Operand (int register).
        src: Register,
    },
    /// `dst = src as to` from a float: truncating, saturating, NaN to 0 (Rust `as`).
    FloatToInt {
        /// Target type.
        to: IntTy,
        /// Result (int register).
        dst: Register,
        /// Operand (float register).
        src: Register,
    },
    /// `dst = (a == b)` or `(a != b)` on addresses (`ptr_eq`/`ptr_ne`).
    RefCompare {
        /// `true` for `==`.
        eq: bool,
        /// Result (int register).
        dst: Register,
        /// Left operand.
        a: Register,
        /// Right operand.
        b: Register,
    },
    /// `dst = base + index * item_size + offset`: the address of an interior place, when a
    /// reference to it has to exist as a value (passed to a call, stored, bound mutably).
    RefAddr {
        /// Result (ref register).
        dst: Register,
        /// Base address.
        base: Register,
        /// Optional index (int register) and item size.
        index: Option<(Register, usize)>,
        /// Constant byte offset.
        offset: usize,
    },
    /// `dst = ` a new zeroed object of `descr`'s size and alignment (`new`), allocated by the
    /// framework's heap ([`crate::gc`]). The codewriter follows it with the stores that
    /// initialize the fields.
    New {
        /// Result (ref register).
        dst: Register,
        /// The object's size.
        descr: Arc<SizeDescr>,
    },
    /// `dst = *(base + descr.offset)` (`getfield_i/f/r`).
    GetField {
        /// Result, of kind `descr.kind`.
        dst: Register,
        /// Object address.
        base: Register,
        /// The field.
        descr: Arc<FieldDescr>,
    },
    /// `*(base + descr.offset) = src` (`setfield`).
    SetField {
        /// Object address.
        base: Register,
        /// Value, of kind `descr.kind`.
        src: Register,
        /// The field.
        descr: Arc<FieldDescr>,
    },
    /// `dst = *(base + index * item_size + item.offset)` (`getarrayitem_*`, or RPython's
    /// `getinteriorfield_*` when the item is a struct).
    GetArrayItem {
        /// Result, of kind `descr.item.kind`.
        dst: Register,
        /// Data pointer of the array.
        base: Register,
        /// Index (int register, already bounds-checked by a [`Op::CheckIndex`]).
        index: Register,
        /// The array and item field.
        descr: Arc<ArrayDescr>,
    },
    /// `*(base + index * item_size + item.offset) = src` (`setarrayitem`/`setinteriorfield`).
    SetArrayItem {
        /// Data pointer of the array.
        base: Register,
        /// Index.
        index: Register,
        /// Value.
        src: Register,
        /// The array and item field.
        descr: Arc<ArrayDescr>,
    },
    /// Panics like Rust's indexing unless `0 <= index < len` (unsigned compare). Guard point.
    CheckIndex {
        /// Index (int register).
        index: Register,
        /// Length (int register).
        len: Register,
    },
    /// Unconditional jump.
    Goto {
        /// Target pc.
        target: u32,
    },
    /// Jump to `target` if `cond` is 0, else fall through. Guard point (`guard_true/false`).
    GotoIfNot {
        /// Condition (int register holding a bool).
        cond: Register,
        /// Target pc.
        target: u32,
    },
    /// Multi-way jump on an integer (`match` on integers or enum tags). Guard point
    /// (`guard_value`).
    Switch {
        /// The integer switched on.
        value: Register,
        /// `(value, target pc)` pairs.
        cases: Vec<(i64, u32)>,
        /// Target when no case matches.
        default: u32,
    },
    /// Calls a function the JIT does not look inside, through its shim. `Elidable` calls become
    /// `call_pure_*`, the others `call_*`. Guard point (resuming after the call: the live set
    /// stored is the one after the call, without `dst`).
    Call {
        /// Callee and effects.
        descr: Arc<CallDescr>,
        /// Arguments, of `descr.arg_kinds`.
        args: Vec<Register>,
        /// Result register, if the callee returns a value.
        dst: Option<Register>,
    },
    /// Calls a look-inside function: the tracer inlines it by running its jitcode in a new frame.
    /// Guard point like `Call`.
    InlineCall {
        /// The callee's jitcode.
        callee: JitCodeRef,
        /// Arguments: the callee's argument registers in order.
        args: Vec<Register>,
        /// Where the callee's return values go.
        dsts: Vec<Register>,
    },
    /// Returns `values` to the caller.
    Return {
        /// Returned registers (zero, one or two: slices return data pointer and length).
        values: Vec<Register>,
    },
    /// A `panic!`/`unreachable!` reached in the interpreter: the tracer aborts, the runner panics.
    Panic {
        /// The message.
        message: String,
    },
    /// `jit_merge_point!()`: the head of the interpreter's dispatch loop. Guard point.
    JitMergePoint {
        /// Registers of the green variables, in declaration order.
        greens: Vec<Register>,
        /// Registers of the red variables, in declaration order.
        reds: Vec<Register>,
    },
    /// `can_enter_jit!()`: a backward jump of the guest program; where hot loops are counted.
    CanEnterJit {
        /// Registers of the green variables.
        greens: Vec<Register>,
        /// Registers of the red variables.
        reds: Vec<Register>,
    },
    /// `promote!(x)`: `guard_value` on the current value, then `reg` is a constant in the rest
    /// of the trace. Guard point. No effect when not tracing.
    Promote {
        /// The promoted register (int, float or ref).
        reg: Register,
    },
    /// `record_known_result!(result, f, args...)`: from here on in the trace, the elidable call
    /// `f(args...)` is `result`.
    RecordKnownResult {
        /// The known result.
        result: Register,
        /// The elidable callee.
        descr: Arc<CallDescr>,
        /// Its arguments.
        args: Vec<Register>,
        /// Where the hint is written (for violation reports).
        site: &'static HintSite,
    },
    /// `record_exact_value!(reg, value)`: `reg` equals the constant `value` (no guard).
    RecordExactValue {
        /// The register.
        reg: Register,
        /// A constant register with the claimed value.
        value: Register,
        /// Where the hint is written (for violation reports).
        site: &'static HintSite,
    },
}

/// The registers live at one point, per bank, sorted, constants excluded.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct LiveRegs {
    /// Live int registers.
    pub ints: Vec<u16>,
    /// Live float registers.
    pub floats: Vec<u16>,
    /// Live ref registers.
    pub refs: Vec<u16>,
}

impl LiveRegs {
    /// Whether `reg` is in the set.
    pub fn contains(&self, reg: Register) -> bool {
        let bank = [&self.ints, &self.floats, &self.refs][reg.kind.bank()];
        bank.binary_search(&reg.index).is_ok()
    }
    /// All registers of the set.
    pub fn iter(&self) -> impl Iterator<Item = Register> + '_ {
        let mk = |kind| move |&index: &u16| Register { kind, index };
        self.ints
            .iter()
            .map(mk(Kind::Int))
            .chain(self.floats.iter().map(mk(Kind::Float)))
            .chain(self.refs.iter().map(mk(Kind::Ref)))
    }
}

/// The finished jitcode of one annotated function.
#[derive(Debug)]
pub struct JitCode {
    /// The function's name.
    pub name: String,
    /// The ops; a `pc` is an index into this.
    pub ops: Vec<Op>,
    /// Number of ordinary registers per bank (`[int, float, ref]`); constants come after.
    pub num_regs: [u16; 3],
    /// Int constant pool.
    pub consts_int: Vec<i64>,
    /// Float constant pool.
    pub consts_float: Vec<f64>,
    /// Ref constant pool.
    pub consts_ref: Vec<usize>,
    /// Argument registers, in order (a parameter may take two: slices).
    pub args: Vec<Register>,
    /// Source-level names of registers that hold named variables (for errors and logs).
    pub names: Vec<(Register, String)>,
    /// For each op, the live registers if the op is a guard point (see [`Op`]).
    pub liveness: Vec<Option<LiveRegs>>,
}

impl JitCode {
    /// Whether `reg` names a constant of the pool.
    pub fn is_const(&self, reg: Register) -> bool {
        reg.index >= self.num_regs[reg.kind.bank()]
    }
    /// The constant a constant register names, `None` for an ordinary register.
    pub fn const_value(&self, reg: Register) -> Option<Value> {
        let n = self.num_regs[reg.kind.bank()];
        let i = usize::from(reg.index.checked_sub(n)?);
        Some(match reg.kind {
            Kind::Int => Value::Int(self.consts_int[i]),
            Kind::Float => Value::Float(self.consts_float[i]),
            Kind::Ref => Value::Ref(self.consts_ref[i]),
        })
    }
    /// The registers live at guard point `pc` (`None` if `pc` is not a guard point).
    pub fn live_at(&self, pc: usize) -> Option<&LiveRegs> {
        self.liveness.get(pc)?.as_ref()
    }
    /// The source name of a register, if it holds a named variable.
    pub fn name_of(&self, reg: Register) -> Option<&str> {
        self.names
            .iter()
            .find(|(r, _)| *r == reg)
            .map(|(_, n)| n.as_str())
    }
    /// Whether an op is a guard point (where the blackhole interpreter may resume).
    pub fn is_guard_point(op: &Op) -> bool {
        match op {
            Op::IntBinary { op, overflow, .. } => {
                *overflow == Overflow::Check || matches!(op, IntBinOp::Div | IntBinOp::Rem)
            }
            Op::IntUnary { overflow, .. } => *overflow == Overflow::Check,
            // A folded read of a quasi-immutable field is guarded by `guard_not_invalidated`.
            Op::GetField { descr, .. } => descr.quasi_immutable,
            Op::CheckIndex { .. }
            | Op::GotoIfNot { .. }
            | Op::Switch { .. }
            | Op::Call { .. }
            | Op::InlineCall { .. }
            | Op::JitMergePoint { .. }
            | Op::Promote { .. } => true,
            _ => false,
        }
    }
}
