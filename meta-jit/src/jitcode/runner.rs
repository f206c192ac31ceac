//! The jitcode-only run mode: executes jitcode on concrete values, with no tracing.
//!
//! Owns: the concrete semantics of every jitcode op (integer widths and Rust's overflow rules,
//! float and cast semantics, loads and stores through descriptors, calls through call
//! descriptors, inline calls as nested frames). Running a whole interpreter this way must give
//! the same results as the native interpreter; that is how the codewriter is tested, and the
//! tracer and blackhole interpreter reuse [`int_binary`] and friends so all agree.
//! Must not know: traces, guards' resume data, or anything about a guest language.
//! `record_known_result!` and `record_exact_value!` are checked on every execution
//! ([`super::hintcheck`]), in every build: a wrong hint panics with its source location (or is
//! collected inside [`crate::check::violations_of`]).

use super::format::{
    Cmp, FieldDescr, FloatBinOp, FloatUnOp, IntBinOp, IntTy, IntUnOp, JitCode, Kind, Op, Overflow,
    Register, Value,
};
use super::hintcheck;

/// Runs `code` on `args` (one value per argument register) and returns its results.
///
/// # Safety
/// `code` was produced by the codewriter from Rust code that rustc type- and borrow-checked, and
/// every `Ref` argument is the address of a live object of the type the corresponding parameter
/// had in that code, valid for the reads and writes the original function would do. Under those
/// conditions the loads and stores below touch exactly the memory the native function touches.
pub unsafe fn run(code: &JitCode, args: &[Value]) -> Vec<Value> {
    let _active = crate::gc::JitActive::enter();
    let mut frame = Frame::new(code);
    assert_eq!(
        args.len(),
        code.args.len(),
        "jitcode `{}`: wrong number of arguments",
        code.name
    );
    for (&r, &v) in code.args.iter().zip(args) {
        frame.set(r, v);
    }
    // SAFETY: forwarded from this function's contract.
    match unsafe { frame.execute(false) } {
        Exit::Return(values) => values,
        Exit::MergePoint => unreachable!("merge points do not stop a plain run"),
    }
}

/// How [`Frame::execute`] stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    /// The frame returned these values.
    Return(Vec<Value>),
    /// The frame reached a `JitMergePoint` (only when asked to stop there); `pc` is its index.
    MergePoint,
}

/// What one control-free op did (see [`Frame::exec`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Done {
    /// The op ran; control goes on at the next op.
    Next,
    /// The op is a control-flow op, a call of another jitcode or a hint the caller handles
    /// itself; nothing was done.
    Control,
}

/// One activation of a jitcode: its pc and the three register banks (ordinary registers, then
/// the constant pool, so a constant register reads like any other).
#[derive(Clone, Debug)]
pub struct Frame<'a> {
    /// The jitcode.
    pub code: &'a JitCode,
    /// The index of the next op to execute.
    pub pc: usize,
    ints: Vec<i64>,
    floats: Vec<f64>,
    refs: Vec<usize>,
}

impl<'a> Frame<'a> {
    /// Whether two frames run the same jitcode at the same pc with the same registers
    /// (floats by their bits): debug builds check a shortcut that builds frames against the
    /// general path with it.
    #[cfg(debug_assertions)]
    pub(crate) fn same_as(&self, o: &Frame) -> bool {
        std::ptr::eq(self.code, o.code)
            && self.pc == o.pc
            && self.ints == o.ints
            && self.refs == o.refs
            && self
                .floats
                .iter()
                .map(|f| f.to_bits())
                .eq(o.floats.iter().map(|f| f.to_bits()))
    }

    /// A frame of `code` at pc 0 with every ordinary register zero.
    pub fn new(code: &'a JitCode) -> Frame<'a> {
        // One allocation each (a frame is made on every guard failure).
        fn regs<T: Copy>(n: u16, zero: T, consts: &[T]) -> Vec<T> {
            let mut v = Vec::with_capacity(usize::from(n) + consts.len());
            v.resize(usize::from(n), zero);
            v.extend_from_slice(consts);
            v
        }
        let ints = regs(code.num_regs[0], 0, &code.consts_int);
        let floats = regs(code.num_regs[1], 0.0, &code.consts_float);
        let refs = regs(code.num_regs[2], 0, &code.consts_ref);
        Frame {
            code,
            pc: 0,
            ints,
            floats,
            refs,
        }
    }
    /// The value of a register (or constant).
    pub fn get(&self, r: Register) -> Value {
        let i = usize::from(r.index);
        match r.kind {
            Kind::Int => Value::Int(self.ints[i]),
            Kind::Float => Value::Float(self.floats[i]),
            Kind::Ref => Value::Ref(self.refs[i]),
        }
    }
    /// Sets a register.
    pub fn set(&mut self, r: Register, v: Value) {
        let i = usize::from(r.index);
        match r.kind {
            Kind::Int => self.ints[i] = v.int(),
            Kind::Float => self.floats[i] = v.float(),
            Kind::Ref => self.refs[i] = v.addr(),
        }
    }
    fn int(&self, r: Register) -> i64 {
        self.ints[usize::from(r.index)]
    }
    fn float(&self, r: Register) -> f64 {
        self.floats[usize::from(r.index)]
    }
    fn addr(&self, r: Register) -> usize {
        self.refs[usize::from(r.index)]
    }

    /// Runs from `self.pc` until the frame returns, or, with `stop_at_merge_point`, until it
    /// reaches a `JitMergePoint` (which may be the op at `self.pc`); `self.pc` is then that
    /// op's index. Inline calls run as nested frames; panics of the interpreter (Rust's
    /// overflow and bounds checks, `panic!`) are raised here.
    ///
    /// # Safety
    /// See [`run`]; the registers hold values the native function could hold at `self.pc`.
    pub unsafe fn execute(&mut self, stop_at_merge_point: bool) -> Exit {
        let code = self.code;
        loop {
            let pc = self.pc;
            let op = &code.ops[pc];
            self.check_hint(op);
            // SAFETY: forwarded from this function's contract.
            match unsafe { self.exec(op) } {
                Ok(Done::Next) => {
                    self.pc = pc + 1;
                    continue;
                }
                Ok(Done::Control) => {}
                Err(msg) => panic!("{msg}"),
            }
            self.pc = pc + 1;
            match op {
                Op::Goto { target } => self.pc = *target as usize,
                Op::GotoIfNot { cond, target } => {
                    if self.int(*cond) == 0 {
                        self.pc = *target as usize;
                    }
                }
                Op::Switch {
                    value,
                    cases,
                    default,
                } => self.pc = switch_target(self.int(*value), cases, *default),
                Op::InlineCall { callee, args, dsts } => {
                    let vals: Vec<Value> = args.iter().map(|&r| self.get(r)).collect();
                    // SAFETY: the callee's jitcode comes from the same checked Rust program and
                    // receives the values the native call would receive.
                    let res = unsafe { run((callee.get)(), &vals) };
                    for (&d, v) in dsts.iter().zip(res) {
                        self.set(d, v);
                    }
                }
                Op::Return { values } => {
                    return Exit::Return(values.iter().map(|&r| self.get(r)).collect())
                }
                Op::Panic { message } => panic!("{message}"),
                Op::JitMergePoint { .. } => {
                    if stop_at_merge_point {
                        self.pc = pc;
                        return Exit::MergePoint;
                    }
                }
                _ => unreachable!("exec handles every other op"),
            }
        }
    }

    /// Checks the claim of a `record_known_result!` or `record_exact_value!` op (other ops pass)
    /// and reports a violation as found by the checker the runner acts as
    /// ([`hintcheck::runner_is`]).
    pub fn check_hint(&self, op: &Op) {
        match op {
            Op::RecordKnownResult {
                result,
                descr,
                args,
                site,
            } => {
                let vals: Vec<Value> = args.iter().map(|&r| self.get(r)).collect();
                hintcheck::known_result(
                    hintcheck::runner_is(),
                    site,
                    descr,
                    self.get(*result),
                    &vals,
                );
            }
            Op::RecordExactValue { reg, value, site } => {
                hintcheck::exact_value(
                    hintcheck::runner_is(),
                    site,
                    self.get(*reg),
                    self.get(*value),
                );
            }
            _ => {}
        }
    }

    /// Executes one op that does not transfer control: arithmetic, loads, stores, bounds
    /// checks, residual and elidable calls, and hints (no-ops here: [`Frame::execute`] checks
    /// them with [`Frame::check_hint`], the tracer with its own records). Returns
    /// [`Done::Control`] without doing anything for jumps, inline calls, returns, panics and
    /// merge points, and the message of the panic Rust would raise, with no register changed,
    /// for an op that fails (overflow, division by zero, index out of bounds). The tracer and
    /// the blackhole interpreter execute ops through this, so all three agree.
    ///
    /// # Safety
    /// See [`Frame::execute`].
    pub unsafe fn exec(&mut self, op: &Op) -> Result<Done, String> {
        match op {
            Op::Move { dst, src } => self.set(*dst, self.get(*src)),
            Op::IntBinary {
                op,
                ty,
                overflow,
                dst,
                a,
                b,
            } => {
                self.ints[usize::from(dst.index)] =
                    int_binary(*op, *ty, *overflow, self.int(*a), self.int(*b))?
            }
            Op::IntUnary {
                op,
                ty,
                overflow,
                dst,
                a,
            } => self.ints[usize::from(dst.index)] = int_unary(*op, *ty, *overflow, self.int(*a))?,
            Op::IntCompare {
                cmp,
                signed,
                dst,
                a,
                b,
            } => {
                let (x, y) = (self.int(*a), self.int(*b));
                let r = if *signed {
                    compare(*cmp, x, y)
                } else {
                    compare(*cmp, x as u64, y as u64)
                };
                self.ints[usize::from(dst.index)] = i64::from(r);
            }
            Op::IntCast { from, to, dst, src } => {
                self.ints[usize::from(dst.index)] = to.canonical(from.widen(self.int(*src)));
            }
            Op::FloatBinary { op, dst, a, b } => {
                self.floats[usize::from(dst.index)] =
                    float_binary(*op, self.float(*a), self.float(*b));
            }
            Op::FloatUnary { op, dst, a } => {
                let x = self.float(*a);
                self.floats[usize::from(dst.index)] = match op {
                    FloatUnOp::Neg => -x,
                    FloatUnOp::Abs => x.abs(),
                };
            }
            Op::FloatCompare { cmp, dst, a, b } => {
                let r = compare(*cmp, self.float(*a), self.float(*b));
                self.ints[usize::from(dst.index)] = i64::from(r);
            }
            Op::IntToFloat { from, dst, src } => {
                self.floats[usize::from(dst.index)] = from.widen(self.int(*src)) as f64;
            }
            Op::FloatToInt { to, dst, src } => {
                self.ints[usize::from(dst.index)] = float_to_int(*to, self.float(*src));
            }
            Op::RefCompare { eq, dst, a, b } => {
                let same = self.addr(*a) == self.addr(*b);
                self.ints[usize::from(dst.index)] = i64::from(same == *eq);
            }
            Op::RefAddr {
                dst,
                base,
                index,
                offset,
            } => {
                let mut addr = self.addr(*base);
                if let Some((i, size)) = index {
                    addr = addr.wrapping_add((self.int(*i) as usize).wrapping_mul(*size));
                }
                self.refs[usize::from(dst.index)] = addr.wrapping_add(*offset);
            }
            Op::New { dst, descr } => {
                let addr = crate::gc::alloc_object(descr.size, descr.align);
                self.refs[usize::from(dst.index)] = addr;
            }
            Op::GetField { dst, base, descr } => {
                // SAFETY: see `run`: the address is that of a live object holding this field.
                let v = unsafe { load(self.addr(*base) + descr.offset, descr) };
                self.set(*dst, v);
            }
            Op::SetField { base, src, descr } => {
                // SAFETY: as for GetField; the native code writes the same field.
                unsafe { store(self.addr(*base) + descr.offset, descr, self.get(*src)) };
            }
            Op::GetArrayItem {
                dst,
                base,
                index,
                descr,
            } => {
                let addr = self.addr(*base)
                    + (self.int(*index) as usize) * descr.item_size
                    + descr.item.offset;
                // SAFETY: the index was checked against the length by a preceding CheckIndex.
                let v = unsafe { load(addr, &descr.item) };
                self.set(*dst, v);
            }
            Op::SetArrayItem {
                base,
                index,
                src,
                descr,
            } => {
                let addr = self.addr(*base)
                    + (self.int(*index) as usize) * descr.item_size
                    + descr.item.offset;
                // SAFETY: as for GetArrayItem.
                unsafe { store(addr, &descr.item, self.get(*src)) };
            }
            Op::CheckIndex { index, len } => {
                let (i, n) = (self.int(*index) as u64, self.int(*len) as u64);
                if i >= n {
                    return Err(format!(
                        "index out of bounds: the len is {n} but the index is {i}"
                    ));
                }
            }
            Op::Call { descr, args, dst } => {
                let vals: Vec<Value> = args.iter().map(|&r| self.get(r)).collect();
                let res = (descr.dynamic)(&vals);
                if let (Some(d), Some(v)) = (dst, res) {
                    self.set(*d, v);
                }
            }
            Op::CanEnterJit { .. }
            | Op::Promote { .. }
            | Op::RecordKnownResult { .. }
            | Op::RecordExactValue { .. } => {}
            Op::Goto { .. }
            | Op::GotoIfNot { .. }
            | Op::Switch { .. }
            | Op::InlineCall { .. }
            | Op::Return { .. }
            | Op::Panic { .. }
            | Op::JitMergePoint { .. } => return Ok(Done::Control),
        }
        Ok(Done::Next)
    }
}

/// The target of a `Switch` on `v`.
pub fn switch_target(v: i64, cases: &[(i64, u32)], default: u32) -> usize {
    cases
        .iter()
        .find(|(c, _)| *c == v)
        .map_or(default, |&(_, t)| t) as usize
}

/// Loads the scalar `descr` describes from `addr`.
///
/// # Safety
/// `addr` is valid for a read of `descr.size` bytes holding a value of the described kind.
pub unsafe fn load(addr: usize, descr: &FieldDescr) -> Value {
    let p = addr as *const u8;
    // SAFETY: the caller guarantees `addr` is readable for `descr.size` bytes; reads are
    // unaligned-tolerant.
    unsafe {
        match (descr.kind, descr.size) {
            (Kind::Float, 8) => Value::Float(p.cast::<f64>().read_unaligned()),
            (Kind::Ref, _) => Value::Ref(p.cast::<usize>().read_unaligned()),
            (Kind::Int, 1) if descr.signed => {
                Value::Int(i64::from(p.cast::<i8>().read_unaligned()))
            }
            (Kind::Int, 1) => Value::Int(i64::from(p.read_unaligned())),
            (Kind::Int, 2) if descr.signed => {
                Value::Int(i64::from(p.cast::<i16>().read_unaligned()))
            }
            (Kind::Int, 2) => Value::Int(i64::from(p.cast::<u16>().read_unaligned())),
            (Kind::Int, 4) if descr.signed => {
                Value::Int(i64::from(p.cast::<i32>().read_unaligned()))
            }
            (Kind::Int, 4) => Value::Int(i64::from(p.cast::<u32>().read_unaligned())),
            (Kind::Int, 8) => Value::Int(p.cast::<i64>().read_unaligned()),
            (k, s) => panic!("unsupported field descriptor: kind {k:?} size {s}"),
        }
    }
}

/// Stores `v` into the scalar `descr` describes at `addr`.
///
/// # Safety
/// `addr` is valid for a write of `descr.size` bytes, and `v` is a valid value of the field's
/// Rust type (the codewriter only stores values of that type).
pub unsafe fn store(addr: usize, descr: &FieldDescr, v: Value) {
    let p = addr as *mut u8;
    // SAFETY: the caller guarantees `addr` is writable for `descr.size` bytes.
    unsafe {
        match (descr.kind, descr.size, v) {
            (Kind::Float, 8, Value::Float(f)) => p.cast::<f64>().write_unaligned(f),
            (Kind::Ref, _, Value::Ref(a)) => p.cast::<usize>().write_unaligned(a),
            (Kind::Int, 1, Value::Int(i)) => p.write_unaligned(i as u8),
            (Kind::Int, 2, Value::Int(i)) => p.cast::<u16>().write_unaligned(i as u16),
            (Kind::Int, 4, Value::Int(i)) => p.cast::<u32>().write_unaligned(i as u32),
            (Kind::Int, 8, Value::Int(i)) => p.cast::<i64>().write_unaligned(i),
            (k, s, v) => panic!("unsupported store: kind {k:?} size {s} value {v:?}"),
        }
    }
}

/// A comparison on any ordered values.
pub fn compare<T: PartialOrd>(cmp: Cmp, x: T, y: T) -> bool {
    match cmp {
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
    }
}

/// Float arithmetic.
pub fn float_binary(op: FloatBinOp, x: f64, y: f64) -> f64 {
    match op {
        FloatBinOp::Add => x + y,
        FloatBinOp::Sub => x - y,
        FloatBinOp::Mul => x * y,
        FloatBinOp::Div => x / y,
        FloatBinOp::Rem => x % y,
    }
}

/// Rust's `f as T` for an integer type `T`: truncate toward zero, saturate, NaN to 0.
pub fn float_to_int(to: IntTy, x: f64) -> i64 {
    let v = x as i128; // saturating at i128's range, NaN -> 0
    to.canonical(v.clamp(to.min(), to.max()))
}

/// Rust's semantics of an integer binary operation on canonical register contents: the result,
/// or the panic message Rust would give.
pub fn int_binary(
    op: IntBinOp,
    ty: IntTy,
    overflow: Overflow,
    a: i64,
    b: i64,
) -> Result<i64, &'static str> {
    let (x, y) = (ty.widen(a), ty.widen(b));
    let fits = |v: i128| v >= ty.min() && v <= ty.max();
    let checked = |v: i128, msg: &'static str| {
        if overflow == Overflow::Check && !fits(v) {
            Err(msg)
        } else {
            Ok(ty.canonical(v))
        }
    };
    match op {
        IntBinOp::Add => checked(x + y, "attempt to add with overflow"),
        IntBinOp::Sub => checked(x - y, "attempt to subtract with overflow"),
        IntBinOp::Mul => {
            // |x|, |y| < 2^64, so the product fits in i128 unless both are near 2^64 (u64 only).
            let p = if ty.signed {
                x * y
            } else {
                let p = (x as u128).wrapping_mul(y as u128);
                if p > u64::MAX as u128 && overflow == Overflow::Check {
                    return Err("attempt to multiply with overflow");
                }
                (p & u128::from(u64::MAX)) as i128
            };
            checked(p, "attempt to multiply with overflow")
        }
        IntBinOp::Div => {
            if y == 0 {
                return Err("attempt to divide by zero");
            }
            let q = x / y; // i128 division truncates toward zero like Rust's
            if !fits(q) {
                return Err("attempt to divide with overflow");
            }
            Ok(ty.canonical(q))
        }
        IntBinOp::Rem => {
            if y == 0 {
                return Err("attempt to calculate the remainder with a divisor of zero");
            }
            if ty.signed && x == ty.min() && y == -1 {
                return Err("attempt to calculate the remainder with overflow");
            }
            Ok(ty.canonical(x % y))
        }
        IntBinOp::And => Ok(ty.canonical(x & y)),
        IntBinOp::Or => Ok(ty.canonical(x | y)),
        IntBinOp::Xor => Ok(ty.canonical(x ^ y)),
        IntBinOp::Shl | IntBinOp::Shr => {
            let bits = i128::from(ty.bits);
            let amount = if (0..bits).contains(&y) {
                y
            } else if overflow == Overflow::Check {
                return Err(if op == IntBinOp::Shl {
                    "attempt to shift left with overflow"
                } else {
                    "attempt to shift right with overflow"
                });
            } else {
                y & (bits - 1)
            };
            Ok(ty.canonical(if op == IntBinOp::Shl {
                x << amount
            } else {
                x >> amount
            }))
        }
    }
}

/// Rust's semantics of an integer unary operation.
pub fn int_unary(op: IntUnOp, ty: IntTy, overflow: Overflow, a: i64) -> Result<i64, &'static str> {
    let x = ty.widen(a);
    match op {
        IntUnOp::Neg => {
            if overflow == Overflow::Check && -x > ty.max() {
                Err("attempt to negate with overflow")
            } else {
                Ok(ty.canonical(-x))
            }
        }
        IntUnOp::Not => Ok(ty.canonical(!x)),
    }
}

#[cfg(test)]
mod tests {
    //! The runner's integer semantics against Rust's own operators, type by type.
    use super::*;
    use quickcheck::quickcheck;

    macro_rules! against_rust {
        ($name:ident, $t:ty, $bits:expr, $signed:expr) => {
            quickcheck! {
                fn $name(a: $t, b: $t, s: u32) -> bool {
                    let ty = IntTy { bits: $bits, signed: $signed };
                    let r = |op, ov, x: $t, y: i64| int_binary(op, ty, ov, x as i64, y).map(|v| v as $t);
                    let w = Overflow::Wrap;
                    let c = Overflow::Check;
                    let (bi, si) = (b as i64, s as i64 % ($bits as i64 + 3));
                    r(IntBinOp::Add, w, a, bi) == Ok(a.wrapping_add(b))
                        && r(IntBinOp::Sub, w, a, bi) == Ok(a.wrapping_sub(b))
                        && r(IntBinOp::Mul, w, a, bi) == Ok(a.wrapping_mul(b))
                        && r(IntBinOp::Add, c, a, bi).ok() == a.checked_add(b)
                        && r(IntBinOp::Sub, c, a, bi).ok() == a.checked_sub(b)
                        && r(IntBinOp::Mul, c, a, bi).ok() == a.checked_mul(b)
                        && r(IntBinOp::Div, c, a, bi).ok() == a.checked_div(b)
                        && r(IntBinOp::Rem, c, a, bi).ok() == a.checked_rem(b)
                        && r(IntBinOp::And, w, a, bi) == Ok(a & b)
                        && r(IntBinOp::Or, w, a, bi) == Ok(a | b)
                        && r(IntBinOp::Xor, w, a, bi) == Ok(a ^ b)
                        && r(IntBinOp::Shl, c, a, si).ok() == a.checked_shl(si as u32)
                        && r(IntBinOp::Shr, c, a, si).ok() == a.checked_shr(si as u32)
                        && r(IntBinOp::Shl, w, a, si) == Ok(a.wrapping_shl(si as u32))
                        && r(IntBinOp::Shr, w, a, si) == Ok(a.wrapping_shr(si as u32))
                        && int_unary(IntUnOp::Not, ty, w, a as i64).map(|v| v as $t) == Ok(!a)
                }
            }
        };
    }
    against_rust!(i8_ops, i8, 8, true);
    against_rust!(u8_ops, u8, 8, false);
    against_rust!(i16_ops, i16, 16, true);
    against_rust!(u32_ops, u32, 32, false);
    against_rust!(i64_ops, i64, 64, true);
    against_rust!(u64_ops, u64, 64, false);

    quickcheck! {
        fn negation(a: i32) -> bool {
            let ty = IntTy { bits: 32, signed: true };
            int_unary(IntUnOp::Neg, ty, Overflow::Check, a as i64).ok().map(|v| v as i32) == a.checked_neg()
                && int_unary(IntUnOp::Neg, ty, Overflow::Wrap, a as i64) == Ok(a.wrapping_neg() as i64)
        }
        fn float_to_int_is_rust_as(x: f64) -> bool {
            float_to_int(IntTy { bits: 8, signed: false }, x) == (x as u8) as i64
                && float_to_int(IntTy { bits: 32, signed: true }, x) == (x as i32) as i64
                && float_to_int(IntTy::I64, x) == x as i64
                && float_to_int(IntTy { bits: 64, signed: false }, x) == (x as u64) as i64
        }
        fn casts_are_rust_as(x: i64) -> bool {
            let from = IntTy::I64;
            IntTy { bits: 8, signed: true }.canonical(from.widen(x)) == (x as i8) as i64
                && IntTy { bits: 16, signed: false }.canonical(from.widen(x)) == (x as u16) as i64
                && IntTy { bits: 32, signed: false }.canonical(IntTy { bits: 8, signed: true }.widen((x as i8) as i64))
                    == ((x as i8) as u32) as i64
        }
    }
}
