//! The JIT portal and the run modes (`--no-jit`, `--jitcode`, JIT on, `--jit-param`).
//!
//! The portal's greens are the running prototype and the pc; its reds are the VM, the frame's
//! base and the frame depth to stop at. The hot, simple ops (integer and float `Add`, `Sub`,
//! `Mul`, `Lt`, `Le`, `Test`, `Mov` and `LoadInt` of numbers, jumps, the `for` loop) run inline
//! in the portal, where the
//! codewriter traces them; every other instruction goes through [`step`], a
//! `#[dont_look_inside]` call that runs one instruction of the plain dispatch loop (calls,
//! returns, metamethods, allocation, strings, errors). After such a step the portal reloads
//! the frame (it may have changed: a call pushes one, a return pops one).

use crate::proto::{Op, Proto, NO_CLOSE, RK_CONST};
use crate::table::Table;
use crate::value::Value;
use crate::vm::Vm;
use crate::Mode;
use meta_jit::hints as jit;
use meta_jit::hints::*;

/// `portal` result: the frame at the stop depth returned.
pub const DONE: i64 = -2;
/// `portal` result: an error is waiting in `Vm::pending`.
pub const ERROR: i64 = -1;

/// Applies the command line's JIT mode and parameters to the portal's driver.
pub fn configure(mode: Mode, params: &[String]) -> Result<(), String> {
    for p in params {
        portal::with_driver(|d| d.set_params(p)).map_err(|e| format!("--jit-param {p}: {e}"))?;
    }
    if mode == Mode::NoJit {
        portal::with_driver(|d| d.set_params("off")).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// True for an instruction the portal runs inline (when its operands have the right types).
fn portal_inline(op: &Op) -> bool {
    matches!(
        op,
        Op::Jmp(NO_CLOSE, _)
            | Op::TestJ(..)
            | Op::Add(..)
            | Op::Sub(..)
            | Op::Mul(..)
            | Op::Mod(..)
            | Op::Eq(..)
            | Op::Lt(..)
            | Op::Le(..)
            | Op::Mov(..)
            | Op::LoadInt(..)
            | Op::ForStep(..)
            | Op::GetTable(..)
            | Op::SetTable(..)
    )
}

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
    match vm.run(stop, true) {
        Err(e) => {
            vm.pending = Some(e);
            ERROR
        }
        Ok(()) if vm.frames.len() <= stop => DONE,
        Ok(()) => 0,
    }
}

/// The running frame's prototype.
#[dont_look_inside]
fn frame_proto(vm: &Vm) -> &'static Proto {
    vm.frames[vm.frames.len() - 1].cl.proto
}

/// The running frame's pc.
#[dont_look_inside]
fn frame_pc(vm: &Vm) -> usize {
    vm.frames[vm.frames.len() - 1].pc
}

/// The running frame's base.
#[dont_look_inside]
fn frame_base(vm: &Vm) -> usize {
    vm.frames[vm.frames.len() - 1].base
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

/// `t[i]` when `i` is a key of the array part (nil otherwise, also for a nil item: the
/// caller then leaves it to the plain loop, which tries `__index`).
#[look_inside]
fn array_get(t: Gc<Table>, i: i64) -> Value {
    let n = t.len.get() as i64;
    if i >= 1 && i <= n {
        return t.arr.get().items[(i - 1) as usize].get();
    }
    Value::Nil
}

/// `vm.stack[dst] = t[i]` for an integer key the array part does not hold (a key in the hash
/// part, as `t[0]`), when no metamethod can apply: the key holds a value or the table has no
/// metatable. False (nothing done) otherwise. Natively: a hash lookup the trace calls instead
/// of leaving the loop for the plain loop's `step`.
#[dont_look_inside]
fn get_int_hash(vm: &mut Vm, dst: usize, t: Gc<Table>, i: i64) -> bool {
    let v = t.get_int(i);
    if matches!(v, Value::Nil) && t.meta.get().is_some() {
        return false;
    }
    vm.stack[dst] = v;
    true
}

/// `t[i] = rk(c)` for an integer key outside the array part, when no metamethod can apply
/// (`Table::set_int_fast`). False (nothing done) otherwise, and for a nil value.
#[dont_look_inside]
fn set_int_hash(vm: &mut Vm, proto: &Proto, base: usize, t: Gc<Table>, i: i64, c: u16) -> bool {
    let v = rk(vm, proto, base, c);
    t.set_int_fast(i, v).is_ok()
}

/// `t[i] = v` in the array part when no metamethod can apply (as `Table::set_int_fast`):
/// `i` is a key of the array part that holds a value or the table has no metatable, or `i`
/// is the key after the last one, the table has no metatable and no hash part, and the array
/// part has a free slot. False (nothing done) otherwise, and for a nil `v`.
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
    let room = i == n + 1 && i <= part.items.len() as i64;
    if room && t.meta.get().is_none() && t.nhash.get() == 0 {
        part.items[(i - 1) as usize].set(v);
        t.len.set(i as u32);
        return true;
    }
    false
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
#[jit::interpreter(greens(pc, proto), reds(vm, base, stop))]
pub fn portal(vm: &mut Vm, proto: &'static Proto, pc: usize, base: usize, stop: usize) -> i64 {
    loop {
        jit_merge_point!();
        match proto.code[pc] {
            Op::Jmp(close, off) if close == NO_CLOSE => {
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
                        if let Value::Int(d) = &mut vm.stack[base + a as usize] {
                            *d = x.wrapping_add(y);
                            pc += 1;
                            continue;
                        }
                    }
                }
                if let Some(x) = rk_num(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        if let Value::Num(d) = &mut vm.stack[base + a as usize] {
                            *d = x + y;
                            pc += 1;
                            continue;
                        }
                    }
                }
                if let Some(y) = rk_num(vm, proto, base, c) {
                    if let Some(x) = rk_f(vm, proto, base, b) {
                        if let Value::Num(d) = &mut vm.stack[base + a as usize] {
                            *d = x + y;
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::Sub(a, b, c) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        if let Value::Int(d) = &mut vm.stack[base + a as usize] {
                            *d = x.wrapping_sub(y);
                            pc += 1;
                            continue;
                        }
                    }
                }
                if let Some(x) = rk_num(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        if let Value::Num(d) = &mut vm.stack[base + a as usize] {
                            *d = x - y;
                            pc += 1;
                            continue;
                        }
                    }
                }
                if let Some(y) = rk_num(vm, proto, base, c) {
                    if let Some(x) = rk_f(vm, proto, base, b) {
                        if let Value::Num(d) = &mut vm.stack[base + a as usize] {
                            *d = x - y;
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::Mul(a, b, c) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        if let Value::Int(d) = &mut vm.stack[base + a as usize] {
                            *d = x.wrapping_mul(y);
                            pc += 1;
                            continue;
                        }
                    }
                }
                if let Some(x) = rk_num(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        if let Value::Num(d) = &mut vm.stack[base + a as usize] {
                            *d = x * y;
                            pc += 1;
                            continue;
                        }
                    }
                }
                if let Some(y) = rk_num(vm, proto, base, c) {
                    if let Some(x) = rk_f(vm, proto, base, b) {
                        if let Value::Num(d) = &mut vm.stack[base + a as usize] {
                            *d = x * y;
                            pc += 1;
                            continue;
                        }
                    }
                }
            }
            Op::Mod(a, b, c) => {
                // Integers: Lua's floored remainder (the sign of the divisor); a zero
                // divisor (an error) and floats go to the plain loop.
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        if y != 0 {
                            if let Value::Int(d) = &mut vm.stack[base + a as usize] {
                                // `MIN % -1` overflows in Rust; its remainder is 0.
                                let r = if y == -1 { 0 } else { x % y };
                                *d = if r != 0 && (r ^ y) < 0 { r + y } else { r };
                                pc += 1;
                                continue;
                            }
                        }
                    }
                }
            }
            Op::Eq(b, c, k) => {
                // Two integers, or two floats; anything else (strings, tables, mixed numbers,
                // `__eq`) goes to the plain loop.
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
            }
            Op::Lt(b, c, k) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        if (x < y) == k {
                            pc += 1;
                        } else {
                            pc += 2;
                        }
                        continue;
                    }
                }
                if let Some(x) = rk_num(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        if (x < y) == k {
                            pc += 1;
                        } else {
                            pc += 2;
                        }
                        continue;
                    }
                }
                if let Some(y) = rk_num(vm, proto, base, c) {
                    if let Some(x) = rk_f(vm, proto, base, b) {
                        if (x < y) == k {
                            pc += 1;
                        } else {
                            pc += 2;
                        }
                        continue;
                    }
                }
            }
            Op::Le(b, c, k) => {
                if let Some(x) = rk_int(vm, proto, base, b) {
                    if let Some(y) = rk_int(vm, proto, base, c) {
                        if (x <= y) == k {
                            pc += 1;
                        } else {
                            pc += 2;
                        }
                        continue;
                    }
                }
                if let Some(x) = rk_num(vm, proto, base, b) {
                    if let Some(y) = rk_f(vm, proto, base, c) {
                        if (x <= y) == k {
                            pc += 1;
                        } else {
                            pc += 2;
                        }
                        continue;
                    }
                }
                if let Some(y) = rk_num(vm, proto, base, c) {
                    if let Some(x) = rk_f(vm, proto, base, b) {
                        if (x <= y) == k {
                            pc += 1;
                        } else {
                            pc += 2;
                        }
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
                }
            }
            Op::SetTable(a, b, c) => {
                if let Value::Tab(t) = vm.stack[base + a as usize] {
                    if let Some(i) = rk_int(vm, proto, base, b) {
                        if array_set(t, i, rk(vm, proto, base, c)) {
                            pc += 1;
                            continue;
                        }
                        if set_int_hash(vm, proto, base, t, i, c) {
                            pc += 1;
                            continue;
                        }
                    }
                }
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
        let r = step(vm, pc, stop);
        if r < 0 {
            return r;
        }
        proto = frame_proto(vm);
        pc = frame_pc(vm);
        base = frame_base(vm);
    }
}
