//! The register bytecode and the function prototype the compiler emits and the VM runs.
//!
//! Operands named `rk` are a register when below [`RK_CONST`] and constant `rk - RK_CONST`
//! otherwise. A conditional op (`Eq`, `Lt`, `Le`, `Test`) is followed by a `Jmp` that runs
//! only when the condition equals `k`; otherwise the VM skips it.

use crate::value::Value;
use meta_jit::hints::*;

/// The first RK operand that names a constant.
pub const RK_CONST: u16 = 0x8000;
/// `Jmp::close` when the jump closes no upvalues.
pub const NO_CLOSE: u16 = u16::MAX;
/// Items per `SetList` block.
pub const FIELDS_PER_FLUSH: u16 = 50;

/// One instruction.
#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
#[allow(missing_docs)]
pub enum Op {
    Mov(u16, u16),
    LoadK(u16, u32),
    LoadInt(u16, i32),
    LoadNil(u16, u16),
    LoadBool(u16, bool),
    /// `R[a] = false; pc += 1`.
    LoadFalseSkip(u16),
    GetUpval(u16, u16),
    SetUpval(u16, u16),
    /// `R[a] = Up[b][K[c]]` (K[c] a string).
    GetTabUp(u16, u16, u16),
    /// `Up[a][K[b]] = RK[c]`.
    SetTabUp(u16, u16, u16),
    /// `R[a] = R[b][RK[c]]`.
    GetTable(u16, u16, u16),
    /// `R[a] = R[b][K[c]]` (K[c] a string).
    GetStr(u16, u16, u16),
    /// `R[a][RK[b]] = RK[c]`.
    SetTable(u16, u16, u16),
    /// `R[a][K[b]] = RK[c]` (K[b] a string).
    SetStr(u16, u16, u16),
    NewTable(u16, u16, u16),
    /// `R[a+1] = R[b]; R[a] = R[b][K[c]]`.
    SelfOp(u16, u16, u16),
    Add(u16, u16, u16),
    Sub(u16, u16, u16),
    Mul(u16, u16, u16),
    Div(u16, u16, u16),
    Mod(u16, u16, u16),
    Pow(u16, u16, u16),
    IDiv(u16, u16, u16),
    BAnd(u16, u16, u16),
    BOr(u16, u16, u16),
    BXor(u16, u16, u16),
    Shl(u16, u16, u16),
    Shr(u16, u16, u16),
    Unm(u16, u16),
    Not(u16, u16),
    Len(u16, u16),
    BNot(u16, u16),
    /// `R[a] = R[a] .. ... .. R[a+b-1]`.
    Concat(u16, u16),
    /// `pc += off`, first closing upvalues from register `close` up unless it is `NO_CLOSE`.
    Jmp(u16, i32),
    /// `if (RK[a] == RK[b]) != k then pc += 1`.
    Eq(u16, u16, bool),
    Lt(u16, u16, bool),
    Le(u16, u16, bool),
    /// `if truthy(R[a]) != k then pc += 1`.
    TestJ(u16, bool),
    /// `R[a], ... = R[a](R[a+1], ...)`: b-1 arguments (0: up to top), c-1 results (0: all).
    CallV(u16, u16, u16),
    TailCall(u16, u16),
    /// Returns b-1 values from R[a] (0: up to top).
    Ret(u16, u16),
    /// Numeric for: `R[a]` init/counter, `R[a+1]` limit, `R[a+2]` step, `R[a+3]` the variable.
    ForPrep(u16, i32),
    ForStep(u16, i32),
    /// `R[a+3], ..., R[a+2+b] = R[a](R[a+1], R[a+2])`.
    TForCall(u16, u16),
    /// `if R[a+3] ~= nil then R[a+2] = R[a+3]; pc += off`.
    TForLoop(u16, i32),
    /// `R[a][c*50+i] = R[a+i]` for `1 <= i <= b` (b = 0: up to top).
    SetList(u16, u16, u16),
    MkClosure(u16, u32),
    /// `R[a], ... = ...`: b-1 values (0: all, setting top).
    Vararg(u16, u16),
    /// Closes upvalues from register a up.
    CloseUps(u16),
}

impl Op {
    /// One past the highest register this instruction names in its fixed operands (0 if
    /// none). The compiler raises `Proto::maxstack` to at least this for every instruction,
    /// which is what lets the dispatch loop read and write registers without bounds checks.
    /// Open ranges (`b == 0`: up to `top`) are not counted: the loop checks those accesses.
    pub fn reg_end(&self) -> u32 {
        let r = |x: u16| x as u32 + 1;
        let rk = |x: u16| if x >= RK_CONST { 0 } else { x as u32 + 1 };
        let n = |x: u16| (x as u32).saturating_sub(1);
        match *self {
            Op::Mov(a, b) | Op::Unm(a, b) | Op::Not(a, b) | Op::Len(a, b) | Op::BNot(a, b) => {
                r(a).max(r(b))
            }
            Op::LoadK(a, _)
            | Op::LoadInt(a, _)
            | Op::LoadBool(a, _)
            | Op::LoadFalseSkip(a)
            | Op::GetUpval(a, _)
            | Op::SetUpval(a, _)
            | Op::GetTabUp(a, _, _)
            | Op::NewTable(a, _, _)
            | Op::TestJ(a, _)
            | Op::MkClosure(a, _) => r(a),
            Op::LoadNil(a, c) | Op::Concat(a, c) => a as u32 + c as u32,
            Op::SetTabUp(_, _, c) => rk(c),
            Op::GetTable(a, b, c)
            | Op::SetTable(a, b, c)
            | Op::Add(a, b, c)
            | Op::Sub(a, b, c)
            | Op::Mul(a, b, c)
            | Op::Div(a, b, c)
            | Op::Mod(a, b, c)
            | Op::Pow(a, b, c)
            | Op::IDiv(a, b, c)
            | Op::BAnd(a, b, c)
            | Op::BOr(a, b, c)
            | Op::BXor(a, b, c)
            | Op::Shl(a, b, c)
            | Op::Shr(a, b, c) => r(a).max(rk(b)).max(rk(c)),
            Op::GetStr(a, b, _) => r(a).max(r(b)),
            Op::SetStr(a, _, c) => r(a).max(rk(c)),
            Op::SelfOp(a, b, _) => (a as u32 + 2).max(r(b)),
            Op::Eq(b, c, _) | Op::Lt(b, c, _) | Op::Le(b, c, _) => rk(b).max(rk(c)),
            Op::CallV(a, b, c) => r(a) + n(b).max(n(c)),
            Op::TailCall(a, b) => r(a) + n(b),
            Op::Ret(a, b) | Op::Vararg(a, b) => a as u32 + n(b),
            Op::ForPrep(a, _) | Op::ForStep(a, _) | Op::TForLoop(a, _) => a as u32 + 4,
            Op::TForCall(a, c) => a as u32 + 3 + c as u32,
            Op::SetList(a, c, _) => r(a) + c as u32,
            Op::Jmp(..) | Op::CloseUps(_) => 0,
        }
    }
}

/// Where a closure finds an upvalue when it is created.
#[derive(Clone, Debug)]
pub struct UpvalDesc {
    /// The name (for messages).
    pub name: String,
    /// True: a register of the enclosing function; false: its upvalue.
    pub in_stack: bool,
    /// The register or upvalue index.
    pub idx: u16,
}

/// A local variable's name and live range, for error messages.
#[derive(Clone, Debug)]
pub struct LocVar {
    /// The name.
    pub name: String,
    /// Its register.
    pub reg: u16,
    /// First pc where it is live.
    pub start: u32,
    /// First pc where it is dead.
    pub end: u32,
}

/// A compiled function. Prototypes are leaked (`&'static`): code lives as long as the
/// process, which lets the JIT portal hold one as a green. Their constants are values of the
/// collected heap: the strings among them are interned, so the intern table keeps them alive
/// (see `crate::value::trace_interned`), and tracing a prototype reports them too.
#[derive(Debug, Default, JitLayout)]
pub struct Proto {
    /// The instructions.
    #[jit(immutable, immutable_items)]
    pub code: Vec<Op>,
    /// The source line of each instruction.
    pub lines: Vec<u32>,
    /// Constants.
    #[jit(immutable, immutable_items)]
    pub consts: Vec<Value>,
    /// Nested functions.
    pub protos: Vec<&'static Proto>,
    /// Upvalue descriptors.
    pub upvals: Vec<UpvalDesc>,
    /// Local variable debug info.
    pub locvars: Vec<LocVar>,
    /// Fixed parameters.
    #[jit(immutable)]
    pub nparams: u16,
    /// Takes `...`.
    #[jit(immutable)]
    pub is_vararg: bool,
    /// Registers needed.
    #[jit(immutable)]
    pub maxstack: u16,
    /// The chunk name.
    pub source: std::rc::Rc<str>,
    /// The line where it is defined (0 for a main chunk).
    pub line: u32,
    /// Per instruction: inside a loop whose every instruction the JIT portal can run inline
    /// (`crate::jit::hot_loops`). With the JIT on, the plain loop hands control back to the
    /// portal only at such instructions. Empty when the function has no such loop.
    pub hot: Vec<bool>,
    /// The function has a loop (a backward jump, a `for`).
    pub loops: bool,
    /// Per instruction: for `GetStr`, `SetStr`, `SelfOp` and `GetTabUp`, the positions in
    /// tables' hash entries where the instruction found its key last (inline caches; see
    /// [`Ic`] and `Table::get_str_ic`). Hints only: a wrong position is noticed and costs a
    /// lookup.
    pub ic: Vec<Ic>,
}

// SAFETY: a prototype's `Gc`s are its constants and those of the prototypes nested in it,
// all reported. (The string constants are interned as well, so they are roots anyway; a
// prototype is leaked and never dropped.)
unsafe impl meta_jit::gc::Trace for Proto {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut meta_jit::gc::Tracer) {
        self.consts.trace(t);
        for p in &self.protos {
            p.trace(t);
        }
    }
}

/// The inline caches of one instruction that reads or writes a string key: one position per
/// level of an `__index` chain (the object, its class, the class's parent; deeper levels share
/// the last), so that a method found in a class does not evict the object's field position,
/// and the position of `__index` in the metatable met at each level.
#[derive(Clone, Debug, Default)]
pub struct Ic {
    /// Where the key was found, by level of the chain.
    pub key: [std::cell::Cell<u32>; 3],
    /// Where `__index` was found in the metatable met at each level.
    pub index: [std::cell::Cell<u32>; 3],
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Str(s) => write!(f, "{:?}", String::from_utf8_lossy(&s.bytes)),
            Value::Int(i) => write!(f, "{i}"),
            Value::Num(n) => write!(f, "{n:?}"),
            _ => write!(f, "{}", self.type_name()),
        }
    }
}
