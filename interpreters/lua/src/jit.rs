//! The JIT portal and the run modes (`--no-jit`, `--jitcode`, JIT on, `--jit-param`).
//!
//! The portal's greens are the running prototype and the pc; its reds are the VM, the frame's
//! base and the frame depth to stop at. The common instructions run inline in the portal,
//! where the codewriter traces them: arithmetic, comparisons and moves of numbers, jumps, the
//! `for` loops, fields through table shapes, array items, lengths, a few natives. Lua calls
//! and returns, and operators whose metamethod is a Lua function ([`meta_call`]), are followed
//! into the callee and back, with the frames pushed and popped by traced code. The rest goes
//! through [`simple`] (one instruction natively, in its frame) or [`step`] (the plain
//! dispatch loop up to the next hot instruction), after which the portal reloads the frame.

use crate::proto::{Op, Proto, NO_CLOSE, RK_CONST};
use crate::shape::{Shape, EV_EQ, EV_LEN, EV_NEWINDEX};
use crate::table::{ArrayPart, Table};
use crate::value::{LStr, Native, Value};
use crate::vm::{ArOp, Closure, Desc, LResult, Up, Vm};
use crate::Mode;
use meta_jit::hints as jit;
use meta_jit::hints::*;

/// `portal` result: the frame at the stop depth returned.
pub const DONE: i64 = -2;
/// `portal` result: an error is waiting in `Vm::pending`.
pub const ERROR: i64 = -1;

/// The driver's parameters for Lua, before the command line's: a bridge may be as long as
/// 4,000 ops (the framework's default is 2,000). A loop of object code inlines every method
/// and metamethod it calls, and a bridge from a guard on an object's class traces the rest of
/// the turn: oop's bridges were 2,000 to 4,000 ops, and aborted, so that every other turn of
/// its loop left compiled code (0.52 s with them, 0.98 s without). A guard gets its bridge
/// after 50 failures, not the framework's 200: until then each failure rebuilds the
/// inlined frames in the blackhole and runs the rest of the turn in the interpreter
/// (callgrind, default sizes: deltablue 2,960.9M to 2,586.6M instructions, richards
/// 3,919.6M to 3,325.9M, oop 6,142.0M to 5,876.5M, binarytrees 3,893.1M to 3,804.2M,
/// `json.lua 40` 2,440.5M to 2,302.7M).
const PARAMS: &str = "bridge_limit=4000,trace_eagerness=50";

/// Applies Lua's parameters, then the command line's JIT mode and parameters, to the
/// portal's driver.
pub fn configure(mode: Mode, params: &[String]) -> Result<(), String> {
    portal::with_driver(|d| d.set_params(PARAMS)).map_err(|e| e.to_string())?;
    for p in params {
        portal::with_driver(|d| d.set_params(p)).map_err(|e| format!("--jit-param {p}: {e}"))?;
    }
    if mode == Mode::NoJit {
        portal::with_driver(|d| d.set_params("off")).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// True for an instruction the portal runs without [`step`]: inline, or as one [`simple`]
/// call, or (Lua calls and returns) by following it into the callee or the caller. The others
/// are varargs. A call or return of open values (`f(g(x))`, `return f(...)`, `return x, g()`:
/// up to `vm.top`, which the call before set) takes the count from `vm.top`, promoted.
fn portal_inline(op: &Op) -> bool {
    !matches!(op, Op::Vararg(..))
}

/// The longest list store (`SetList`, of a fixed count or up to the top) that the portal runs
/// as traced stores into the array part, one [`array_set`] per item; a longer one is one call
/// of [`simple`], so that a constructor of many items costs its trace a call, not tens of ops
/// per item.
const SET_LIST_INLINE: i64 = 16;

/// `Proto::hot` for `code` (empty if no instruction is hot): true for each instruction of a loop (from a backward jump's or a
/// `ForStep`'s target to the jump) made only of instructions the portal runs inline. Only
/// these loops are worth tracing today: any other instruction is a call of [`step`], and a
/// trace of such calls costs more than the plain loop, so the plain loop keeps control
/// everywhere else.
pub fn hot_loops(code: &[Op]) -> Vec<bool> {
    let mut hot = vec![false; code.len()];
    for (j, op) in code.iter().enumerate() {
        let off = match *op {
            Op::Jmp(_, off) | Op::ForStep(_, off) if off < 0 => off,
            _ => continue,
        };
        let target = j as i64 + 1 + off as i64;
        if target < 0 {
            continue;
        }
        let t = target as usize;
        if code[t..=j].iter().all(portal_inline) {
            hot[t..=j].fill(true);
        }
    }
    // A function made only of such instructions is hot from its entry on: its calls are
    // followed by the portal (recursion is a loop through the entry).
    if code.iter().all(portal_inline) {
        hot.fill(true);
    }
    // Empty when there is no hot loop, so that the plain loop can skip the check.
    if !hot.contains(&true) {
        hot.clear();
    }
    hot
}

/// Runs the running frame through the plain dispatch loop, from at least one instruction up
/// to the next instruction of a hot loop (`Proto::hot`), in whatever frame that is.
#[dont_look_inside]
fn step(vm: &mut Vm, pc: usize, stop: usize) -> i64 {
    let fi = vm.frames.len() - 1;
    vm.frames[fi].pc = pc;
    match vm.run::<true>(stop) {
        Err(e) => {
            vm.pending = Some(e);
            ERROR
        }
        Ok(()) if vm.frames.len() <= stop => DONE,
        Ok(()) => 0,
    }
}

/// The running frame's prototype: loads (the frame stack and closures are `JitLayout`).
#[look_inside]
fn frame_proto(vm: &Vm) -> &'static Proto {
    vm.frames.items[vm.frames.n - 1].cl.proto
}

/// The running frame's pc.
#[look_inside]
fn frame_pc(vm: &Vm) -> usize {
    vm.frames.items[vm.frames.n - 1].pc
}

/// The running frame's base.
#[look_inside]
fn frame_base(vm: &Vm) -> usize {
    vm.frames.items[vm.frames.n - 1].base
}

/// `return_fast` and `tail_fast` result: the common path does not apply, nothing was done.
const NOT_FAST: i64 = -4;

/// The common call of a Lua function `f` in `vm.stack[func]` (as `Vm::enter_lua`), in traced
/// code: a callee without `...`, with room for its frame and registers. The push is stores
/// into the frame stack's next record (`FrameStack`), so a trace that inlines the call keeps
/// what it knows about memory across it. Returns the callee's base, or 0 (nothing done):
/// [`call_lua`] then makes the call.
#[unroll_safe]
fn call_fast(
    vm: &mut Vm,
    f: Gc<Closure>,
    func: usize,
    nargs: usize,
    nres: i32,
    ret: usize,
) -> usize {
    let p = promote!(f.proto);
    if p.is_vararg {
        return 0;
    }
    // Below the vector's length is below `MAX_FRAMES` too: every push that grows it was
    // checked against the limit (`Vm::precall`, `Vm::enter_lua`).
    let n = vm.frames.n;
    if n >= vm.frames.items.len() {
        return 0;
    }
    let base = func + 1;
    if base + p.maxstack as usize + nargs + 1 > vm.stack.len() {
        return 0;
    }
    vm.frames.items[n - 1].pc = ret;
    // The frame owns the closure from here on (`exec::take_closure`).
    vm.stack[func] = Value::Nil;
    let np = p.nparams as usize;
    let mut i = nargs;
    while i < np {
        vm.stack[base + i] = Value::Nil;
        i += 1;
    }
    let va = vm.varargs.len() as u32;
    let fr = &mut vm.frames.items[n];
    fr.cl = f;
    fr.base = base;
    fr.pc = 0;
    fr.nres = nres;
    fr.va_start = va;
    fr.va_len = 0;
    fr.boundary = false;
    fr.from_native = false;
    fr.fin = 0;
    vm.frames.n = n + 1;
    base
}

/// The common tail call of a Lua function `f` in `vm.stack[func]` (as `Vm::tail_lua`), in
/// traced code: a callee without `...` from a frame without extra arguments or open
/// upvalues, with room for the callee's registers. False (nothing done) otherwise:
/// [`tail_call_lua`] then makes it.
#[unroll_safe]
fn tail_fast(vm: &mut Vm, f: Gc<Closure>, base: usize, func: usize, nargs: usize) -> bool {
    let p = promote!(f.proto);
    if p.is_vararg || vm.open_top > base {
        return false;
    }
    let fi = vm.frames.n - 1;
    if vm.frames.items[fi].va_len > 0 {
        return false;
    }
    if base + p.maxstack as usize + nargs + 1 > vm.stack.len() {
        return false;
    }
    vm.stack[func] = Value::Nil;
    let mut i = 1;
    while i <= nargs {
        vm.stack[base - 1 + i] = vm.stack[func + i];
        vm.stack[func + i] = Value::Nil;
        i += 1;
    }
    let np = p.nparams as usize;
    let mut j = nargs;
    while j < np {
        vm.stack[base + j] = Value::Nil;
        j += 1;
    }
    vm.frames.items[fi].cl = f;
    vm.frames.items[fi].pc = 0;
    true
}

/// The common return of `n` values from stack slot `from` of the running frame at `base`
/// (as `Vm::leave_lua`), in traced code: a frame without open upvalues or extra arguments,
/// called from Lua, above the stop depth. The pop is stores and a counter, as
/// [`call_fast`]'s push. 0 when the caller runs on, [`NOT_FAST`] (nothing done) otherwise:
/// [`return_lua`] then makes the return.
#[unroll_safe]
fn return_fast(vm: &mut Vm, base: usize, from: usize, n: usize, stop: usize) -> i64 {
    if vm.open_top > base {
        return NOT_FAST;
    }
    let fi = vm.frames.n - 1;
    if fi <= stop || vm.frames.items[fi].va_len > 0 || vm.frames.items[fi].boundary {
        return NOT_FAST;
    }
    let nres = vm.frames.items[fi].nres;
    let dest = base - 1;
    let want = if nres < 0 { n } else { nres as usize };
    if n >= 1 && want == 1 {
        vm.stack[dest] = vm.stack[from];
    } else {
        let mut i = 0;
        while i < n {
            vm.stack[dest + i] = vm.stack[from + i];
            vm.stack[from + i] = Value::Nil;
            i += 1;
        }
        while i < want {
            vm.stack[dest + i] = Value::Nil;
            i += 1;
        }
    }
    vm.top = dest + want;
    vm.frames.n = fi;
    let fin = vm.frames.items[fi].fin;
    if fin != 0 {
        finish_meta(vm, fin, dest);
    }
    0
}

/// [`Frame::fin`](crate::vm::Frame::fin) of a metamethod that gives an operator's value: the
/// caller's register to store the result in is `fin - FIN_STORE`.
const FIN_STORE: u16 = 0x4000;
/// [`Frame::fin`](crate::vm::Frame::fin) of a metamethod that gives a comparison's outcome:
/// bit 0 is the instruction's `k`, and the caller skips its next instruction (the jump) when
/// the result's truth is not `k`.
const FIN_COND: u16 = 0x8000;
/// [`meta_site`]'s event numbers (`vm::META_EVENTS`) after the operators': `__lt`, `__le`,
/// `__eq`.
const EV_LT_ID: i64 = 14;
const EV_LE_ID: i64 = 15;
const EV_EQ_ID: i64 = 16;

/// What the caller's instruction does with the result of the metamethod frame that just
/// returned it to `vm.stack[dest]` (`fin` is the frame's [`FIN_STORE`] or [`FIN_COND`] word):
/// the rest of the instruction, in the caller's frame. Traced code runs it after
/// [`return_fast`]; the plain loop after `Vm::leave_lua`.
#[look_inside]
pub(crate) fn finish_meta(vm: &mut Vm, fin: u16, dest: usize) {
    let ci = vm.frames.n - 1;
    if fin & FIN_COND != 0 {
        let t = match vm.stack[dest] {
            Value::Nil => false,
            Value::Boolean(b) => b,
            _ => true,
        };
        if t != (fin & 1 != 0) {
            vm.frames.items[ci].pc += 1;
        }
    } else {
        let cb = vm.frames.items[ci].base;
        vm.stack[cb + (fin - FIN_STORE) as usize] = vm.stack[dest];
    }
}

/// The instruction at `pc` as a call of an operator's metamethod: its event number
/// (`vm::META_EVENTS`) in bits 0-7, its RK operands in bits 8-23 and 24-39 and its
/// [`Frame::fin`](crate::vm::Frame::fin) word in bits 40-55; -1 for an instruction without
/// one. Its arguments are constants in a trace, so the tracer decodes the instruction once.
#[elidable]
fn meta_site(proto: &Proto, pc: usize) -> i64 {
    let pack = |ev: i64, b: u16, c: u16, fin: u16| {
        ev | (b as i64) << 8 | (c as i64) << 24 | (fin as i64) << 40
    };
    let op = &proto.code[pc];
    if let Some((o, a, b, c)) = binary(op) {
        return pack(o as i64, b, c, FIN_STORE | a);
    }
    match *op {
        Op::Unm(a, b) => pack(ArOp::Unm as i64, b, b, FIN_STORE | a),
        Op::BNot(a, b) => pack(ArOp::BNot as i64, b, b, FIN_STORE | a),
        Op::Lt(b, c, k) => pack(EV_LT_ID, b, c, FIN_COND | k as u16),
        Op::Le(b, c, k) => pack(EV_LE_ID, b, c, FIN_COND | k as u16),
        Op::Eq(b, c, k) => pack(EV_EQ_ID, b, c, FIN_COND | k as u16),
        _ => -1,
    }
}

/// The slot of metamethod `ev` (`vm::META_EVENTS`) in a metatable of shape `shape`, or -1.
#[elidable]
fn shape_event_slot(shape: &Shape, ev: u8) -> i64 {
    let name = crate::value::intern(crate::vm::META_EVENTS[ev as usize].as_bytes());
    shape.slot(name).map_or(-1, |i| i as i64)
}

/// The metamethod `ev` of `v` read raw from its metatable through the metatable's promoted
/// shape: nil when it has none (a number has no metatable); `false` when this cannot tell (a
/// string, a dictionary metatable), which no caller takes for a function.
#[look_inside]
fn meta_get(v: Value, ev: u8) -> Value {
    match v {
        Value::Tab(t) => match t.meta.get() {
            None => Value::Nil,
            Some(m) => {
                let ms = promote!(m.shape.get());
                if shape_is_dict(ms) {
                    return Value::Boolean(false);
                }
                let slot = shape_event_slot(ms, ev);
                if slot < 0 {
                    Value::Nil
                } else {
                    m.hpart.get().items[2 * slot as usize + 1].get()
                }
            }
        },
        Value::Int(_) => Value::Nil,
        Value::Num(_) => Value::Nil,
        _ => Value::Boolean(false),
    }
}

/// The operator at `pc` through a metamethod, as a guest call: when an operand is a table
/// (the other a table or a number; both tables for `==`) and the metamethod found first is a
/// Lua function [`call_fast`] can enter, its frame is pushed above the caller's registers with
/// the operands as arguments and the rest of the instruction in `Frame::fin`
/// ([`finish_meta`] runs it at the return). The portal then follows the call, so a trace
/// inlines `__add` or `__lt` as it inlines a call. Returns the callee's base, or 0 (nothing
/// done): [`simple`] then calls the metamethod from native code.
#[look_inside]
fn meta_call(vm: &mut Vm, proto: &'static Proto, pc: usize, base: usize) -> usize {
    let site = meta_site(proto, pc);
    if site < 0 {
        return 0;
    }
    let ev = (site & 0xff) as u8;
    let x = rk(vm, proto, base, ((site >> 8) & 0xffff) as u16);
    let y = rk(vm, proto, base, ((site >> 24) & 0xffff) as u16);
    let (xt, yt) = (matches!(x, Value::Tab(_)), matches!(y, Value::Tab(_)));
    if ev as i64 == EV_EQ_ID {
        // `__eq` is for two tables that are not one object (the portal's `Eq` arm answers
        // that case before; asked again here, the trace has the answer already).
        if !(xt && yt) {
            return 0;
        }
        if let Value::Tab(p) = x {
            if let Value::Tab(q) = y {
                if Gc::ptr_eq(p, q) {
                    return 0;
                }
            }
        }
    } else if !(xt || yt) {
        return 0;
    }
    let mut h = meta_get(x, ev);
    if let Value::Nil = h {
        h = meta_get(y, ev);
    }
    if let Value::LFunc(f) = h {
        let func = base + proto.maxstack as usize;
        let nb = call_fast(vm, f, func, 2, 1, pc + 1);
        if nb != 0 {
            vm.stack[nb] = x;
            vm.stack[nb + 1] = y;
            vm.frames.items[vm.frames.n - 1].fin = (site >> 40) as u16;
        }
        return nb;
    }
    0
}

/// A call of the Lua function in `vm.stack[func]` with `nargs` arguments, wanting `nres`
/// results (`Vm::enter_lua`): saves the caller's next pc `ret` and pushes the callee's frame.
/// Returns the callee's base, or 0 when the plain loop must make the call (a native,
/// `__call`, a stack overflow).
#[dont_look_inside]
fn call_lua(vm: &mut Vm, func: usize, nargs: usize, nres: i32, ret: usize) -> usize {
    let fi = vm.frames.len() - 1;
    vm.frames[fi].pc = ret;
    if vm.enter_lua(func, nargs, nres) {
        func + 1
    } else {
        0
    }
}

/// A tail call of the Lua function in `vm.stack[func]` with `nargs` arguments
/// (`Vm::tail_lua`): it takes over the running frame at `base`. False when the plain loop
/// must make it.
#[dont_look_inside]
fn tail_call_lua(vm: &mut Vm, base: usize, func: usize, nargs: usize) -> bool {
    vm.tail_lua(base, func, nargs)
}

/// A return of `n` values from stack slot `from` of the running frame at `base`
/// (`Vm::leave_lua`). [`DONE`] when the frame at the stop depth returned, 0 when its caller
/// runs on.
#[dont_look_inside]
fn return_lua(vm: &mut Vm, base: usize, from: usize, n: usize, stop: usize) -> i64 {
    let f = vm.leave_lua(base, from, n);
    if vm.frames.len() <= stop || f.boundary {
        DONE
    } else {
        0
    }
}

/// A tail call of the native in `vm.stack[func]` with `nargs` arguments, from the running
/// frame at `base` (the instruction at `pc`): the native runs with the frame in place, as
/// the plain loop runs it, and the frame returns all its results (the `return` after the
/// tail call). [`DONE`] when the frame at the stop depth returned, [`ERROR`] (the error is in
/// `Vm::pending`), 0 when the caller runs on.
#[dont_look_inside]
fn tail_native(vm: &mut Vm, pc: usize, base: usize, func: usize, nargs: usize, stop: usize) -> i64 {
    let fi = vm.frames.len() - 1;
    vm.frames[fi].pc = pc + 1;
    match vm.precall(func, nargs, -1, true) {
        Err(e) => {
            vm.pending = Some(e);
            ERROR
        }
        Ok(pushed) => {
            assert!(!pushed, "a native pushes no frame");
            let n = vm.top - func;
            return_lua(vm, base, func, n, stop)
        }
    }
}

/// [`native_kind`]: a native the portal runs inline ([`fast_native`]), or none.
const NATIVE_OTHER: u8 = 0;
const NATIVE_FLOOR: u8 = 1;
const NATIVE_SQRT: u8 = 2;
const NATIVE_SETMETATABLE: u8 = 3;
const NATIVE_TYPE: u8 = 4;
const NATIVE_SUB: u8 = 5;
const NATIVE_BYTE: u8 = 6;
const NATIVE_TREMOVE: u8 = 7;
const NATIVE_FIND: u8 = 8;
const NATIVE_GSUB: u8 = 9;
const NATIVE_CONCAT: u8 = 10;
const NATIVE_IPAIRS_ITER: u8 = 11;
const NATIVE_NEXT: u8 = 12;
const NATIVE_PAIRS: u8 = 13;
const NATIVE_IPAIRS: u8 = 14;
const NATIVE_MATCH: u8 = 15;
const NATIVE_TONUMBER: u8 = 16;
const NATIVE_FORMAT: u8 = 17;

/// Which native `n` is, for [`fast_native`]: by its name, which only the standard library
/// gives (natives are made by the library alone). Its argument is a constant in a trace (the
/// callee is promoted), so the tracer calls it once.
#[elidable]
fn native_kind(n: Gc<Native>) -> u8 {
    match n.name.as_str() {
        "math.floor" => NATIVE_FLOOR,
        "math.sqrt" => NATIVE_SQRT,
        "setmetatable" => NATIVE_SETMETATABLE,
        "type" => NATIVE_TYPE,
        "string.sub" => NATIVE_SUB,
        "string.byte" => NATIVE_BYTE,
        "table.remove" => NATIVE_TREMOVE,
        "string.find" => NATIVE_FIND,
        "string.gsub" => NATIVE_GSUB,
        "table.concat" => NATIVE_CONCAT,
        "ipairs_iter" => NATIVE_IPAIRS_ITER,
        "next" => NATIVE_NEXT,
        "pairs" => NATIVE_PAIRS,
        "ipairs" => NATIVE_IPAIRS,
        "string.match" => NATIVE_MATCH,
        "tonumber" => NATIVE_TONUMBER,
        "string.format" => NATIVE_FORMAT,
        _ => NATIVE_OTHER,
    }
}

/// `x.floor()`.
#[elidable]
fn float_floor(x: f64) -> f64 {
    x.floor()
}

/// `x.sqrt()`.
#[elidable]
fn float_sqrt(x: f64) -> f64 {
    x.sqrt()
}

/// The interned name `type` gives for type code `code` (the order of [`TYPE_NAMES`]).
#[elidable]
fn type_str(code: i64) -> Gc<LStr> {
    crate::value::intern(TYPE_NAMES[code as usize].as_bytes())
}

/// True for a native that [`fast_native`] runs and that always gives exactly one value
/// (`setmetatable`, `math.floor`, `math.sqrt`, `type`, `string.sub`), so that a tail call
/// of it (`return setmetatable({...}, C)`, which returns all its values) can run it for one
/// result. (`string.byte` out of range, `string.find`, `next` and the iterators give other
/// counts.)
#[elidable]
fn native_one_result(n: Gc<Native>) -> bool {
    let kind = native_kind(n);
    kind == NATIVE_SETMETATABLE
        || kind == NATIVE_FLOOR
        || kind == NATIVE_SQRT
        || kind == NATIVE_TYPE
        || kind == NATIVE_SUB
}

/// What `type` returns, by the codes [`fast_native`] gives the values.
const TYPE_NAMES: [&str; 6] = ["nil", "boolean", "number", "string", "table", "function"];

/// The interned string of byte `a` of `s` (`s:sub(i, i)`; strings of one byte are interned,
/// so two such strings of one byte are one object, whatever call made them).
#[elidable]
fn one_byte_str(s: Gc<LStr>, a: i64) -> Gc<LStr> {
    crate::value::intern(&s.bytes[a as usize..a as usize + 1])
}

/// The 0-based start of the positions from 1-based `i` (negative: from the end) in a string
/// of `len` bytes, clamped to `0..=len` (the string library's too).
#[look_inside]
pub(crate) fn sub_start(i: i64, len: i64) -> i64 {
    if i > 0 {
        if i - 1 < len {
            i - 1
        } else {
            len
        }
    } else if i == 0 || i < -len {
        0
    } else {
        len + i
    }
}

/// The exclusive end of the positions up to 1-based `j` (negative: from the end), clamped to
/// `0..=len` (the string library's too).
#[look_inside]
pub(crate) fn sub_end(j: i64, len: i64) -> i64 {
    if j > len {
        len
    } else if j >= 0 {
        j
    } else if j < -len {
        0
    } else {
        len + 1 + j
    }
}

/// Whether `v` is nil.
#[look_inside]
fn is_nil(v: Value) -> bool {
    matches!(v, Value::Nil)
}

/// Byte `a` of `s`.
#[elidable]
fn str_byte(s: Gc<LStr>, a: i64) -> i64 {
    s.bytes[a as usize] as i64
}

/// The empty string (interned).
#[elidable]
fn empty_str() -> Gc<LStr> {
    crate::value::intern(b"")
}

/// A new string of bytes `a..b` of `s` (at least two). It writes no memory that traced code
/// reads: the new string is fresh memory, and the native allocation never collects.
#[dont_look_inside(writes_nothing)]
fn sub_str(s: Gc<LStr>, a: i64, b: i64) -> Gc<LStr> {
    LStr::new(&s.bytes[a as usize..b as usize])
}

/// [`str_find`]: the call must go to the library (a malformed pattern's error, captures, a
/// subject too long to pack the positions).
const FIND_SLOW: i64 = -1;

/// `string.find(s, p, init, plain)` (`plain`: its fourth argument is true), by the library's own search
/// (`stdlib::string::find_in`): 0 when nothing is found, else the 1-based start and the end
/// packed as `start | end << 32`, or [`FIND_SLOW`] when the library must make the call (a
/// pattern with captures, whose values `find` also returns; an error). Strings are
/// immutable, so the result depends on the arguments alone: a pure call, which keeps what
/// the optimizer knows of memory (through `simple` the call made it forget everything).
#[elidable]
fn str_find(s: Gc<LStr>, p: Gc<LStr>, init: i64, plain: bool) -> i64 {
    use crate::stdlib::string::{find_in, Found};
    if s.bytes.len() >= 1 << 31 {
        return FIND_SLOW;
    }
    let plain = plain || crate::stdlib::pattern::is_plain(&p.bytes);
    match find_in(&s.bytes, &p.bytes, init, plain) {
        Ok(Found::None) => 0,
        Ok(Found::Span(a, b)) => (a as i64 + 1) | (b as i64) << 32,
        Ok(Found::Pattern(m, a, b)) if m.level == 0 => (a as i64 + 1) | (b as i64) << 32,
        _ => FIND_SLOW,
    }
}

/// `string.find(s, p [, init [, plain]])` of strings and an integer, for up to two results, in the
/// trace: [`str_find`], then the positions (or nil) stored as the results. False (nothing
/// done) when the arguments are of other types or the library must make the call.
// The codewriter takes no ranges outside `for` loops, so no `contains` here.
#[allow(clippy::manual_range_contains)]
#[look_inside]
fn fast_find(vm: &mut Vm, func: usize, nargs: usize, nres: i32) -> bool {
    if nargs < 2 || nargs > 4 {
        return false;
    }
    let s = match vm.stack[func + 1] {
        Value::Str(s) => s,
        _ => return false,
    };
    let p = match vm.stack[func + 2] {
        Value::Str(p) => p,
        _ => return false,
    };
    let mut init = 1;
    if nargs >= 3 {
        init = match vm.stack[func + 3] {
            Value::Int(i) => i,
            _ => return false,
        };
    }
    let mut plain = false;
    if nargs == 4 {
        plain = !matches!(vm.stack[func + 4], Value::Nil | Value::Boolean(false));
    }
    let r = str_find(s, p, init, plain);
    if r == FIND_SLOW {
        return false;
    }
    if r == 0 {
        if nres >= 1 {
            vm.stack[func] = Value::Nil;
        }
        if nres == 2 {
            vm.stack[func + 1] = Value::Nil;
        }
    } else {
        if nres >= 1 {
            vm.stack[func] = Value::Int(r & 0xffff_ffff);
        }
        if nres == 2 {
            vm.stack[func + 1] = Value::Int(r >> 32);
        }
    }
    vm.top = func + nres as usize;
    true
}

/// `string.gsub(s, p, repl)` of a subject in which `p` matches nowhere ([`str_find`] finds
/// nothing from the start, so the library would make no replacement): `s` itself and 0, with
/// no call of the library, whatever `repl` is (of a type the library takes: it checks it
/// even when nothing matches). False (nothing done) when something matches, or for other
/// arguments: the library then makes the call.
#[look_inside]
fn fast_gsub(vm: &mut Vm, func: usize, nargs: usize, nres: i32) -> bool {
    if nargs != 3 {
        return false;
    }
    let s = match vm.stack[func + 1] {
        Value::Str(s) => s,
        _ => return false,
    };
    let p = match vm.stack[func + 2] {
        Value::Str(p) => p,
        _ => return false,
    };
    match vm.stack[func + 3] {
        Value::Str(_) | Value::Int(_) | Value::Num(_) | Value::Tab(_) => {}
        Value::LFunc(_) | Value::Builtin(_) => {}
        _ => return false,
    }
    if str_find(s, p, 1, false) != 0 {
        return false;
    }
    if nres >= 1 {
        vm.stack[func] = Value::Str(s);
    }
    if nres == 2 {
        vm.stack[func + 1] = Value::Int(0);
    }
    vm.top = func + nres as usize;
    true
}

/// What the numeral in `s` is (`value::str_to_number`, `tonumber`'s conversion): 0 none,
/// 1 an integer, 2 a float.
#[elidable]
fn str_num_kind(s: Gc<LStr>) -> i64 {
    match crate::value::str_to_number(&s.bytes) {
        Some(Value::Int(_)) => 1,
        Some(Value::Num(_)) => 2,
        _ => 0,
    }
}

/// The integer numeral in `s` ([`str_num_kind`] 1).
#[elidable]
fn str_int(s: Gc<LStr>) -> i64 {
    match crate::value::str_to_number(&s.bytes) {
        Some(Value::Int(i)) => i,
        _ => 0,
    }
}

/// The float numeral in `s` ([`str_num_kind`] 2).
#[elidable]
fn str_num(s: Gc<LStr>) -> f64 {
    match crate::value::str_to_number(&s.bytes) {
        Some(Value::Num(x)) => x,
        _ => 0.0,
    }
}

/// The native that `pairs` or `ipairs` returns as its iterator (`next`, `ipairs`' own):
/// the first value the native keeps (`Native::keep`).
#[elidable]
fn native_iterator(n: Gc<Native>) -> Gc<Native> {
    match n.keep[0] {
        Value::Builtin(f) => f,
        _ => unreachable!("pairs and ipairs keep their iterator"),
    }
}

/// `pairs(t)` of a table without a metatable (so no `__pairs`), and `ipairs(v)` of any
/// value: the iterator, the argument and the first control value (nil, 0), as the library
/// returns them, with no call. False (nothing done) otherwise.
#[look_inside]
fn fast_pairs(vm: &mut Vm, n: Gc<Native>, kind: u8, func: usize, nargs: usize, nres: i32) -> bool {
    if nargs < 1 {
        return false;
    }
    let x = vm.stack[func + 1];
    let mut start = Value::Int(0);
    if kind == NATIVE_PAIRS {
        match x {
            Value::Tab(t) => {
                if t.meta.get().is_some() {
                    return false;
                }
            }
            _ => return false,
        }
        start = Value::Nil;
    }
    if nres >= 1 {
        vm.stack[func] = Value::Builtin(native_iterator(n));
    }
    if nres >= 2 {
        vm.stack[func + 1] = x;
    }
    if nres == 3 {
        vm.stack[func + 2] = start;
    }
    vm.top = func + nres as usize;
    true
}

/// `table.concat(t, sep)` (`sep` None: no separator) of the items `1..=#t` of a table
/// without a metatable, when each is a string or a number (the library's conversion): a new
/// string. None when the library must make the call (an `__index`, `__len`, an item of
/// another type: its error). It writes no memory that traced code reads: the new string is
/// fresh memory, and the native allocation never collects.
#[dont_look_inside(writes_nothing)]
fn concat_list(t: Gc<Table>, sep: Option<Gc<LStr>>) -> Option<Gc<LStr>> {
    crate::stdlib::table::concat_plain(t, sep)
}

/// `string.format(f, v)` of the value in `vm.stack[v]`, when the library's `format_one`
/// takes it (one `%d` of an integer or `%g` of a float): a new string. None otherwise. It
/// only reads, and the allocation never collects.
#[dont_look_inside(writes_nothing)]
fn format_one(vm: &Vm, f: Gc<LStr>, v: usize) -> Option<Gc<LStr>> {
    crate::stdlib::format::format_one(&f.bytes, &vm.stack[v]).map(|b| LStr::new(&b))
}

/// True when the closure `MkClosure` makes from `proto.protos[idx]` captures no register of
/// the running frame: each upvalue is one of the running closure's own.
#[elidable]
fn captures_no_register(proto: &Proto, idx: u32) -> bool {
    proto.protos[idx as usize]
        .upvals
        .iter()
        .all(|u| !u.in_stack)
}

/// A new closure of `proto.protos[idx]` whose upvalues are `cl`'s (the running closure's;
/// [`captures_no_register`]), as `Vm::make_closure` makes it. It writes no memory that
/// traced code reads (no open upvalue is made), and the allocation never collects.
#[dont_look_inside(writes_nothing)]
fn new_closure(cl: Gc<Closure>, proto: &'static Proto, idx: u32) -> Gc<Closure> {
    let p = proto.protos[idx as usize];
    let ups = p.upvals.iter().map(|u| cl.upvals[u.idx as usize]).collect();
    Gc::new(Closure {
        proto: p,
        upvals: ups,
    })
}

/// `next`'s position after the key in `vm.stack[k]` (`first`: from the start) in `t`
/// (`Table::next_pos`): an index
/// `j` of the array part (the key is `j + 1`), [`NEXT_HASH`] plus an entry `j` of the hash
/// part (key and value are items `2j` and `2j + 1` of `Table::hpart`), [`NEXT_END`], or
/// [`NEXT_ERROR`] for a key that is not in the table. It only reads.
#[dont_look_inside(writes_nothing)]
fn next_pos(vm: &Vm, t: Gc<Table>, k: usize, first: bool) -> i64 {
    let key = if first { Value::Nil } else { vm.stack[k] };
    match t.next_pos(&key) {
        Ok(Some(crate::table::NextPos::InArray(j))) => j as i64,
        Ok(Some(crate::table::NextPos::InHash(j))) => NEXT_HASH + j as i64,
        Ok(None) => NEXT_END,
        Err(()) => NEXT_ERROR,
    }
}

/// The key and the value at position `p` of `t` ([`next_pos`], not [`NEXT_ERROR`]): nils at
/// the end.
#[look_inside]
fn next_entry(t: Gc<Table>, p: i64) -> (Value, Value) {
    if p == NEXT_END {
        (Value::Nil, Value::Nil)
    } else if p < NEXT_HASH {
        (Value::Int(p + 1), t.arr.get().items[p as usize].get())
    } else {
        let part = t.hpart.get();
        let j = (p - NEXT_HASH) as usize;
        (part.items[2 * j].get(), part.items[2 * j + 1].get())
    }
}

/// `next(t [, k])` of a table, for one or two results: [`next_pos`] and [`next_entry`].
/// False (nothing done) for another argument or a key not in the table (the library's
/// error).
#[look_inside]
fn fast_next(vm: &mut Vm, func: usize, nargs: usize, nres: i32) -> bool {
    if nargs != 1 && nargs != 2 {
        return false;
    }
    let t = match vm.stack[func + 1] {
        Value::Tab(t) => t,
        _ => return false,
    };
    let p = next_pos(vm, t, func + 2, nargs == 1);
    if p == NEXT_ERROR {
        return false;
    }
    let (k, v) = next_entry(t, p);
    if nres >= 1 {
        vm.stack[func] = k;
    }
    if nres == 2 {
        vm.stack[func + 1] = v;
    }
    vm.top = func + nres as usize;
    true
}

/// [`next_pos`]: positions from here on are entries of the hash part.
const NEXT_HASH: i64 = 1 << 32;
/// [`next_pos`]: the traversal is over.
const NEXT_END: i64 = -1;
/// [`next_pos`]: the key is not in the table (the library raises the error).
const NEXT_ERROR: i64 = -2;

/// The generic `for`'s call (`TForCall`, the iterator in `vm.stack[ra]`, its state and
/// control after it, `n` results from `ra + 3`) of `ipairs`' iterator or of `next`, for one
/// or two loop variables, in the trace: `ipairs` on a table without a metatable reads the
/// array part (a key past it, in a table with a hash part, goes to the library); `next` on
/// a table is [`next_pos`] and the loads of the key and the value. False (nothing done)
/// otherwise.
#[allow(clippy::manual_range_contains)]
#[look_inside]
fn fast_iter(vm: &mut Vm, f: Gc<Native>, ra: usize, n: usize) -> bool {
    if n < 1 || n > 2 {
        return false;
    }
    let kind = native_kind(f);
    let t = match vm.stack[ra + 1] {
        Value::Tab(t) => t,
        _ => return false,
    };
    let (k, v) = if kind == NATIVE_IPAIRS_ITER {
        if t.meta.get().is_some() {
            return false;
        }
        let i = match vm.stack[ra + 2] {
            Value::Int(i) => i.wrapping_add(1),
            _ => return false,
        };
        let v = array_get(t, i);
        if is_nil(v) && (i < 1 || i > t.arr.get().items.len() as i64) && t.nhash.get() != 0 {
            return false;
        }
        (Value::Int(i), v)
    } else if kind == NATIVE_NEXT {
        let p = next_pos(vm, t, ra + 2, false);
        if p == NEXT_ERROR {
            return false;
        }
        next_entry(t, p)
    } else {
        return false;
    };
    if is_nil(v) {
        vm.stack[ra + 3] = Value::Nil;
        if n == 2 {
            vm.stack[ra + 4] = Value::Nil;
        }
    } else {
        vm.stack[ra + 3] = k;
        if n == 2 {
            vm.stack[ra + 4] = v;
        }
    }
    vm.top = ra + 3 + n;
    true
}

/// A call of native `n` in `vm.stack[func]` with `nargs` arguments and `nres` (0 to 3, as
/// each native takes) results, run inline when it is one of a few with simple arguments:
/// `math.floor` and `math.sqrt` of a number, `setmetatable` of a table without a metatable,
/// `type` of any value, `string.sub` and `string.byte` (one byte) of a string and integers,
/// `table.remove` of the last item of a list; `string.find` ([`fast_find`]), `string.match`
/// without captures, `string.gsub` with nothing to replace ([`fast_gsub`]),
/// `string.format` of one `%d`/`%g` ([`format_one`]), `table.concat` ([`concat_list`]),
/// `tonumber` of one argument, `pairs`/`ipairs` ([`fast_pairs`]) and `next`
/// ([`fast_next`]). A trace then has no call where [`simple`]
/// would call the native (and make the optimizer forget what it knows of memory): `type`
/// folds to a constant string under the guard on its argument's tag, and `s:sub(i, i)` is an
/// elidable lookup of the interned one-byte string. False (nothing done) otherwise.
// The codewriter takes no ranges outside `for` loops, so no `contains` here.
#[allow(clippy::manual_range_contains)]
#[look_inside]
fn fast_native(vm: &mut Vm, n: Gc<Native>, func: usize, nargs: usize, nres: i32) -> bool {
    if nres > 3 || nres < 0 {
        return false;
    }
    let kind = native_kind(n);
    if kind == NATIVE_PAIRS || kind == NATIVE_IPAIRS {
        return fast_pairs(vm, n, kind, func, nargs, nres);
    }
    if nres > 2 {
        return false;
    }
    if kind == NATIVE_FIND {
        return fast_find(vm, func, nargs, nres);
    }
    if kind == NATIVE_GSUB {
        return fast_gsub(vm, func, nargs, nres);
    }
    if kind == NATIVE_NEXT {
        return fast_next(vm, func, nargs, nres);
    }
    if nres > 1 {
        return false;
    }
    let r = if kind == NATIVE_FLOOR && nargs == 1 {
        match vm.stack[func + 1] {
            Value::Int(i) => Value::Int(i),
            Value::Num(x) => {
                let f = float_floor(x);
                // As `float_to_int`: an integer when the floor is one.
                if f >= -9223372036854775808.0 && f < 9223372036854775808.0 {
                    Value::Int(f as i64)
                } else {
                    Value::Num(f)
                }
            }
            _ => return false,
        }
    } else if kind == NATIVE_SQRT && nargs == 1 {
        match vm.stack[func + 1] {
            Value::Num(x) => Value::Num(float_sqrt(x)),
            Value::Int(i) => Value::Num(float_sqrt(i as f64)),
            _ => return false,
        }
    } else if kind == NATIVE_SETMETATABLE && nargs == 2 {
        let t = match vm.stack[func + 1] {
            Value::Tab(t) => t,
            _ => return false,
        };
        let m = match vm.stack[func + 2] {
            Value::Tab(m) => m,
            _ => return false,
        };
        // No metatable yet, so none protected by `__metatable`.
        if t.meta.get().is_some() {
            return false;
        }
        t.meta.set(Some(m));
        Value::Tab(t)
    } else if kind == NATIVE_TYPE && nargs == 1 {
        let code = match vm.stack[func + 1] {
            Value::Nil => 0,
            Value::Boolean(_) => 1,
            Value::Int(_) | Value::Num(_) => 2,
            Value::Str(_) => 3,
            Value::Tab(_) => 4,
            Value::LFunc(_) | Value::Builtin(_) => 5,
        };
        Value::Str(type_str(code))
    } else if kind == NATIVE_SUB && (nargs == 2 || nargs == 3) {
        // `string.sub(s, i [, j])` with integer positions: the stdlib's `start_pos` and
        // `end_pos` (0-based start, exclusive end), then the bytes `a..b`.
        let s = match vm.stack[func + 1] {
            Value::Str(s) => s,
            _ => return false,
        };
        let i = match vm.stack[func + 2] {
            Value::Int(i) => i,
            _ => return false,
        };
        let mut j = -1;
        if nargs == 3 {
            j = match vm.stack[func + 3] {
                Value::Int(j) => j,
                _ => return false,
            };
        }
        let len = str_len(s);
        let (a, b) = (sub_start(i, len), sub_end(j, len));
        if a < b {
            if b - a == 1 {
                Value::Str(one_byte_str(s, a))
            } else {
                Value::Str(sub_str(s, a, b))
            }
        } else {
            Value::Str(empty_str())
        }
    } else if kind == NATIVE_CONCAT && nargs >= 1 && nargs <= 2 {
        // `table.concat(t [, sep])` of a table without a metatable whose items `1..#t` are
        // strings and numbers: one allocation that writes nothing else.
        let t = match vm.stack[func + 1] {
            Value::Tab(t) => t,
            _ => return false,
        };
        let mut sep = None;
        if nargs == 2 {
            sep = match vm.stack[func + 2] {
                Value::Str(x) => Some(x),
                _ => return false,
            };
        }
        match concat_list(t, sep) {
            Some(r) => Value::Str(r),
            None => return false,
        }
    } else if kind == NATIVE_MATCH && (nargs == 2 || nargs == 3) {
        // `string.match(s, p [, init])` of a pattern without captures: the whole match, as
        // `string.sub` of the positions [`str_find`] gives (a pattern with captures is the
        // library's: `str_find` says so).
        let s = match vm.stack[func + 1] {
            Value::Str(s) => s,
            _ => return false,
        };
        let p = match vm.stack[func + 2] {
            Value::Str(p) => p,
            _ => return false,
        };
        let mut init = 1;
        if nargs == 3 {
            init = match vm.stack[func + 3] {
                Value::Int(i) => i,
                _ => return false,
            };
        }
        let r = str_find(s, p, init, false);
        if r == FIND_SLOW {
            return false;
        }
        if r == 0 {
            Value::Nil
        } else {
            let (a, b) = ((r & 0xffff_ffff) - 1, r >> 32);
            if b - a >= 2 {
                Value::Str(sub_str(s, a, b))
            } else if b - a == 1 {
                Value::Str(one_byte_str(s, a))
            } else {
                Value::Str(empty_str())
            }
        }
    } else if kind == NATIVE_TONUMBER && nargs == 1 {
        // `tonumber(v)`: a number is itself, a string is its numeral's value or nil
        // (`str_num_kind`, `str_int`, `str_num`: the library's conversion, pure).
        match vm.stack[func + 1] {
            Value::Int(i) => Value::Int(i),
            Value::Num(x) => Value::Num(x),
            Value::Str(st) => {
                let k = str_num_kind(st);
                if k == 1 {
                    Value::Int(str_int(st))
                } else if k == 2 {
                    Value::Num(str_num(st))
                } else {
                    Value::Nil
                }
            }
            _ => Value::Nil,
        }
    } else if kind == NATIVE_FORMAT && nargs == 2 {
        // `string.format(fmt, v)` of one `%d` or `%g` conversion (`format_one`).
        let f = match vm.stack[func + 1] {
            Value::Str(f) => f,
            _ => return false,
        };
        match format_one(vm, f, func + 2) {
            Some(r) => Value::Str(r),
            None => return false,
        }
    } else if kind == NATIVE_TREMOVE && nargs == 1 {
        // `table.remove(t)` of a table whose length is its array part's (no metatable, no
        // hash part), not empty: the library's `remove_at(#t)`, the last item out (the item
        // before it holds a value, so the border stays at the end of the array part).
        let t = match vm.stack[func + 1] {
            Value::Tab(t) => t,
            _ => return false,
        };
        if t.meta.get().is_some() || t.nhash.get() != 0 || t.len.get() == 0 {
            return false;
        }
        let part = t.arr.get();
        let n = t.len.get() as usize - 1;
        // A nil before the last item would move the border further down: the library's.
        if n > 0 && is_nil(part.items[n - 1].get()) {
            return false;
        }
        let r = part.items[n].get();
        part.items[n].set(Value::Nil);
        t.len.set(n as u32);
        r
    } else if kind == NATIVE_BYTE && (nargs == 1 || nargs == 2) {
        // `string.byte(s [, i])`: one byte (`j` is `i`) or none.
        let s = match vm.stack[func + 1] {
            Value::Str(s) => s,
            _ => return false,
        };
        let mut i = 1;
        if nargs == 2 {
            i = match vm.stack[func + 2] {
                Value::Int(i) => i,
                _ => return false,
            };
        }
        let len = str_len(s);
        let a = sub_start(i, len);
        if a < sub_end(i, len) {
            Value::Int(str_byte(s, a))
        } else {
            Value::Nil
        }
    } else {
        return false;
    };
    if nres == 1 {
        vm.stack[func] = r;
    }
    vm.top = func + nres as usize;
    true
}

/// Sets upvalue `u` of the running frame's closure to `v`.
#[look_inside]
fn set_upval(vm: &mut Vm, u: u16, v: Value) {
    let cl = vm.frames.items[vm.frames.n - 1].cl;
    let cell = &cl.upvals[u as usize].v;
    match cell.get() {
        Up::Open(i) => vm.stack[i] = v,
        Up::Shut(_) => cell.set(Up::Shut(v)),
    }
}

/// `simple` result: the instruction needs the plain loop (a metamethod, a Lua function
/// called through `__call`, a type the fast path does not take); nothing was done.
const SLOW: i64 = -3;

/// One instruction of the running frame (at `pc`, registers from `base`) that stays in its
/// frame, run natively on its fast path: string-keyed fields with the instruction's inline
/// caches, globals, table and closure construction, lengths, calls of natives, the `for`
/// preparations. Returns the next pc, [`ERROR`] (the error is in `Vm::pending`) or [`SLOW`].
/// A trace calls it where it would otherwise call [`step`]: one call, with no frame reloaded
/// and no guard on a new prototype and pc after it.
#[dont_look_inside]
fn simple(vm: &mut Vm, proto: &'static Proto, pc: usize, base: usize) -> i64 {
    match simple_op(vm, proto, pc, base) {
        Ok(next) => next,
        Err(e) => {
            vm.pending = Some(e);
            ERROR
        }
    }
}

/// A binary arithmetic or bitwise instruction: its operator, destination and RK operands.
fn binary(op: &Op) -> Option<(ArOp, u16, u16, u16)> {
    let (o, a, b, c) = match *op {
        Op::Add(a, b, c) => (ArOp::Add, a, b, c),
        Op::Sub(a, b, c) => (ArOp::Sub, a, b, c),
        Op::Mul(a, b, c) => (ArOp::Mul, a, b, c),
        Op::Div(a, b, c) => (ArOp::Div, a, b, c),
        Op::Mod(a, b, c) => (ArOp::Mod, a, b, c),
        Op::Pow(a, b, c) => (ArOp::Pow, a, b, c),
        Op::IDiv(a, b, c) => (ArOp::IDiv, a, b, c),
        Op::BAnd(a, b, c) => (ArOp::BAnd, a, b, c),
        Op::BOr(a, b, c) => (ArOp::BOr, a, b, c),
        Op::BXor(a, b, c) => (ArOp::BXor, a, b, c),
        Op::Shl(a, b, c) => (ArOp::Shl, a, b, c),
        Op::Shr(a, b, c) => (ArOp::Shr, a, b, c),
        _ => return None,
    };
    Some((o, a, b, c))
}

/// [`simple`], with errors as Lua errors.
fn simple_op(vm: &mut Vm, proto: &'static Proto, pc: usize, base: usize) -> LResult<i64> {
    let fi = vm.frames.len() - 1;
    // Saved for messages, tracebacks and natives that call Lua.
    vm.frames[fi].pc = pc + 1;
    let next = pc as i64 + 1;
    let k = &proto.consts;
    let ic = &proto.ic[pc];
    let r = |x: u16| base + x as usize;
    // A conditional: the jump after it runs when the comparison gives `kk`.
    let cond = |c: bool, kk: bool| if c == kk { next } else { next + 1 };
    if let Some((op, a, b, c)) = binary(&proto.code[pc]) {
        let (x, y) = (rk(vm, proto, base, b), rk(vm, proto, base, c));
        let v = vm.arith_slow(op, &x, &y, Desc::Rk(b), Desc::Rk(c))?;
        vm.stack[r(a)] = v;
        return Ok(next);
    }
    match proto.code[pc] {
        Op::Unm(a, b) | Op::BNot(a, b) => {
            let op = if matches!(proto.code[pc], Op::Unm(..)) {
                ArOp::Unm
            } else {
                ArOp::BNot
            };
            let x = vm.stack[r(b)];
            let v = vm.arith_slow(op, &x, &x, Desc::Rk(b), Desc::Rk(b))?;
            vm.stack[r(a)] = v;
        }
        Op::Eq(b, c, kk) => {
            let (x, y) = (rk(vm, proto, base, b), rk(vm, proto, base, c));
            return Ok(cond(vm.equals(&x, &y)?, kk));
        }
        Op::Lt(b, c, kk) => {
            let (x, y) = (rk(vm, proto, base, b), rk(vm, proto, base, c));
            return Ok(cond(vm.less_than(&x, &y)?, kk));
        }
        Op::Le(b, c, kk) => {
            let (x, y) = (rk(vm, proto, base, b), rk(vm, proto, base, c));
            return Ok(cond(vm.less_equal(&x, &y)?, kk));
        }
        Op::Concat(a, n) => {
            let v = vm.concat_regs(base, a, n)?;
            vm.stack[r(a)] = v;
        }
        Op::GetTable(a, b, c) => {
            let (t, key) = (vm.stack[r(b)], rk(vm, proto, base, c));
            let v = vm.index(&t, &key, Desc::Rk(b))?;
            vm.stack[r(a)] = v;
        }
        Op::SetTable(a, b, c) => {
            let (t, key, v) = (
                vm.stack[r(a)],
                rk(vm, proto, base, b),
                rk(vm, proto, base, c),
            );
            vm.settable(&t, key, v, Desc::Rk(a))?;
        }
        Op::GetStr(a, b, kk) | Op::SelfOp(a, b, kk) => {
            let obj = vm.stack[r(b)];
            let key = &k[kk as usize];
            let mut v = Value::Nil;
            let (tm, sm) = (vm.tm.index, vm.string_meta);
            if !crate::vm::index_str(&obj, key, &tm, sm, ic, &mut v) {
                v = vm.index(&obj, key, Desc::Rk(b))?;
            }
            if let Op::SelfOp(..) = proto.code[pc] {
                vm.stack[r(a) + 1] = obj;
            }
            vm.stack[r(a)] = v;
        }
        Op::SetStr(a, b, c) => {
            let (t, key, v) = (vm.stack[r(a)], k[b as usize], rk(vm, proto, base, c));
            let done = match t {
                Value::Tab(tb) => tb.set_str_fast_ic(&key, v, &ic.key[0]).is_ok(),
                _ => false,
            };
            if !done {
                vm.settable(&t, key, v, Desc::Rk(a))?;
            }
        }
        Op::GetTabUp(a, u, kk) => {
            let t = upval(vm, u);
            let key = &k[kk as usize];
            let v = match t {
                Value::Tab(tb) => tb.get_str_ic(key, &ic.key[0]),
                _ => Value::Nil,
            };
            let v = if matches!(v, Value::Nil) {
                vm.index(&t, key, Desc::Up(u))?
            } else {
                v
            };
            vm.stack[r(a)] = v;
        }
        Op::SetTabUp(u, kk, c) => {
            let (t, v) = (upval(vm, u), rk(vm, proto, base, c));
            vm.settable(&t, k[kk as usize], v, Desc::Up(u))?;
        }
        Op::NewTable(a, narr, nhash) => {
            vm.stack[r(a)] = Value::Tab(Table::new_gc(narr as usize, nhash as usize));
        }
        Op::SetList(a, n, blk) => vm.set_list(r(a), n, blk),
        Op::MkClosure(a, idx) => {
            let cl = vm.frames[fi].cl;
            let f = vm.make_closure(&cl, proto.protos[idx as usize], base);
            vm.stack[r(a)] = f;
        }
        Op::Len(a, b) => {
            let x = vm.stack[r(b)];
            let v = vm.len_of(&x, Desc::Rk(b))?;
            vm.stack[r(a)] = v;
        }
        Op::CallV(a, b, c) if b != 0 => {
            if !matches!(vm.stack[r(a)], Value::Builtin(_)) {
                return Ok(SLOW);
            }
            // A native runs now; its results are in place when `precall` returns false.
            let pushed = vm.precall(r(a), b as usize - 1, c as i32 - 1, true)?;
            assert!(!pushed, "a native pushes no frame");
        }
        Op::TForCall(a, n) => {
            if !matches!(vm.stack[r(a)], Value::Builtin(_)) {
                return Ok(SLOW);
            }
            for i in 0..3 {
                vm.stack[r(a) + 3 + i] = vm.stack[r(a) + i];
            }
            let pushed = vm.precall(r(a) + 3, 2, n as i32, true)?;
            assert!(!pushed, "a native pushes no frame");
        }
        Op::CloseUps(a) => vm.close_upvals(r(a)),
        Op::ForPrep(a, off) => {
            if vm.for_prep(r(a))? {
                return Ok(next + off as i64);
            }
        }
        _ => return Ok(SLOW),
    }
    Ok(next)
}

/// Closes the open upvalues of stack slots from `level` up (a block's end, a `break`).
#[dont_look_inside]
fn close_upvals(vm: &mut Vm, level: usize) {
    vm.close_upvals(level);
}

/// `vm.stack[dst] = vm.stack[obj][K[k]]` for a string constant `K[k]` through the inline
/// caches of instruction `pc` (a `GetStr` or a `SelfOp`), when no `__index` function applies
/// (`index_str`). False (nothing done) otherwise: [`simple`] then takes the whole semantics.
/// Its own shim, with the operands as arguments: no decoding of the instruction.
#[dont_look_inside]
fn get_field(
    vm: &mut Vm,
    proto: &'static Proto,
    pc: usize,
    dst: usize,
    obj: usize,
    k: u16,
) -> bool {
    let mut v = Value::Nil;
    let (tm, sm) = (vm.tm.index, vm.string_meta);
    let o = vm.stack[obj];
    if !crate::vm::index_str(
        &o,
        &proto.consts[k as usize],
        &tm,
        sm,
        &proto.ic[pc],
        &mut v,
    ) {
        return false;
    }
    vm.stack[dst] = v;
    true
}

/// The `SetStr` at `pc` (`R[a][K[b]] = RK[c]`) through its inline cache, when no
/// `__newindex` can apply. False (nothing done) otherwise.
#[dont_look_inside]
fn set_field(vm: &mut Vm, proto: &'static Proto, pc: usize, base: usize) -> bool {
    let Op::SetStr(a, b, c) = proto.code[pc] else {
        return false;
    };
    let Value::Tab(tb) = vm.stack[base + a as usize] else {
        return false;
    };
    let v = rk(vm, proto, base, c);
    tb.set_str_fast_ic(&proto.consts[b as usize], v, &proto.ic[pc].key[0])
        .is_ok()
}

/// The slot of the string constant `K[k]` in the values of a table of shape `shape`
/// (`Table::hpart`), or -1 if it is no key of that shape. Its arguments are constants in a
/// trace (the shape is promoted), so the tracer calls it once and the trace keeps the number.
#[elidable]
fn shape_slot(shape: &Shape, proto: &Proto, k: u16) -> i64 {
    match proto.consts[k as usize] {
        Value::Str(s) => shape.slot(s).map_or(-1, |i| i as i64),
        _ => -1,
    }
}

/// True for the dictionary shape (`Shape::dict`), which knows no slot.
#[elidable]
fn shape_is_dict(shape: &Shape) -> bool {
    shape.is_dict()
}

/// The slot of `__index` in a metatable of shape `shape`, or -1.
#[elidable]
fn shape_index_slot(shape: &Shape) -> i64 {
    shape.index_slot() as i64
}

/// True if a metatable of shape `shape` has the metamethod name `ev` (`Shape::has_event`).
#[elidable]
fn shape_has_event(shape: &Shape, ev: u8) -> bool {
    shape.has_event(ev)
}

/// True if no metamethod `ev` can apply to `t`: it has no metatable, or one whose promoted
/// shape lacks the name (a dictionary might have it: false).
#[look_inside]
fn lacks_event(t: Gc<Table>, ev: u8) -> bool {
    match t.meta.get() {
        None => true,
        Some(m) => {
            let ms = promote!(m.shape.get());
            !shape_is_dict(ms) && !shape_has_event(ms, ev)
        }
    }
}

/// Whether two strings have the same bytes (after the trace found them to be two objects).
#[elidable]
fn str_eq(a: Gc<LStr>, b: Gc<LStr>) -> bool {
    !(a.interned && b.interned) && a.hash == b.hash && a.bytes == b.bytes
}

/// A string's length.
#[elidable]
fn str_len(s: Gc<LStr>) -> i64 {
    s.bytes.len() as i64
}

/// `vm.stack[dst] = t[K[k]]` for a string constant `K[k]` through table shapes: the table's
/// shape is promoted, which makes the key's slot a constant, and the value is one load; a key
/// that is not there is looked up along the `__index` tables of the metatables, the same way
/// (at most four levels). False (nothing done) when a table met is a dictionary or an
/// `__index` is no table: [`get_field`] then takes over.
#[unroll_safe]
fn field_get(vm: &mut Vm, dst: usize, t: Gc<Table>, proto: &'static Proto, k: u16) -> bool {
    // The native portal keeps the inline caches of `get_field`: finding a slot natively walks
    // the shape's keys (nbody's portal, not compiled, took 16% longer that way).
    if !we_are_jitted() {
        return false;
    }
    let mut t = t;
    let mut level = 0;
    while level < 4 {
        let shape = promote!(t.shape.get());
        if shape_is_dict(shape) {
            return false;
        }
        let slot = shape_slot(shape, proto, k);
        if slot >= 0 {
            let v = t.hpart.get().items[2 * slot as usize + 1].get();
            if !matches!(v, Value::Nil) {
                vm.stack[dst] = v;
                return true;
            }
        }
        // Not here: the metatable's `__index`, read raw.
        let m = match t.meta.get() {
            Some(m) => m,
            None => {
                vm.stack[dst] = Value::Nil;
                return true;
            }
        };
        let ms = promote!(m.shape.get());
        if shape_is_dict(ms) {
            return false;
        }
        let is = shape_index_slot(ms);
        if is < 0 {
            vm.stack[dst] = Value::Nil;
            return true;
        }
        match m.hpart.get().items[2 * is as usize + 1].get() {
            Value::Tab(c) => t = c,
            Value::Nil => {
                vm.stack[dst] = Value::Nil;
                return true;
            }
            _ => return false,
        }
        level += 1;
    }
    false
}

/// `vm.stack[dst] = s[K[k]]` for a string `s` and a string constant `K[k]` (`s:find(...)`):
/// the string metatable's `__index`, read through its promoted shape, and when it is a table
/// (the `string` library), [`field_get`] of the key there. The string metatable is the VM's
/// (`getmetatable("")` returns the same table, so a change of its `__index` is a change of a
/// field that the trace reads through its shape). False (nothing done) when a table met is a
/// dictionary or the `__index` is no table: [`get_field`] then takes over.
#[look_inside]
fn str_field_get(vm: &mut Vm, dst: usize, proto: &'static Proto, k: u16) -> bool {
    if !we_are_jitted() {
        return false;
    }
    let m = match vm.string_meta {
        Some(m) => m,
        None => return false,
    };
    let ms = promote!(m.shape.get());
    if shape_is_dict(ms) {
        return false;
    }
    let is = shape_index_slot(ms);
    if is < 0 {
        return false;
    }
    match m.hpart.get().items[2 * is as usize + 1].get() {
        Value::Tab(t) => field_get(vm, dst, t, proto, k),
        _ => false,
    }
}

/// `t[K[k]] = RK[c]` for a string constant `K[k]` that is a key of `t`'s shape, through the
/// promoted shape: one store, when the key holds a value or no `__newindex` can apply (no
/// metatable, or one whose shape has no such key). A key the shape lacks is a new key
/// ([`field_add`]). False (nothing done) otherwise.
#[look_inside]
fn field_set(vm: &Vm, t: Gc<Table>, proto: &'static Proto, k: u16, base: usize, c: u16) -> bool {
    // Natively, `set_field`'s inline cache (as in `field_get`).
    if !we_are_jitted() {
        return false;
    }
    let v = rk(vm, proto, base, c);
    let shape = promote!(t.shape.get());
    let slot = shape_slot(shape, proto, k);
    if slot < 0 {
        return field_add(vm, t, shape, proto, k, base, c);
    }
    let part = t.hpart.get();
    if let Value::Nil = part.items[2 * slot as usize + 1].get() {
        // A nil field: `__newindex` applies if the metatable has one, which its promoted
        // shape tells (a dictionary might: the plain loop decides).
        if !lacks_event(t, EV_NEWINDEX) {
            return false;
        }
    }
    part.items[2 * slot as usize + 1].set(v);
    true
}

/// `t[K[k]] = v` for a string constant `K[k]` that is no key of `t`'s shape `shape` (promoted,
/// not the dictionary): a new key, when no `__newindex` can apply and `v` is not nil. The
/// new shape is one transition from `shape` (`shape_with`, folded) and the key's entry is
/// the old shape's length (`shape_len`, folded); [`append_str_key`] does what the plain loop
/// does (the hash part's index, masks, a bigger part when it is full) and the trace then
/// stores the shape, the count, the entries' part, the key and the value, which the native
/// call also wrote, so that what the optimizer knows of them is what memory holds (the call
/// says `writes_nothing`). False (nothing done) otherwise.
#[look_inside]
fn field_add(
    vm: &Vm,
    t: Gc<Table>,
    shape: &'static Shape,
    proto: &'static Proto,
    k: u16,
    base: usize,
    c: u16,
) -> bool {
    let v = rk(vm, proto, base, c);
    if let Value::Nil = v {
        return false;
    }
    if !lacks_event(t, EV_NEWINDEX) {
        return false;
    }
    let ns = shape_with(shape, proto, k);
    if shape_is_dict(ns) {
        return false;
    }
    match append_str_key(vm, t, ns, proto, base, c) {
        None => false,
        Some(part) => {
            let j = shape_len(shape) as usize;
            t.shape.set(ns);
            t.nhash.set(j as u32 + 1);
            t.hpart.set(part);
            part.items[2 * j].set(proto.consts[k as usize]);
            part.items[2 * j + 1].set(v);
            true
        }
    }
}

/// The shape of a table of shape `shape` with the string constant `K[k]` appended
/// (`Shape::with`: a transition made once and then kept, so the same for the same
/// arguments); the dictionary shape if that makes no shape (`K[k]` is not interned, too
/// many keys or shapes).
#[elidable]
fn shape_with(shape: &Shape, proto: &Proto, k: u16) -> &'static Shape {
    // SAFETY: every shape is leaked (`Shape::leak`), so a reference to one is good for the
    // thread's life.
    let shape: &'static Shape = unsafe { &*(shape as *const Shape) };
    shape.with(&proto.consts[k as usize])
}

/// The number of keys of `shape`.
#[elidable]
fn shape_len(shape: &Shape) -> i64 {
    shape.key_count() as i64
}

/// `t[K] = RK[c]` for a new string key `K`, the last key of `shape` (`shape_with` of `t`'s
/// current one, which it gives `t`), through [`Table::append_str_key`]: the entries' part,
/// or None (nothing done). It writes the table's shape, count, part and the new entry, which
/// its caller, [`field_add`], stores again right after, and memory that traced code never
/// reads (the hash part's index and masks, a new part's other entries: fresh memory; the
/// native allocation never collects).
#[dont_look_inside(writes_nothing)]
fn append_str_key(
    vm: &Vm,
    t: Gc<Table>,
    shape: &Shape,
    proto: &Proto,
    base: usize,
    c: u16,
) -> Option<Gc<ArrayPart>> {
    // SAFETY: every shape is leaked (`Shape::leak`): a reference to one is good for the
    // thread's life.
    let shape: &'static Shape = unsafe { &*(shape as *const Shape) };
    let k = Value::Str(shape.last_key()?);
    t.append_str_key(&k, rk(vm, proto, base, c), shape)
}

/// Upvalue `u` of the running frame's closure.
#[look_inside]
fn upval(vm: &Vm, u: u16) -> Value {
    let cl = vm.frames.items[vm.frames.n - 1].cl;
    match cl.upvals[u as usize].v.get() {
        Up::Open(i) => vm.stack[i],
        Up::Shut(v) => v,
    }
}

/// Operand `r` (a register or an RK constant) if it is an integer.
#[look_inside]
fn rk_int(vm: &Vm, proto: &Proto, base: usize, r: u16) -> Option<i64> {
    if r >= RK_CONST {
        match &proto.consts[(r - RK_CONST) as usize] {
            Value::Int(x) => Some(*x),
            _ => None,
        }
    } else {
        match &vm.stack[base + r as usize] {
            Value::Int(x) => Some(*x),
            _ => None,
        }
    }
}

/// Operand `r` (a register or an RK constant), whatever it holds.
#[look_inside]
fn rk(vm: &Vm, proto: &Proto, base: usize, r: u16) -> Value {
    if r >= RK_CONST {
        proto.consts[(r - RK_CONST) as usize]
    } else {
        vm.stack[base + r as usize]
    }
}

/// `t[i]` when `i` is a key of the array part's range `1..=items.len()`, also past `len`
/// (a nil slot); nil otherwise. On nil the caller goes on with [`get_int_hash`], which tries
/// the hash part only for a key outside that range and leaves `__index` to the plain loop.
#[look_inside]
fn array_get(t: Gc<Table>, i: i64) -> Value {
    let part = t.arr.get();
    if i >= 1 && i <= part.items.len() as i64 {
        return part.items[(i - 1) as usize].get();
    }
    Value::Nil
}

/// The entry of the integer key `i` in `t`'s hash part (`Table::hpart` holds its value at
/// item `2 * j + 1`), or -1. It only reads, so a trace keeps what it knows of memory across
/// the call (queens' loops lost it at every `t[i]` of a key in the hash part, when the call
/// read and stored the value itself); the trace reads and writes the value.
#[dont_look_inside(writes_nothing)]
fn hash_int_entry(t: Gc<Table>, i: i64) -> i64 {
    t.hash_entry_of_int(i).map_or(-1, |j| j as i64)
}

/// The entry of the string key `k` in `t`'s hash part (`Table::hpart` holds its key and
/// value at items `2j` and `2j + 1`), or -1. It only reads.
#[dont_look_inside(writes_nothing)]
fn str_entry(t: Gc<Table>, k: Gc<LStr>) -> i64 {
    t.hash_entry_of_str(k).map_or(-1, |j| j as i64)
}

/// `#t` of a table with an empty array part and a hash part, without `__len` (the
/// border search of `Table::len`). It only reads.
#[dont_look_inside(writes_nothing)]
fn hash_border(t: Gc<Table>) -> i64 {
    t.len()
}

/// `vm.stack[dst] = t[k]` for a string key that is not a constant (`t[k]`), through the
/// key's entry ([`str_entry`]) and a load, when no `__index` can apply: the key holds a
/// value, or the table has no metatable. False (nothing done) otherwise.
#[look_inside]
fn get_str_key(vm: &mut Vm, dst: usize, t: Gc<Table>, k: Gc<LStr>) -> bool {
    let mut v = Value::Nil;
    let j = str_entry(t, k);
    if j >= 0 {
        v = t.hpart.get().items[2 * j as usize + 1].get();
    }
    if is_nil(v) && t.meta.get().is_some() {
        return false;
    }
    vm.stack[dst] = v;
    true
}

/// `t[k] = v` for a string key that is not a constant and is a key of `t` already (its
/// entry, [`str_entry`]), when no `__newindex` can apply (the key holds a value, or the
/// table has no metatable: `Table::set_str_fast`): one store. A new key of a dictionary
/// is [`dict_key_add`]. False (nothing done) otherwise.
#[look_inside]
fn set_str_key(vm: &Vm, t: Gc<Table>, k: Gc<LStr>, proto: &Proto, base: usize, c: u16) -> bool {
    let v = rk(vm, proto, base, c);
    let j = str_entry(t, k);
    if j < 0 {
        return dict_key_add(vm, t, k, proto, base, c);
    }
    let cell = &t.hpart.get().items[2 * j as usize + 1];
    if is_nil(cell.get()) && t.meta.get().is_some() {
        return false;
    }
    cell.set(v);
    true
}

/// `t[k] = RK[c]` for a string key `k` that is no key of `t` (json's `obj[k] = v` while
/// decoding), when `t` has the dictionary shape (it stays a dictionary), no `__newindex` can
/// apply and the value is not nil: [`append_dict_key`] does what the plain loop does, and
/// the trace stores again the count, the entries' part, the key and the value, which the
/// call also wrote (it says `writes_nothing`, as `append_str_key`). False (nothing done)
/// otherwise: a table with a shape gets its new key from the plain loop.
#[look_inside]
fn dict_key_add(vm: &Vm, t: Gc<Table>, k: Gc<LStr>, proto: &Proto, base: usize, c: u16) -> bool {
    let v = rk(vm, proto, base, c);
    if is_nil(v) || !lacks_event(t, EV_NEWINDEX) {
        return false;
    }
    let shape = promote!(t.shape.get());
    if !shape_is_dict(shape) {
        return false;
    }
    let n = t.nhash.get() as usize;
    match append_dict_key(vm, t, k, proto, base, c) {
        None => false,
        Some(part) => {
            t.nhash.set(n as u32 + 1);
            t.hpart.set(part);
            part.items[2 * n].set(Value::Str(k));
            part.items[2 * n + 1].set(v);
            true
        }
    }
}

/// `t[k] = RK[c]` for a new string key of a dictionary, through
/// [`Table::append_dict_key`]: the entries' part, or None (nothing done). Its writes are
/// those of [`append_str_key`] but the shape's, which stays the dictionary.
#[dont_look_inside(writes_nothing)]
fn append_dict_key(
    vm: &Vm,
    t: Gc<Table>,
    k: Gc<LStr>,
    proto: &Proto,
    base: usize,
    c: u16,
) -> Option<Gc<ArrayPart>> {
    t.append_dict_key(&Value::Str(k), rk(vm, proto, base, c))
}

/// `vm.stack[dst] = t[i]` for an integer key the array part does not hold a value for (a key
/// in the hash part, as `t[0]`, or a nil slot of the array part), when no metamethod can
/// apply: the key holds a value or the table has no metatable. False (nothing done)
/// otherwise. A key of the array part's range is never searched in the hash part, which
/// holds no value for it (`crate::table`): its value is nil, with no call.
#[look_inside]
fn get_int_hash(vm: &mut Vm, dst: usize, t: Gc<Table>, i: i64) -> bool {
    let mut v = Value::Nil;
    // An empty hash part (`nhash`, one load: binarytrees' `tree[1]` of a leaf `{}`) holds no
    // key: no call.
    if (i < 1 || i > t.arr.get().items.len() as i64) && t.nhash.get() != 0 {
        let j = hash_int_entry(t, i);
        if j >= 0 {
            v = t.hpart.get().items[2 * j as usize + 1].get();
        }
    }
    if let Value::Nil = v {
        if t.meta.get().is_some() {
            return false;
        }
    }
    vm.stack[dst] = v;
    true
}

/// `t[i] = v` for an integer key of `t`'s hash part that holds a value, in place. False
/// (nothing done) otherwise, for a key the hash part lacks or holds nil and for a nil `v`:
/// [`set_int_hash`] then sets the key. (An entry whose value is nil may have a key that
/// belongs to the array part now, or the key after the array part's last item, which must
/// go there: `Table::set_int` decides.)
#[look_inside]
fn hash_set(t: Gc<Table>, i: i64, v: Value) -> bool {
    if let Value::Nil = v {
        return false;
    }
    let j = hash_int_entry(t, i);
    if j < 0 {
        return false;
    }
    let part = t.hpart.get();
    if let Value::Nil = part.items[2 * j as usize + 1].get() {
        return false;
    }
    part.items[2 * j as usize + 1].set(v);
    true
}

/// The concatenation of registers `ra..ra + n`, strings and numbers (`Concat` without
/// metamethods): a new string. It writes no memory that traced code reads (the string is
/// fresh memory, and the native allocation never collects).
#[dont_look_inside(writes_nothing)]
fn concat_regs(vm: &Vm, ra: usize, n: usize) -> Gc<LStr> {
    crate::vm::concat_plain(&vm.stack[ra..ra + n])
}

/// A new table with room for `narr` array items and `nhash` hash entries (`NewTable`). It
/// writes no memory that traced code reads, so a trace keeps what it knows of memory across
/// `{}` (the call to [`simple`] it replaces writes everything): the new object and the parts
/// it owns are fresh memory, and allocation collects nothing (the native `Gc::new` never
/// collects; only safe points do). Not elidable: two `{}` are two tables, and the optimizer
/// neither merges nor drops a residual call.
#[dont_look_inside(writes_nothing)]
fn new_table(narr: usize, nhash: usize) -> Gc<Table> {
    Table::new_gc(narr, nhash)
}

/// `t[i] = rk(c)` for an integer key outside the array part, when no metamethod can apply
/// (`Table::set_int_fast`). False (nothing done) otherwise, and for a nil value.
#[dont_look_inside]
fn set_int_hash(vm: &mut Vm, proto: &Proto, base: usize, t: Gc<Table>, i: i64, c: u16) -> bool {
    let v = rk(vm, proto, base, c);
    t.set_int_fast(i, v).is_ok()
}

/// `t[i] = v` in the array part when no metamethod can apply (as `Table::set_int_fast`):
/// `i` is a key up to `len` that holds a value or the table has no metatable, or a key past
/// `len` in the array part's range (a nil slot) and the table has no metatable: the store
/// raises `len` to `i` (the hash part holds no value for a key of that range, so there is
/// nothing to move out of it). False (nothing done) otherwise, and for a nil `v`; also when
/// `i` is the part's last slot and the hash part has entries, as the key after it may be one
/// that must move to the array part (`Table::set_int`'s `migrate`).
#[look_inside]
fn array_set(t: Gc<Table>, i: i64, v: Value) -> bool {
    if let Value::Nil = v {
        return false;
    }
    let n = t.len.get() as i64;
    let part = t.arr.get();
    if i >= 1 && i <= n {
        if t.meta.get().is_some() {
            if let Value::Nil = part.items[(i - 1) as usize].get() {
                return false;
            }
        }
        part.items[(i - 1) as usize].set(v);
        return true;
    }
    let cap = part.items.len() as i64;
    if i > n && i <= cap && t.meta.get().is_none() && (t.nhash.get() == 0 || i < cap) {
        part.items[(i - 1) as usize].set(v);
        t.len.set(i as u32);
        return true;
    }
    false
}

/// [`bitwise`]'s operators.
const BAND: u8 = 0;
const BOR: u8 = 1;
const BXOR: u8 = 2;

/// `R[a] = RK[b] op RK[c]` for a bitwise `op` ([`BAND`], [`BOR`], [`BXOR`]) of two integers.
/// False (nothing done) otherwise: floats with an integral value, strings and metamethods go
/// to [`simple`].
#[look_inside]
#[allow(clippy::too_many_arguments)]
fn bitwise(vm: &mut Vm, proto: &Proto, base: usize, op: u8, a: u16, b: u16, c: u16) -> bool {
    if let Some(x) = rk_int(vm, proto, base, b) {
        if let Some(y) = rk_int(vm, proto, base, c) {
            let r = if op == BAND {
                x & y
            } else if op == BOR {
                x | y
            } else {
                x ^ y
            };
            set_int(vm, base + a as usize, r);
            return true;
        }
    }
    false
}

/// Operand `r` as a float if it is a number (an integer converted as Lua's arithmetic
/// converts it).
#[look_inside]
fn rk_fa(vm: &Vm, proto: &Proto, base: usize, r: u16) -> Option<f64> {
    if let Some(x) = rk_num(vm, proto, base, r) {
        return Some(x);
    }
    if let Some(i) = rk_int(vm, proto, base, r) {
        return Some(i as f64);
    }
    None
}

/// Stores integer `x` in stack slot `i`: the payload alone when the slot holds an integer
/// already (the trace then stores no tag), the whole value otherwise.
#[look_inside]
fn set_int(vm: &mut Vm, i: usize, x: i64) {
    if let Value::Int(d) = &mut vm.stack[i] {
        *d = x;
    } else {
        vm.stack[i] = Value::Int(x);
    }
}

/// Stores float `x` in stack slot `i`, as [`set_int`].
#[look_inside]
fn set_num(vm: &mut Vm, i: usize, x: f64) {
    if let Value::Num(d) = &mut vm.stack[i] {
        *d = x;
    } else {
        vm.stack[i] = Value::Num(x);
    }
}

/// Operand `r` if it is a float.
#[look_inside]
fn rk_num(vm: &Vm, proto: &Proto, base: usize, r: u16) -> Option<f64> {
    if r >= RK_CONST {
        match &proto.consts[(r - RK_CONST) as usize] {
            Value::Num(x) => Some(*x),
            _ => None,
        }
    } else {
        match &vm.stack[base + r as usize] {
            Value::Num(x) => Some(*x),
            _ => None,
        }
    }
}

/// Operand `r` as a float if it is a float or an integer that converts exactly (|i| <= 2^53):
/// for arithmetic and comparisons with one float operand, where Lua converts the integer.
// The codewriter takes no ranges outside `for` loops, so no `contains` here.
#[allow(clippy::manual_range_contains)]
#[look_inside]
fn rk_f(vm: &Vm, proto: &Proto, base: usize, r: u16) -> Option<f64> {
    if let Some(x) = rk_num(vm, proto, base, r) {
        return Some(x);
    }
    if let Some(i) = rk_int(vm, proto, base, r) {
        if i >= -(1i64 << 53) && i <= (1i64 << 53) {
            return Some(i as f64);
        }
    }
    None
}

/// The portal: runs frames until the frame count drops to `stop`; returns [`DONE`] or
/// [`ERROR`].
// One arm per instruction, each falling through to the generic path when its fast path does
// not apply: an arm that is a single `if` stays one.
// Comparisons stay comparisons (the codewriter traces them; it has no `RangeInclusive`).
#[allow(clippy::collapsible_match, clippy::manual_range_contains)]
#[jit::interpreter(greens(pc, proto), reds(vm, base, stop))]
pub fn portal(vm: &mut Vm, proto: &'static Proto, pc: usize, base: usize, stop: usize) -> i64 {
    loop {
        jit_merge_point!();
        match proto.code[pc] {
            Op::Jmp(close, off) => {
                if close != NO_CLOSE {
                    close_upvals(vm, base + close as usize);
                }
                pc = (pc as i64 + 1 + off as i64) as usize;
                if off < 0 {
                    can_enter_jit!();
                }
                continue;
            }
            Op::TestJ(a, k) => {
                let t = match &vm.stack[base + a as usize] {
                    Value::Nil => false,
                    Value::Boolean(b) => *b,
                    _ => true,
                };
                if t == k {
                    pc += 1;
                } else {
                    pc += 2;
                }
                continue;
            }
            Op::Add(a, b, c) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        set_int(vm, base + a as usize, x.wrapping_add(y));
                        pc += 1;
                        continue;
                    }
                }
                if let Some(x) = rk_fa(vm, proto, base, b) {
                    if let Some(y) = rk_fa(vm, proto, base, c) {
                        set_num(vm, base + a as usize, x + y);
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::Sub(a, b, c) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        set_int(vm, base + a as usize, x.wrapping_sub(y));
                        pc += 1;
                        continue;
                    }
                }
                if let Some(x) = rk_fa(vm, proto, base, b) {
                    if let Some(y) = rk_fa(vm, proto, base, c) {
                        set_num(vm, base + a as usize, x - y);
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::Mul(a, b, c) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        set_int(vm, base + a as usize, x.wrapping_mul(y));
                        pc += 1;
                        continue;
                    }
                }
                if let Some(x) = rk_fa(vm, proto, base, b) {
                    if let Some(y) = rk_fa(vm, proto, base, c) {
                        set_num(vm, base + a as usize, x * y);
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::Div(a, b, c) => {
                // `/` always divides floats.
                if let Some(x) = rk_fa(vm, proto, base, b) {
                    if let Some(y) = rk_fa(vm, proto, base, c) {
                        set_num(vm, base + a as usize, x / y);
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::Unm(a, b) => {
                if let Value::Int(x) = vm.stack[base + b as usize] {
                    set_int(vm, base + a as usize, 0i64.wrapping_sub(x));
                    pc += 1;
                    continue;
                }
                if let Value::Num(x) = vm.stack[base + b as usize] {
                    set_num(vm, base + a as usize, -x);
                    pc += 1;
                    continue;
                }
            }
            Op::Not(a, b) => {
                let t = match vm.stack[base + b as usize] {
                    Value::Nil => false,
                    Value::Boolean(b) => b,
                    _ => true,
                };
                vm.stack[base + a as usize] = Value::Boolean(!t);
                pc += 1;
                continue;
            }
            Op::Concat(a, n) => {
                // Strings and numbers only (no `__concat`): one allocation.
                let ra = base + a as usize;
                let mut k = 0;
                while k < n as usize {
                    match vm.stack[ra + k] {
                        Value::Str(_) | Value::Int(_) | Value::Num(_) => k += 1,
                        _ => break,
                    }
                }
                if k == n as usize {
                    vm.stack[ra] = Value::Str(concat_regs(vm, ra, k));
                    pc += 1;
                    continue;
                }
            }
            Op::NewTable(a, narr, nhash) => {
                vm.stack[base + a as usize] = Value::Tab(new_table(narr as usize, nhash as usize));
                pc += 1;
                continue;
            }
            Op::MkClosure(a, idx) => {
                // A closure that captures no register of this frame (its upvalues are this
                // closure's own): an allocation that writes nothing else.
                if captures_no_register(proto, idx) {
                    let cl = vm.frames.items[vm.frames.n - 1].cl;
                    vm.stack[base + a as usize] = Value::LFunc(new_closure(cl, proto, idx));
                    pc += 1;
                    continue;
                }
            }
            Op::TForCall(a, n) => {
                // The generic `for`'s call of `ipairs`' iterator or `next`, in the trace.
                if let Value::Builtin(native) = vm.stack[base + a as usize] {
                    let f = promote!(native);
                    if fast_iter(vm, f, base + a as usize, n as usize) {
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::SetList(a, n, blk) => {
                // `{x, y}`: the items go to the array part that `NewTable` sized for them,
                // as traced stores. An item `array_set` cannot store (nil, no room) leaves
                // the whole list to `simple`, which stores every item again: the stores done
                // here are the first ones it does, of the same values, so it ends the same.
                // With `b == 0` (`{f()}`, `{...}`), the count is up to `vm.top`, which the
                // call or `Vararg` before set; the trace guards on it.
                let ra = base + a as usize;
                let mut count = n as i64;
                if n == 0 {
                    count = promote!(vm.top as i64 - ra as i64 - 1);
                }
                if count >= 0 && count <= SET_LIST_INLINE {
                    if let Value::Tab(t) = vm.stack[ra] {
                        let start = blk as i64 * crate::proto::FIELDS_PER_FLUSH as i64;
                        let mut i = 1;
                        while i <= count && array_set(t, start + i, vm.stack[ra + i as usize]) {
                            i += 1;
                        }
                        if i > count {
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::LoadK(a, kk) => {
                vm.stack[base + a as usize] = proto.consts[kk as usize];
                pc += 1;
                continue;
            }
            Op::LoadBool(a, b) => {
                vm.stack[base + a as usize] = Value::Boolean(b);
                pc += 1;
                continue;
            }
            Op::LoadFalseSkip(a) => {
                vm.stack[base + a as usize] = Value::Boolean(false);
                pc += 2;
                continue;
            }
            Op::LoadNil(a, n) => {
                for i in 0..n {
                    vm.stack[base + (a + i) as usize] = Value::Nil;
                }
                pc += 1;
                continue;
            }
            Op::SetUpval(a, u) => {
                set_upval(vm, u, vm.stack[base + a as usize]);
                pc += 1;
                continue;
            }
            Op::TForLoop(a, off) => {
                let ra = base + a as usize;
                if let Value::Nil = vm.stack[ra + 3] {
                    pc += 1;
                    continue;
                }
                vm.stack[ra + 2] = vm.stack[ra + 3];
                pc = (pc as i64 + 1 + off as i64) as usize;
                can_enter_jit!();
                continue;
            }
            Op::Mod(a, b, c) => {
                // Integers: Lua's floored remainder (the sign of the divisor); a zero
                // divisor (an error) and floats go to the plain loop.
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        if y != 0 {
                            // `MIN % -1` overflows in Rust; its remainder is 0.
                            let r = if y == -1 { 0 } else { x % y };
                            let m = if r != 0 && (r ^ y) < 0 { r + y } else { r };
                            set_int(vm, base + a as usize, m);
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::BAnd(a, b, c) => {
                if bitwise(vm, proto, base, BAND, a, b, c) {
                    pc += 1;
                    continue;
                }
            }
            Op::BOr(a, b, c) => {
                if bitwise(vm, proto, base, BOR, a, b, c) {
                    pc += 1;
                    continue;
                }
            }
            Op::BXor(a, b, c) => {
                if bitwise(vm, proto, base, BXOR, a, b, c) {
                    pc += 1;
                    continue;
                }
            }
            Op::ForPrep(a, off) => {
                // The common integer loop, as the plain loop runs it inline: integer start,
                // limit and step, the step positive, a count that fits (`Vm::for_prep`
                // raises the errors and takes the rest).
                if let Some(i) = rk_int(vm, proto, base, a) {
                    if let Some(l) = rk_int(vm, proto, base, a + 1) {
                        if let Some(st) = rk_int(vm, proto, base, a + 2) {
                            if st > 0 {
                                if i > l {
                                    pc = (pc as i64 + 1 + off as i64) as usize;
                                    continue;
                                }
                                let span = l.wrapping_sub(i);
                                if span >= 0 {
                                    let ra = base + a as usize;
                                    set_int(vm, ra + 1, if st == 1 { span } else { span / st });
                                    vm.stack[ra + 3] = Value::Int(i);
                                    pc += 1;
                                    continue;
                                }
                            }
                        }
                    }
                }
            }
            Op::Eq(b, c, k) => {
                // Two integers, two floats, nil or a boolean on one side; anything else
                // (strings, tables, mixed numbers, `__eq`) goes to `simple`.
                // The jump after the comparison runs when it gives `k`.
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        pc += if (x == y) == k { 1 } else { 2 };
                        continue;
                    }
                }
                if let Some(x) = rk_num(vm, proto, base, b) {
                    if let Some(y) = rk_num(vm, proto, base, c) {
                        pc += if (x == y) == k { 1 } else { 2 };
                        continue;
                    }
                }
                // nil equals only nil, and a boolean only itself (no `__eq` applies).
                let (x, y) = (rk(vm, proto, base, b), rk(vm, proto, base, c));
                let (xn, yn) = (matches!(x, Value::Nil), matches!(y, Value::Nil));
                if xn || yn {
                    pc += if (xn == yn) == k { 1 } else { 2 };
                    continue;
                }
                if let Value::Boolean(p) = x {
                    let e = match y {
                        Value::Boolean(q) => p == q,
                        _ => false,
                    };
                    pc += if e == k { 1 } else { 2 };
                    continue;
                }
                // Two tables: the same object, or two without `__eq`.
                if let Value::Tab(p) = x {
                    if let Value::Tab(q) = y {
                        if Gc::ptr_eq(p, q) {
                            pc += if k { 1 } else { 2 };
                            continue;
                        }
                        if lacks_event(p, EV_EQ) && lacks_event(q, EV_EQ) {
                            pc += if k { 2 } else { 1 };
                            continue;
                        }
                    }
                }
                // Two strings: the same object, or the same bytes.
                if let Value::Str(p) = x {
                    if let Value::Str(q) = y {
                        let e = if Gc::ptr_eq(p, q) { true } else { str_eq(p, q) };
                        pc += if e == k { 1 } else { 2 };
                        continue;
                    }
                }
            }
            Op::Lt(b, c, k) => {
                // Two integers, or two numbers of which an integer converts exactly.
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        pc += if (x < y) == k { 1 } else { 2 };
                        continue;
                    }
                }
                if let Some(x) = rk_f(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        pc += if (x < y) == k { 1 } else { 2 };
                        continue;
                    }
                }
            }
            Op::Le(b, c, k) => {
                // Two integers, or two numbers of which an integer converts exactly.
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        pc += if (x <= y) == k { 1 } else { 2 };
                        continue;
                    }
                }
                if let Some(x) = rk_f(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        pc += if (x <= y) == k { 1 } else { 2 };
                        continue;
                    }
                }
            }
            Op::Len(a, b) => {
                // A string's length; a table's array count without `__len`, when that is its
                // border (items, or nothing in the hash part either).
                if let Value::Str(st) = vm.stack[base + b as usize] {
                    vm.stack[base + a as usize] = Value::Int(str_len(st));
                    pc += 1;
                    continue;
                }
                if let Value::Tab(t) = vm.stack[base + b as usize] {
                    if lacks_event(t, EV_LEN) {
                        let n = t.len.get();
                        if n > 0 || t.nhash.get() == 0 {
                            vm.stack[base + a as usize] = Value::Int(n as i64);
                            pc += 1;
                            continue;
                        }
                        // An empty array part and a hash part: the border is searched there.
                        vm.stack[base + a as usize] = Value::Int(hash_border(t));
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::Mov(a, b) => {
                // Values are `Copy`: a move of any value is a copy of its tag and payload.
                vm.stack[base + a as usize] = vm.stack[base + b as usize];
                pc += 1;
                continue;
            }
            Op::LoadInt(a, v) => {
                vm.stack[base + a as usize] = Value::Int(v as i64);
                pc += 1;
                continue;
            }
            Op::GetTable(a, b, c) => {
                if let Value::Tab(t) = vm.stack[base + b as usize] {
                    if let Some(i) = rk_int(vm, proto, base, c) {
                        let v = array_get(t, i);
                        match v {
                            Value::Nil => {
                                if get_int_hash(vm, base + a as usize, t, i) {
                                    pc += 1;
                                    continue;
                                }
                            }
                            _ => {
                                vm.stack[base + a as usize] = v;
                                pc += 1;
                                continue;
                            }
                        }
                    }
                    if let Value::Str(key) = rk(vm, proto, base, c) {
                        if get_str_key(vm, base + a as usize, t, key) {
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::SetTable(a, b, c) => {
                if let Value::Tab(t) = vm.stack[base + a as usize] {
                    if let Some(i) = rk_int(vm, proto, base, b) {
                        let v = rk(vm, proto, base, c);
                        if array_set(t, i, v) || hash_set(t, i, v) {
                            pc += 1;
                            continue;
                        }
                        if set_int_hash(vm, proto, base, t, i, c) {
                            pc += 1;
                            continue;
                        }
                    }
                    if let Value::Str(key) = rk(vm, proto, base, b) {
                        if set_str_key(vm, t, key, proto, base, c) {
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::GetUpval(a, u) => {
                vm.stack[base + a as usize] = upval(vm, u);
                pc += 1;
                continue;
            }
            Op::CallV(a, b, c) => {
                let func = base + a as usize;
                // `b == 0`: the arguments go up to `vm.top` (`f(g(x))`, `f(...)`).
                let mut nargs = b as usize;
                if b == 0 {
                    nargs = promote!(vm.top - func);
                }
                nargs -= 1;
                if let Value::Builtin(native) = vm.stack[func] {
                    let n = promote!(native);
                    if fast_native(vm, n, func, nargs, c as i32 - 1) {
                        pc += 1;
                        continue;
                    }
                }
                // A Lua function: the portal follows the call into it (the trace inlines it).
                if let Value::LFunc(f) = vm.stack[func] {
                    let p = f.proto;
                    let nres = c as i32 - 1;
                    let mut nb = call_fast(vm, f, func, nargs, nres, pc + 1);
                    if nb == 0 {
                        nb = call_lua(vm, func, nargs, nres, pc + 1);
                    }
                    if nb != 0 {
                        proto = p;
                        pc = 0;
                        base = nb;
                        // A function entry: recursion is a loop through it.
                        can_enter_jit!();
                        continue;
                    }
                }
            }
            Op::GetTabUp(a, u, kk) => {
                // A global: a field of the `_ENV` table.
                if let Value::Tab(t) = upval(vm, u) {
                    if field_get(vm, base + a as usize, t, proto, kk) {
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::SetTabUp(u, kk, c) => {
                if let Value::Tab(t) = upval(vm, u) {
                    if field_set(vm, t, proto, kk, base, c) {
                        pc += 1;
                        continue;
                    }
                }
            }
            Op::GetStr(a, b, kk) => {
                if let Value::Tab(t) = vm.stack[base + b as usize] {
                    if field_get(vm, base + a as usize, t, proto, kk) {
                        pc += 1;
                        continue;
                    }
                }
                let done = get_field(vm, proto, pc, base + a as usize, base + b as usize, kk);
                if done {
                    pc += 1;
                    continue;
                }
            }
            Op::SelfOp(a, b, kk) => {
                // `R[a+1] = R[b]` first: `get_field` then reads the object there.
                vm.stack[base + a as usize + 1] = vm.stack[base + b as usize];
                if let Value::Tab(t) = vm.stack[base + b as usize] {
                    if field_get(vm, base + a as usize, t, proto, kk) {
                        pc += 1;
                        continue;
                    }
                }
                // `s:find(...)`: the method from the string metatable's `__index` table.
                if let Value::Str(_) = vm.stack[base + b as usize] {
                    if str_field_get(vm, base + a as usize, proto, kk) {
                        pc += 1;
                        continue;
                    }
                }
                if get_field(vm, proto, pc, base + a as usize, base + a as usize + 1, kk) {
                    pc += 1;
                    continue;
                }
            }
            Op::SetStr(a, b, c) => {
                if let Value::Tab(t) = vm.stack[base + a as usize] {
                    if field_set(vm, t, proto, b, base, c) {
                        pc += 1;
                        continue;
                    }
                }
                let done = set_field(vm, proto, pc, base);
                if done {
                    pc += 1;
                    continue;
                }
            }
            Op::TailCall(a, b) => {
                let func = base + a as usize;
                let mut nargs = b as usize;
                if b == 0 {
                    nargs = promote!(vm.top - func);
                }
                nargs -= 1;
                if let Value::LFunc(f) = vm.stack[func] {
                    let p = f.proto;
                    if tail_fast(vm, f, base, func, nargs) || tail_call_lua(vm, base, func, nargs) {
                        proto = p;
                        pc = 0;
                        can_enter_jit!();
                        continue;
                    }
                }
                if let Value::Builtin(native) = vm.stack[func] {
                    // `return setmetatable({...}, C)`: a native that gives exactly one value,
                    // run inline as `fast_native` runs a call, then the return of that value.
                    let n = promote!(native);
                    if native_one_result(n) && fast_native(vm, n, func, nargs, 1) {
                        let mut r = return_fast(vm, base, func, 1, stop);
                        if r == NOT_FAST {
                            r = return_lua(vm, base, func, 1, stop);
                        }
                        if r < 0 {
                            return r;
                        }
                        proto = frame_proto(vm);
                        pc = frame_pc(vm);
                        base = frame_base(vm);
                        continue;
                    }
                    // `return f(...)` of a native: its call, then the return of its results.
                    let r = tail_native(vm, pc, base, func, nargs, stop);
                    if r < 0 {
                        return r;
                    }
                    proto = frame_proto(vm);
                    pc = frame_pc(vm);
                    base = frame_base(vm);
                    continue;
                }
            }
            Op::Ret(a, b) => {
                let from = base + a as usize;
                // `b == 0`: the values go up to `vm.top` (`return x, g()`, `return ...`).
                let mut n = b as usize;
                if b == 0 {
                    n = promote!(vm.top - from + 1);
                }
                n -= 1;
                let mut r = return_fast(vm, base, from, n, stop);
                if r == NOT_FAST {
                    r = return_lua(vm, base, from, n, stop);
                }
                if r < 0 {
                    return r;
                }
                proto = frame_proto(vm);
                pc = frame_pc(vm);
                base = frame_base(vm);
                continue;
            }
            Op::ForStep(a, off) => {
                let ra = base + a as usize;
                // The float loop: index, limit and step are floats after ForPrep.
                if let Value::Num(step) = &vm.stack[ra + 2] {
                    let step = *step;
                    if let Value::Num(limit) = &vm.stack[ra + 1] {
                        let limit = *limit;
                        if let Value::Num(i) = &vm.stack[ra] {
                            let next = *i + step;
                            let go = if step > 0.0 {
                                next <= limit
                            } else {
                                limit <= next
                            };
                            if !go {
                                pc += 1;
                                continue;
                            }
                            if let Value::Num(v) = &mut vm.stack[ra + 3] {
                                *v = next;
                                if let Value::Num(x) = &mut vm.stack[ra] {
                                    *x = next;
                                }
                                pc = (pc as i64 + 1 + off as i64) as usize;
                                can_enter_jit!();
                                continue;
                            }
                        }
                    }
                }
                if let Value::Int(step) = &vm.stack[ra + 2] {
                    let step = *step;
                    if let Value::Int(count) = &vm.stack[ra + 1] {
                        let count = *count;
                        if count <= 0 {
                            pc += 1;
                            continue;
                        }
                        if let Value::Int(i) = &vm.stack[ra] {
                            let next = (*i).wrapping_add(step);
                            if let Value::Int(v) = &mut vm.stack[ra + 3] {
                                *v = next;
                                if let Value::Int(n) = &mut vm.stack[ra + 1] {
                                    *n = count - 1;
                                }
                                if let Value::Int(i) = &mut vm.stack[ra] {
                                    *i = next;
                                }
                                pc = (pc as i64 + 1 + off as i64) as usize;
                                can_enter_jit!();
                                continue;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        // An operator of a table with a metamethod in Lua: the portal follows the call.
        let nb = meta_call(vm, proto, pc, base);
        if nb != 0 {
            proto = frame_proto(vm);
            pc = 0;
            base = nb;
            continue;
        }
        // One instruction on its native path, in its frame.
        let next = simple(vm, proto, pc, base);
        if next >= 0 {
            pc = next as usize;
            continue;
        }
        if next == ERROR {
            return ERROR;
        }
        let r = step(vm, pc, stop);
        if r < 0 {
            return r;
        }
        proto = frame_proto(vm);
        pc = frame_pc(vm);
        base = frame_base(vm);
    }
}
