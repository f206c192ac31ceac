//! The dispatch loop: one loop over guest frames. A Lua call pushes a frame and the loop
//! continues in it; a return pops it. Natives and metamethods run through `Vm::call`, which
//! re-enters this loop with a stop depth. Fast paths (integer and float arithmetic,
//! comparisons, array-part table access) are inline; everything else calls `ops.rs`.

use super::arith::{fmod, idiv, imod, ArOp};
use super::debug::Desc;
use super::{Closure, LResult, Up, Vm};
use crate::proto::{Ic, Op, RK_CONST};
use crate::table::Table;
use crate::value::{
    float_to_int, le_float_int, le_int_float, lt_float_int, lt_int_float, TRef, Value,
};
use meta_jit::hints::Gc;

/// Converts a `for` limit as Lua 5.4's `forlimit`: Some(limit) or None to skip the loop.
fn for_limit(lim: &Value, init: i64, step: i64) -> Result<Option<i64>, ()> {
    let lim = &lim.to_number().ok_or(())?;
    let l = match lim {
        Value::Int(i) => *i,
        Value::Num(f) => {
            let f = *f;
            if f.is_nan() {
                return Ok(None);
            }
            let r = if step < 0 { f.ceil() } else { f.floor() };
            match float_to_int(r) {
                Some(i) => i,
                None => {
                    if f > 0.0 {
                        if step < 0 {
                            return Ok(None);
                        }
                        i64::MAX
                    } else {
                        if step > 0 {
                            return Ok(None);
                        }
                        i64::MIN
                    }
                }
            }
        }
        _ => return Err(()),
    };
    if if step > 0 { init > l } else { init < l } {
        Ok(None)
    } else {
        Ok(Some(l))
    }
}

/// `obj[key]` for a string key when only tables are met: the value, following `__index`
/// tables (up to 100 levels). None when the slow path must run (not a table, an `__index`
/// function, or a longer chain). Each level of the chain has its own inline caches in `ic`.
/// A string's methods (`s:sub(i, j)`) are found the same way, from the strings' metatable
/// (`smeta`) on.
///
/// The value is written to `out` (true), not returned as an `Option<Value>`: rustc copies an
/// `Option<Value>` as its tag byte and the 15 bytes after it, and the overlapping narrow
/// stores stalled the next 16-byte load of the value (nbody spent 17% more time).
///
/// The common case of a field (`GetStr`), a field of the object itself at the position its
/// cache remembers, is tested first in a function of its own that saves no registers; the
/// rest (`index_str_chain`) is called from it, out of line, only on a miss. A method
/// (`SelfOp`) is usually found in a class, not in the object: it calls `index_str_chain`
/// directly.
#[inline(never)]
pub(crate) fn index_str(
    obj: &Value,
    key: &Value,
    tm_index: &Value,
    smeta: Option<TRef>,
    ic: &Ic,
    out: &mut Value,
) -> bool {
    if let Value::Tab(t) = obj {
        if t.get_str_cached(key, &ic.key[0], out) {
            return true;
        }
    }
    index_str_chain(obj, key, tm_index, smeta, ic, out)
}

/// [`index_str`] without its first test of the object's cache (the whole lookup).
#[inline(never)]
pub(crate) fn index_str_chain(
    obj: &Value,
    key: &Value,
    tm_index: &Value,
    smeta: Option<TRef>,
    ic: &Ic,
    out: &mut Value,
) -> bool {
    let mut h = match obj {
        Value::Tab(t) => {
            let v = t.get_str_ic(key, &ic.key[0]);
            if !matches!(v, Value::Nil) {
                *out = v;
                return true;
            }
            let Some(mt) = t.meta.get() else {
                *out = Value::Nil;
                return true;
            };
            mt.get_str_ic(tm_index, &ic.index[0])
        }
        Value::Str(_) => {
            // Without an `__index` the slow path raises "attempt to index a string value".
            let Some(smeta) = smeta else {
                return false;
            };
            let h = smeta.get_str_ic(tm_index, &ic.index[0]);
            if matches!(h, Value::Nil) {
                return false;
            }
            h
        }
        _ => return false,
    };
    for level in 1..101 {
        let l = level.min(2);
        let Value::Tab(t) = h else {
            *out = Value::Nil;
            return matches!(h, Value::Nil);
        };
        let v = t.get_str_ic(key, &ic.key[l]);
        if !matches!(v, Value::Nil) {
            *out = v;
            return true;
        }
        h = match t.meta.get() {
            None => {
                *out = Value::Nil;
                return true;
            }
            Some(mt) => mt.get_str_ic(tm_index, &ic.index[l]),
        };
    }
    false
}

/// Moves the Lua function out of a call's function slot (leaving nil): a frame owns its
/// closure, and the slot is not read again before the frame's results overwrite it.
#[inline(always)]
pub(super) fn take_closure(slot: &mut Value) -> Gc<Closure> {
    match std::mem::take(slot) {
        Value::LFunc(f) => f,
        _ => unreachable!("a Lua function was checked to be in the slot"),
    }
}

/// Copies the value at `src` to `dst` (which may be the same slot) as two 8-byte loads and
/// stores. A value that was just written as two words (a number stored by an arithmetic
/// instruction, a field read by `index_str`) is read without waiting for both stores to reach
/// the cache, which a 16-byte load of it (the plain copy `*dst = *src`) must do: a
/// store-forwarding stall, 30% of `run`'s samples on richards before `GetStr` and `SelfOp`
/// copied this way.
///
/// # Safety
///
/// `src` and `dst` point to live, aligned values (registers, locals), which nothing else
/// references during the copy.
#[inline(always)]
pub(crate) unsafe fn copy_words(src: *const Value, dst: *mut Value) {
    use std::mem::MaybeUninit;
    // SAFETY: the caller passes pointers to live values. `Value` is 16
    // bytes, two aligned words (`repr(C, u64)`: the tag and the payload); each word is read
    // as a `MaybeUninit<u64>` (a nil's payload and a boolean's padding are not initialized)
    // and written to the same place of `dst`, which then holds `src`'s bytes: a valid
    // `Value`. Both words are read before either is written. The volatile reads keep the
    // compiler from merging the two loads into one 16-byte load.
    unsafe {
        let src = src as *const MaybeUninit<u64>;
        let dst = dst as *mut MaybeUninit<u64>;
        let (t, p) = (
            std::ptr::read_volatile(src),
            std::ptr::read_volatile(src.add(1)),
        );
        dst.write(t);
        dst.add(1).write(p);
    }
}

fn for_num(v: &Value) -> Option<f64> {
    v.to_number().and_then(|n| n.as_f64())
}

impl Vm {
    /// Runs guest frames until the frame count drops to `stop`. The returning frame's results
    /// are left at its function slot, up to `self.top`.
    pub(crate) fn execute(&mut self, stop: usize) -> LResult<()> {
        self.run::<false>(stop)
    }

    /// The dispatch loop; with `SINGLE` (the JIT portal's generic step), runs at least one
    /// instruction, then returns as soon as the next instruction is in a loop the portal can
    /// run inline (`Proto::hot`), in whatever frame, with that frame's pc saved. Code outside
    /// such loops never goes back to the portal: tracing it would give only calls of the step.
    ///
    /// `SINGLE` is a const parameter so that the plain loop (`execute`, `--no-jit`) is a copy
    /// without the per-instruction test of single-step mode.
    pub(crate) fn run<const SINGLE: bool>(&mut self, stop: usize) -> LResult<()> {
        let mut stepped = false;
        // The running frame's state, in locals: its index in `self.frames`, its closure,
        // prototype, code, constants, caches, register base, register pointer and next
        // instruction. `'frame` loads them from the top frame (`load_frame!`); a call or a
        // return of the plain loop (`!SINGLE`) sets them itself and goes on in the inner
        // loop, without the rest of `'frame`'s entry (see `enter_frame!`).
        let mut fi: usize;
        // Frame `fi` holds this closure (a root) for as long as it runs: only `Ret` and
        // `TailCall` pop or replace it, and both set `clg` again (or return) before it is
        // used.
        let mut clg: Gc<Closure>;
        let mut proto: &'static crate::proto::Proto;
        let mut code: &'static [Op];
        let mut k: &'static [Value];
        let mut ic: &'static [Ic];
        let mut base: usize;
        // The next instruction, as a pointer into `code` rather than an index: the fetch
        // is one load, without the code's base (a spilled local) and a multiply-add. The
        // index is computed back (`pc!`) where it is stored or used as one.
        let mut code_start: *const Op;
        let mut ip: *const Op;
        // Register 0 of this frame: a pointer kept in a local (one register or one stack
        // slot) instead of `self.stack`'s buffer and `base` reloaded and added at every
        // register access. It is valid while nothing reallocates or mutably borrows the
        // stack: every instruction that calls a `self` method or writes `self.stack`
        // (the slow paths, calls, collections) recomputes it with `refresh!` before the
        // next register access.
        let mut regs: *mut Value;
        // In single-step mode, whether this prototype has instructions where the portal
        // takes over again.
        let mut watch: bool;
        // The index of the next instruction.
        macro_rules! pc {
            () => {{
                // SAFETY: `ip` points into `code` or one past its end (see the fetch
                // below): the same allocation as `code_start`, at a whole `Op`'s offset.
                unsafe { ip.offset_from(code_start) as usize }
            }};
        }
        // Moves `ip` by a jump's offset (relative to the next instruction).
        macro_rules! jump {
            ($off:expr) => {
                ip = ip.wrapping_offset($off as isize)
            };
        }
        macro_rules! refresh {
            () => {
                regs = self.stack.as_mut_ptr().wrapping_add(base)
            };
        }
        // Enters frame `fi` (the top one), whose closure is `clg`, at register base `b`
        // and instruction `pc`.
        macro_rules! enter_frame {
            ($b:expr, $pc:expr) => {{
                proto = clg.proto;
                code = &proto.code[..];
                k = &proto.consts[..];
                ic = &proto.ic[..];
                base = $b;
                code_start = code.as_ptr();
                ip = code_start.wrapping_add($pc);
                refresh!();
            }};
        }
        // Loads the top frame's state.
        macro_rules! load_frame {
            () => {{
                fi = self.frames.len() - 1;
                let f = &self.frames[fi];
                let (b, pc) = (f.base, f.pc);
                clg = f.cl;
                enter_frame!(b, pc);
            }};
        }
        'frame: loop {
            // A safe point: every call and return passes here (or at its copy in `CallV`,
            // `TailCall` and `Ret`).
            if self.gc_wanted_at_call() {
                self.collect_garbage();
            }
            load_frame!();
            // The register window fits in the stack. Every frame push makes room for it
            // already; this keeps the invariant that `r!` and `rk!` rely on local (the stack
            // never shrinks, so it holds until the frame is left).
            if self.stack.len() < base + proto.maxstack as usize {
                self.ensure_stack(base + proto.maxstack as usize);
                refresh!();
            }
            // In single-step mode, the instructions where the portal takes over again.
            watch = SINGLE && !proto.hot.is_empty();
            if watch && stepped && proto.hot[pc!()] {
                return Ok(());
            }
            stepped = true;
            // Register `x` of this frame, without a bounds check. The reference is not tied
            // to a borrow of `self`: it must not be held across anything that can grow the
            // stack (a call, a metamethod), which the fast paths below never do (the slow
            // paths clone their operands first).
            macro_rules! r {
                ($x:expr) => {{
                    debug_assert!(base + ($x as usize) < self.stack.len());
                    debug_assert!(std::ptr::eq(
                        regs,
                        self.stack.as_mut_ptr().wrapping_add(base)
                    ));
                    // SAFETY: `$x < proto.maxstack` (the compiler raises `maxstack` above every
                    // register operand, `Proto::max_reg`), and the stack holds at least
                    // `base + maxstack` values from frame entry on (checked above; it never
                    // shrinks). `regs` points at `self.stack[base]` of the current buffer: it
                    // is recomputed (`refresh!`) after everything that can reallocate or
                    // mutably borrow the stack.
                    unsafe { &mut *regs.add($x as usize) }
                }};
            }
            // Register `x` as a raw pointer, for copies whose source and destination may be
            // one register (no two references to it).
            macro_rules! rp {
                ($x:expr) => {{
                    debug_assert!(base + ($x as usize) < self.stack.len());
                    debug_assert!(std::ptr::eq(
                        regs,
                        self.stack.as_mut_ptr().wrapping_add(base)
                    ));
                    // In bounds and current as for `r!`.
                    regs.wrapping_add($x as usize)
                }};
            }
            // Writes register `x`.
            macro_rules! set {
                ($x:expr, $v:expr) => {{
                    let v = $v;
                    *r!($x) = v;
                }};
            }
            // Register `x` of this frame for reading: a shared reference made from the raw
            // pointer, so that two operands naming one register (`x + x`) never make two
            // `&mut` to it at once.
            macro_rules! rd {
                ($x:expr) => {{
                    debug_assert!(base + ($x as usize) < self.stack.len());
                    debug_assert!(std::ptr::eq(
                        regs,
                        self.stack.as_mut_ptr().wrapping_add(base)
                    ));
                    // SAFETY: in bounds and current as for `r!`; no `&mut` to the slot is alive
                    // while the reference is used (writes go through `r!` after the operands
                    // are read).
                    unsafe { &*regs.add($x as usize) }
                }};
            }
            macro_rules! rk {
                ($x:expr) => {
                    if $x >= RK_CONST {
                        &k[($x - RK_CONST) as usize]
                    } else {
                        rd!($x)
                    }
                };
            }
            // The inline caches of the running instruction (`pc - 1`).
            macro_rules! ic {
                () => {{
                    let pc = pc!();
                    debug_assert!(pc - 1 < ic.len());
                    // SAFETY: the compiler gives every prototype one cache per instruction
                    // (`proto.ic` has `code.len()` entries, and prototypes are immutable), and
                    // `pc - 1` is the running instruction's index in `code`.
                    unsafe { ic.get_unchecked(pc - 1) }
                }};
            }
            macro_rules! save {
                () => {
                    self.frames[fi].pc = pc!()
                };
            }
            // Stores a number: the tag and the payload, two word stores (values are `Copy`:
            // no old value to drop, so no test of what the register held).
            macro_rules! set_int {
                ($a:expr, $v:expr) => {{
                    let v = $v;
                    *r!($a) = Value::Int(v);
                }};
            }
            macro_rules! set_num {
                ($a:expr, $v:expr) => {{
                    let v = $v;
                    *r!($a) = Value::Num(v);
                }};
            }
            macro_rules! arith {
                ($a:expr, $b:expr, $c:expr, $op:expr, $ii:expr, $ff:expr) => {{
                    match (rk!($b), rk!($c)) {
                        (Value::Int(x), Value::Int(y)) => {
                            let v = $ii(*x, *y);
                            set_int!($a, v)
                        }
                        (Value::Num(x), Value::Num(y)) => {
                            let v = $ff(*x, *y);
                            set_num!($a, v)
                        }
                        (Value::Int(x), Value::Num(y)) => {
                            let v = $ff(*x as f64, *y);
                            set_num!($a, v)
                        }
                        (Value::Num(x), Value::Int(y)) => {
                            let v = $ff(*x, *y as f64);
                            set_num!($a, v)
                        }
                        (x, y) => {
                            let (x, y) = (x.clone(), y.clone());
                            save!();
                            let v = self.arith_slow($op, &x, &y, Desc::Rk($b), Desc::Rk($c))?;
                            refresh!();
                            *r!($a) = v;
                        }
                    }
                }};
            }
            // After a comparison or a test: when the condition is `k`, the `Jmp` that follows
            // runs here, without a dispatch of its own (PUC Lua's `donextjump`); otherwise it
            // is skipped.
            macro_rules! cond_jump {
                ($cond:expr, $k:expr) => {
                    if $cond != $k {
                        jump!(1);
                    } else {
                        debug_assert!(pc!() < code.len());
                        // SAFETY: a comparison or a test is never the last instruction (the
                        // compiler checks that its skip lands in the code: `check_targets`).
                        if let Op::Jmp(crate::proto::NO_CLOSE, off) = unsafe { *ip } {
                            jump!(1 + off as isize);
                        }
                    }
                };
            }
            macro_rules! slow_arith {
                ($a:expr, $b:expr, $c:expr, $op:expr) => {{
                    let (x, y) = (rk!($b).clone(), rk!($c).clone());
                    save!();
                    let v = self.arith_slow($op, &x, &y, Desc::Rk($b), Desc::Rk($c))?;
                    refresh!();
                    *r!($a) = v;
                }};
            }
            loop {
                debug_assert!(pc!() < code.len());
                // SAFETY: the compiler ends every prototype with a `Ret` (the pc never runs
                // off the end) and emits jumps, skips and loop offsets only to instructions of
                // the same prototype; a saved pc (calls, the JIT's resumption) is one of those.
                // So `ip` is in the code here, and one past its end at most after the `add`.
                let op = unsafe { *ip };
                ip = unsafe { ip.add(1) };
                match op {
                    Op::Mov(a, b) => {
                        // SAFETY: both are registers of this frame (`rp!`).
                        unsafe { copy_words(rp!(b), rp!(a)) }
                    }
                    Op::LoadK(a, kk) => set!(a, k[kk as usize]),
                    Op::LoadInt(a, i) => set_int!(a, i as i64),
                    Op::LoadNil(a, n) => {
                        for i in 0..n {
                            *r!(a + i) = Value::Nil;
                        }
                    }
                    Op::LoadBool(a, b) => *r!(a) = Value::Boolean(b),
                    Op::LoadFalseSkip(a) => {
                        *r!(a) = Value::Boolean(false);
                        jump!(1);
                    }
                    Op::GetUpval(a, u) => {
                        let v = match clg.upvals[u as usize].v.get() {
                            Up::Open(i) => {
                                debug_assert!(i < self.stack.len());
                                // SAFETY: an open upvalue names a register of a live frame,
                                // inside the stack (which never shrinks).
                                unsafe { *self.stack.get_unchecked(i) }
                            }
                            Up::Shut(v) => v,
                        };
                        set!(a, v);
                    }
                    Op::SetUpval(a, u) => {
                        let v = *rd!(a);
                        let cell = &clg.upvals[u as usize].v;
                        match cell.get() {
                            Up::Open(i) => {
                                self.stack[i] = v;
                                refresh!();
                            }
                            Up::Shut(_) => cell.set(Up::Shut(v)),
                        }
                    }
                    Op::GetTabUp(a, u, kk) => {
                        let key = &k[kk as usize];
                        // Fast path: a closed `_ENV` table holding the key.
                        let v = match clg.upvals[u as usize].v.get() {
                            Up::Shut(Value::Tab(tb)) => tb.get_str_ic(key, &ic!().key[0]),
                            _ => Value::Nil,
                        };
                        let v = if matches!(v, Value::Nil) {
                            let t = match clg.upvals[u as usize].v.get() {
                                Up::Open(i) => self.stack[i],
                                Up::Shut(v) => v,
                            };
                            save!();
                            let v = self.index(&t, key, Desc::Up(u))?;
                            refresh!();
                            v
                        } else {
                            v
                        };
                        set!(a, v);
                    }
                    Op::SetTabUp(u, kk, c) => {
                        let t = match clg.upvals[u as usize].v.get() {
                            Up::Open(i) => self.stack[i],
                            Up::Shut(v) => v,
                        };
                        let v = *rk!(c);
                        save!();
                        self.settable(&t, k[kk as usize], v, Desc::Up(u))?;
                        refresh!();
                    }
                    Op::GetTable(a, b, c) => {
                        let v = match (rd!(b), rk!(c)) {
                            (Value::Tab(t), Value::Int(i)) => t.get_int(*i),
                            (Value::Tab(t), key) => t.get(key),
                            _ => Value::Nil,
                        };
                        let v = if matches!(v, Value::Nil) {
                            let (t, key) = (*r!(b), *rk!(c));
                            save!();
                            let v = self.index(&t, &key, Desc::Rk(b))?;
                            refresh!();
                            v
                        } else {
                            v
                        };
                        set!(a, v);
                    }
                    Op::GetStr(a, b, kk) => {
                        let key = &k[kk as usize];
                        let sm = self.string_meta;
                        // `index_str` writes the value as two words (tag, payload). A 16-byte
                        // load of them right after waits until both stores are written to
                        // the cache (a store-forwarding stall: 30% of `run`'s samples on
                        // richards): so they go straight into register `a` when it is not
                        // the object's, and are copied as two words when it is.
                        if a != b {
                            if !index_str(rd!(b), key, &self.tm.index, sm, ic!(), r!(a)) {
                                let t = *rd!(b);
                                save!();
                                let v = self.index(&t, key, Desc::Rk(b))?;
                                refresh!();
                                *r!(a) = v;
                            }
                        } else {
                            let mut v = Value::Nil;
                            if !index_str(rd!(b), key, &self.tm.index, sm, ic!(), &mut v) {
                                let t = *rd!(b);
                                save!();
                                v = self.index(&t, key, Desc::Rk(b))?;
                                refresh!();
                            }
                            // SAFETY: a local and a register of this frame.
                            unsafe { copy_words(&v, rp!(a)) };
                        }
                    }
                    Op::SetTable(a, b, c) => {
                        let v = *rk!(c);
                        let rest = match (rd!(a), rk!(b)) {
                            (Value::Tab(t), Value::Int(i)) => t.set_int_fast(*i, v).err(),
                            (Value::Tab(t), key @ Value::Str(_)) => t.set_str_fast(key, v).err(),
                            _ => Some(v),
                        };
                        if let Some(v) = rest {
                            let t = *r!(a);
                            let key = *rk!(b);
                            save!();
                            self.settable(&t, key, v, Desc::Rk(a))?;
                            refresh!();
                        }
                    }
                    Op::SetStr(a, b, c) => {
                        let v = *rk!(c);
                        let rest = match rd!(a) {
                            Value::Tab(t) => {
                                let key = &k[b as usize];
                                t.set_str_fast_ic(key, v, &ic!().key[0]).err()
                            }
                            _ => Some(v),
                        };
                        if let Some(v) = rest {
                            let t = *r!(a);
                            save!();
                            self.settable(&t, k[b as usize], v, Desc::Rk(a))?;
                            refresh!();
                        }
                    }
                    Op::NewTable(a, narr, nhash) => {
                        *r!(a) = Value::Tab(Table::new_gc(narr as usize, nhash as usize));
                    }
                    Op::SelfOp(a, b, kk) => {
                        // The object to `a + 1` first, as two words (see `copy_words`); the
                        // lookup reads it there. Register `a` is written only after it.
                        // SAFETY: both are registers of this frame (`rp!`).
                        unsafe { copy_words(rp!(b), rp!(a + 1)) };
                        let key = &k[kk as usize];
                        let mut v = Value::Nil;
                        let sm = self.string_meta;
                        if !index_str_chain(rd!(a + 1), key, &self.tm.index, sm, ic!(), &mut v) {
                            let obj = *rd!(a + 1);
                            save!();
                            v = self.index(&obj, key, Desc::Rk(b))?;
                            refresh!();
                        }
                        // SAFETY: a local and a register of this frame.
                        unsafe { copy_words(&v, rp!(a)) };
                    }
                    Op::Add(a, b, c) => arith!(a, b, c, ArOp::Add, i64::wrapping_add, |x, y| x + y),
                    Op::Sub(a, b, c) => arith!(a, b, c, ArOp::Sub, i64::wrapping_sub, |x, y| x - y),
                    Op::Mul(a, b, c) => arith!(a, b, c, ArOp::Mul, i64::wrapping_mul, |x, y| x * y),
                    Op::Div(a, b, c) => match (rk!(b).as_f64(), rk!(c).as_f64()) {
                        (Some(x), Some(y)) => set_num!(a, x / y),
                        _ => slow_arith!(a, b, c, ArOp::Div),
                    },
                    Op::Mod(a, b, c) => match (rk!(b), rk!(c)) {
                        (Value::Int(x), Value::Int(y)) if *y != 0 => {
                            let v = imod(*x, *y);
                            set_int!(a, v)
                        }
                        (Value::Num(x), Value::Num(y)) if y.is_finite() => {
                            let v = fmod(*x, *y);
                            set_num!(a, v)
                        }
                        _ => slow_arith!(a, b, c, ArOp::Mod),
                    },
                    Op::IDiv(a, b, c) => match (rk!(b), rk!(c)) {
                        (Value::Int(x), Value::Int(y)) if *y != 0 => {
                            *r!(a) = Value::Int(idiv(*x, *y))
                        }
                        (Value::Num(x), Value::Num(y)) => *r!(a) = Value::Num((x / y).floor()),
                        _ => slow_arith!(a, b, c, ArOp::IDiv),
                    },
                    Op::Pow(a, b, c) => slow_arith!(a, b, c, ArOp::Pow),
                    Op::BAnd(a, b, c) => match (rk!(b), rk!(c)) {
                        (Value::Int(x), Value::Int(y)) => *r!(a) = Value::Int(x & y),
                        _ => slow_arith!(a, b, c, ArOp::BAnd),
                    },
                    Op::BOr(a, b, c) => match (rk!(b), rk!(c)) {
                        (Value::Int(x), Value::Int(y)) => *r!(a) = Value::Int(x | y),
                        _ => slow_arith!(a, b, c, ArOp::BOr),
                    },
                    Op::BXor(a, b, c) => match (rk!(b), rk!(c)) {
                        (Value::Int(x), Value::Int(y)) => *r!(a) = Value::Int(x ^ y),
                        _ => slow_arith!(a, b, c, ArOp::BXor),
                    },
                    Op::Shl(a, b, c) => slow_arith!(a, b, c, ArOp::Shl),
                    Op::Shr(a, b, c) => slow_arith!(a, b, c, ArOp::Shr),
                    Op::Unm(a, b) => match rd!(b) {
                        Value::Int(x) => *r!(a) = Value::Int(x.wrapping_neg()),
                        Value::Num(x) => *r!(a) = Value::Num(-x),
                        _ => slow_arith!(a, b, b, ArOp::Unm),
                    },
                    Op::BNot(a, b) => slow_arith!(a, b, b, ArOp::BNot),
                    Op::Not(a, b) => *r!(a) = Value::Boolean(!r!(b).truthy()),
                    Op::Len(a, b) => {
                        let v = match rd!(b) {
                            Value::Str(s) => Value::Int(s.bytes.len() as i64),
                            Value::Tab(t) if t.meta.get().is_none() => Value::Int(t.len()),
                            v => {
                                let v = *v;
                                save!();
                                let v = self.len_of(&v, Desc::Rk(b))?;
                                refresh!();
                                v
                            }
                        };
                        *r!(a) = v;
                    }
                    Op::Concat(a, n) => {
                        save!();
                        let v = self.concat_regs(base, a, n)?;
                        refresh!();
                        *r!(a) = v;
                    }
                    Op::Jmp(close, off) => {
                        if close != crate::proto::NO_CLOSE {
                            self.close_upvals(base + close as usize);
                            refresh!();
                        }
                        jump!(off);
                        // A safe point: a backward jump.
                        if off < 0 && self.gc_wanted() {
                            self.collect_garbage();
                            refresh!();
                        }
                    }
                    Op::Eq(b, c, kk) => {
                        let eq = match (rk!(b), rk!(c)) {
                            (Value::Int(x), Value::Int(y)) => x == y,
                            (Value::Tab(x), Value::Tab(y)) if !Gc::ptr_eq(*x, *y) => {
                                let (x, y) = (*rk!(b), *rk!(c));
                                save!();
                                let c = self.equals(&x, &y)?;
                                refresh!();
                                c
                            }
                            (x, y) => x.raw_eq(y),
                        };
                        cond_jump!(eq, kk);
                    }
                    Op::Lt(b, c, kk) => {
                        let lt = match (rk!(b), rk!(c)) {
                            (Value::Int(x), Value::Int(y)) => x < y,
                            (Value::Num(x), Value::Num(y)) => x < y,
                            (Value::Int(x), Value::Num(y)) => lt_int_float(*x, *y),
                            (Value::Num(x), Value::Int(y)) => lt_float_int(*x, *y),
                            (x, y) => {
                                let (x, y) = (*x, *y);
                                save!();
                                let c = self.less_than(&x, &y)?;
                                refresh!();
                                c
                            }
                        };
                        cond_jump!(lt, kk);
                    }
                    Op::Le(b, c, kk) => {
                        let le = match (rk!(b), rk!(c)) {
                            (Value::Int(x), Value::Int(y)) => x <= y,
                            (Value::Num(x), Value::Num(y)) => x <= y,
                            (Value::Int(x), Value::Num(y)) => le_int_float(*x, *y),
                            (Value::Num(x), Value::Int(y)) => le_float_int(*x, *y),
                            (x, y) => {
                                let (x, y) = (*x, *y);
                                save!();
                                let c = self.less_equal(&x, &y)?;
                                refresh!();
                                c
                            }
                        };
                        cond_jump!(le, kk);
                    }
                    Op::TestJ(a, kk) => {
                        cond_jump!(r!(a).truthy(), kk);
                    }
                    Op::CallV(a, b, c) => {
                        let func = base + a as usize;
                        let nargs = if b == 0 {
                            self.top - func - 1
                        } else {
                            b as usize - 1
                        };
                        save!();
                        // The common case inline: a Lua function.
                        if self.enter_lua(func, nargs, c as i32 - 1) {
                            if SINGLE {
                                continue 'frame;
                            }
                            // The plain loop enters the callee here: its base and pc are
                            // known, and `push_lua` made room for its registers.
                            if self.gc_wanted_at_call() {
                                self.collect_garbage();
                            }
                            fi += 1;
                            clg = self.frames[fi].cl;
                            enter_frame!(func + 1, 0);
                            continue;
                        }
                        // A native's results are in place when precall returns false.
                        if self.precall(func, nargs, c as i32 - 1, true)? {
                            continue 'frame;
                        }
                        refresh!();
                    }
                    Op::TailCall(a, b) => {
                        let func = base + a as usize;
                        let nargs = if b == 0 {
                            self.top - func - 1
                        } else {
                            b as usize - 1
                        };
                        save!();
                        // The common case: a Lua function without `...` takes over this frame
                        // in place (no pop and push).
                        if self.tail_lua(base, func, nargs) {
                            if SINGLE {
                                continue 'frame;
                            }
                            // The plain loop enters the callee here, in this frame: `tail_lua`
                            // made room for its registers.
                            if self.gc_wanted_at_call() {
                                self.collect_garbage();
                            }
                            clg = self.frames[fi].cl;
                            enter_frame!(base, 0);
                            continue;
                        }
                        if let Value::LFunc(_) = self.stack[func] {
                            if self.open_top > base {
                                self.close_upvals(base);
                            }
                            // Move the function and its arguments down to this frame's slot.
                            for i in 0..=nargs {
                                self.stack[base - 1 + i] =
                                    std::mem::take(&mut self.stack[func + i]);
                            }
                            let f = self.frames.pop().unwrap();
                            self.varargs.truncate(f.va_start as usize);
                            self.precall(base - 1, nargs, f.nres, true)?;
                            let nf = self.frames.last_mut().unwrap();
                            nf.boundary = f.boundary;
                            nf.from_native = f.from_native;
                            nf.fin = f.fin;
                            continue 'frame;
                        }
                        if self.precall(func, nargs, -1, true)? {
                            continue 'frame;
                        }
                        refresh!();
                    }
                    Op::Ret(a, b) => {
                        let from = base + a as usize;
                        let n = if b == 0 {
                            self.top - from
                        } else {
                            b as usize - 1
                        };
                        let f = self.leave_lua(base, from, n);
                        if self.frames.len() <= stop || f.boundary {
                            return Ok(());
                        }
                        if SINGLE {
                            continue 'frame;
                        }
                        // The plain loop goes back to the caller here. Its registers fit in
                        // the stack: it was entered with them, and the stack never shrinks.
                        if self.gc_wanted_at_call() {
                            self.collect_garbage();
                        }
                        load_frame!();
                        continue;
                    }
                    Op::ForPrep(a, off) => {
                        // The common loop inline: integer init, limit and step, the step 1 or
                        // more (`for_prep` computes the same count; it raises the errors).
                        let fast = match (*rd!(a), *rd!(a + 1), *rd!(a + 2)) {
                            (Value::Int(i), Value::Int(l), Value::Int(s)) if s > 0 => {
                                if i > l {
                                    jump!(off);
                                } else {
                                    let c = (l as u64).wrapping_sub(i as u64) / s as u64;
                                    // A count past i64::MAX runs i64::MAX times (as `for_prep`).
                                    *r!(a + 1) = Value::Int(c.min(i64::MAX as u64) as i64);
                                    *r!(a + 3) = Value::Int(i);
                                }
                                true
                            }
                            _ => false,
                        };
                        if !fast {
                            save!();
                            if self.for_prep(base + a as usize)? {
                                jump!(off);
                            }
                            refresh!();
                        }
                    }
                    Op::ForStep(a, off) => {
                        if let Value::Int(step) = *r!(a + 2) {
                            if let Value::Int(count) = r!(a + 1) {
                                if *count > 0 {
                                    *count -= 1;
                                    if let Value::Int(i) = r!(a) {
                                        *i = i.wrapping_add(step);
                                        let i = *i;
                                        match r!(a + 3) {
                                            Value::Int(x) => *x = i,
                                            slot => *slot = Value::Int(i),
                                        }
                                    }
                                    jump!(off);
                                    if self.gc_wanted() {
                                        self.collect_garbage();
                                    }
                                }
                            }
                        } else if let (Value::Num(i), Value::Num(l), Value::Num(s)) =
                            (rd!(a), rd!(a + 1), rd!(a + 2))
                        {
                            let (l, s) = (*l, *s);
                            let i = i + s;
                            if if s > 0.0 { i <= l } else { l <= i } {
                                *r!(a) = Value::Num(i);
                                *r!(a + 3) = Value::Num(i);
                                jump!(off);
                                if self.gc_wanted() {
                                    self.collect_garbage();
                                    refresh!();
                                }
                            }
                        }
                    }
                    Op::TForCall(a, n) => {
                        for i in 0..3 {
                            *r!(a + 3 + i) = *r!(a + i);
                        }
                        save!();
                        if self.precall(base + a as usize + 3, 2, n as i32, true)? {
                            continue 'frame;
                        }
                        refresh!();
                    }
                    Op::TForLoop(a, off) => {
                        if !matches!(r!(a + 3), Value::Nil) {
                            *r!(a + 2) = *rd!(a + 3);
                            jump!(off);
                            if self.gc_wanted() {
                                self.collect_garbage();
                                refresh!();
                            }
                        }
                    }
                    Op::SetList(a, n, blk) => {
                        self.set_list(base + a as usize, n, blk);
                        refresh!();
                    }
                    Op::MkClosure(a, idx) => {
                        let f = self.make_closure(&clg, proto.protos[idx as usize], base);
                        refresh!();
                        *r!(a) = f;
                    }
                    Op::Vararg(a, b) => {
                        self.vararg(fi, base + a as usize, b);
                        refresh!();
                    }
                    Op::CloseUps(a) => {
                        self.close_upvals(base + a as usize);
                        refresh!();
                    }
                }
                // In single-step mode, go on until an instruction of a loop the portal runs
                // inline.
                if watch && proto.hot[pc!()] {
                    self.frames[fi].pc = pc!();
                    return Ok(());
                }
            }
        }
    }

    /// `Concat`: registers `a .. a + n - 1` of the frame at `base`, concatenated.
    #[inline(never)]
    pub(crate) fn concat_regs(&mut self, base: usize, a: u16, n: u16) -> LResult<Value> {
        let ra = base + a as usize;
        let vals: Vec<Value> = self.stack[ra..ra + n as usize].to_vec();
        self.concat(vals, a)
    }

    /// `MkClosure`: a closure of `p` whose upvalues are the enclosing frame's registers (from
    /// `base`) or its closure `cl`'s upvalues. Out of line, as the other cold instructions
    /// below: the dispatch loop stays smaller.
    #[inline(never)]
    pub(crate) fn make_closure(
        &mut self,
        cl: &Closure,
        p: &'static crate::proto::Proto,
        base: usize,
    ) -> Value {
        let mut ups = Vec::with_capacity(p.upvals.len());
        for u in &p.upvals {
            if u.in_stack {
                ups.push(self.find_upval(base + u.idx as usize));
            } else {
                ups.push(cl.upvals[u.idx as usize]);
            }
        }
        Value::LFunc(Gc::new(Closure {
            proto: p,
            upvals: ups,
        }))
    }

    /// `Vararg`: `b - 1` (0: all) of frame `fi`'s extra arguments to the stack from `ra`.
    #[inline(never)]
    fn vararg(&mut self, fi: usize, ra: usize, b: u16) {
        let (vs, nv) = {
            let f = &self.frames[fi];
            (f.va_start as usize, f.va_len as usize)
        };
        let n = if b == 0 { nv } else { b as usize - 1 };
        self.ensure_stack(ra + n + 1);
        for i in 0..n {
            let v = if i < nv {
                self.varargs[vs + i]
            } else {
                Value::Nil
            };
            self.stack[ra + i] = v;
        }
        if b == 0 {
            self.top = ra + n;
        }
    }

    /// `SetList`: the table at stack slot `ra` gets the `n` values above it (0: up to top)
    /// at the keys of block `blk`.
    #[inline(never)]
    pub(crate) fn set_list(&mut self, ra: usize, n: u16, blk: u16) {
        let n = if n == 0 {
            self.top - ra - 1
        } else {
            n as usize
        };
        if let Value::Tab(t) = self.stack[ra] {
            let start = blk as i64 * crate::proto::FIELDS_PER_FLUSH as i64;
            for i in 1..=n {
                t.set_int(start + i as i64, self.stack[ra + i]);
            }
        }
    }

    /// `t[k] = v` with a fast path for tables without metatables.
    pub(crate) fn settable(&mut self, t: &Value, key: Value, v: Value, d: Desc) -> LResult<()> {
        if let Value::Tab(tb) = t {
            if tb.meta.get().is_none() {
                return self.rawset(tb, key, v);
            }
        }
        self.setindex(t, key, v, d)
    }

    /// Prepares a numeric for loop at stack slot `ra`; true to skip it.
    pub(crate) fn for_prep(&mut self, ra: usize) -> LResult<bool> {
        let (init, limit, step) = (self.stack[ra], self.stack[ra + 1], self.stack[ra + 2]);
        if let (Value::Int(i), Value::Int(s)) = (&init, &step) {
            let (i, s) = (*i, *s);
            if s == 0 {
                return Err(self.rt_error("'for' step is zero"));
            }
            let l = match for_limit(&limit, i, s) {
                Ok(Some(l)) => l,
                Ok(None) => return Ok(true),
                Err(()) => {
                    let m = format!(
                        "bad 'for' limit (number expected, got {})",
                        self.type_name_of(&limit)
                    );
                    return Err(self.rt_error(&m));
                }
            };
            let count = if s > 0 {
                let c = (l as u64).wrapping_sub(i as u64);
                if s != 1 {
                    c / s as u64
                } else {
                    c
                }
            } else {
                let c = (i as u64).wrapping_sub(l as u64);
                c / ((-(s + 1)) as u64 + 1)
            };
            self.stack[ra + 1] = Value::Int(count as i64);
            self.stack[ra + 3] = Value::Int(i);
            // The count is kept as a positive i64: a loop of more than 2^63 iterations stops
            // after 2^63 - 1 (PUC Lua keeps it unsigned; no loop runs that long).
            if (count as i64) < 0 {
                self.stack[ra + 1] = Value::Int(i64::MAX);
            }
            return Ok(false);
        }
        let what = |v: &Value, name: &str| -> Option<String> {
            if for_num(v).is_none() {
                Some(format!(
                    "bad 'for' {} (number expected, got {})",
                    name,
                    v.type_name()
                ))
            } else {
                None
            }
        };
        if let Some(m) = what(&init, "initial value")
            .or_else(|| what(&limit, "limit"))
            .or_else(|| what(&step, "step"))
        {
            return Err(self.rt_error(&m));
        }
        let (i, l, s) = (
            for_num(&init).unwrap(),
            for_num(&limit).unwrap(),
            for_num(&step).unwrap(),
        );
        if s == 0.0 {
            return Err(self.rt_error("'for' step is zero"));
        }
        if if s > 0.0 { l < i } else { i < l } {
            return Ok(true);
        }
        self.stack[ra] = Value::Num(i);
        self.stack[ra + 1] = Value::Num(l);
        self.stack[ra + 2] = Value::Num(s);
        self.stack[ra + 3] = Value::Num(i);
        Ok(false)
    }
}
