//! The virtual machine: the value stack, the guest frame stack, upvalue cells, calls and
//! errors. `exec.rs` holds the single dispatch loop (Lua calls push a frame and continue in
//! the same loop), `ops.rs` the slow paths with metamethods, `debug.rs` variable names for
//! messages and tracebacks. Library functions live in `crate::lib`.

mod arith;
mod debug;
mod exec;
mod frames;
mod ops;

pub use arith::ArOp;
pub(crate) use exec::index_str;
pub use frames::FrameStack;
pub(crate) use ops::concat_plain;

use crate::proto::Proto;
use crate::table::Table;
use crate::value::{Native, TRef, Value};
use meta_jit::gc::{self, Trace, Tracer};
use meta_jit::hints::*;
use std::cell::Cell;

/// Lua frames allowed at once (deeper recursion is a "stack overflow" error).
pub const MAX_FRAMES: usize = 200_000;
/// Nested native -> Lua calls allowed (pcall, metamethods, sort comparators, ...).
pub const MAX_NATIVE_DEPTH: u32 = 195;

/// An upvalue: open (a stack slot) or closed (its own value). A word-sized tag, as
/// [`Value`]'s, so that traced code reads it (`jit::upval`).
#[derive(Clone, Copy, JitLayout, Trace)]
#[repr(C, u64)]
pub enum Up {
    /// Lives in this stack slot.
    Open(usize),
    /// Closed over.
    Shut(Value),
}

/// A shared upvalue cell: a plain object of the heap (no header, no drop).
#[derive(JitLayout, Trace)]
pub struct UpVal {
    /// Where the value is.
    pub v: Cell<Up>,
}

impl UpVal {
    /// A new cell.
    pub fn new(u: Up) -> Gc<UpVal> {
        Gc::new(UpVal { v: Cell::new(u) })
    }
}

/// A Lua function: a prototype and its upvalues.
#[derive(JitLayout)]
pub struct Closure {
    /// The code.
    #[jit(immutable)]
    pub proto: &'static Proto,
    /// The upvalue cells.
    #[jit(immutable, immutable_items)]
    pub upvals: Vec<Gc<UpVal>>,
}

// SAFETY: a closure's `Gc`s are its upvalue cells and the constants of its prototype (and of
// the prototypes nested in it), all reported. No `Drop` of its own.
unsafe impl Trace for Closure {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        self.upvals.trace(t);
        self.proto.trace(t);
    }
}

/// An error on its way up: the error value and, for uncaught errors, a traceback.
#[derive(Clone, Trace)]
pub struct LuaError {
    /// The value passed to `error` (or the message string).
    pub value: Value,
    /// The traceback, taken where the error was raised when no `pcall` is active.
    pub traceback: Option<String>,
}

/// Results of fallible VM operations.
pub type LResult<T> = Result<T, LuaError>;

/// A guest frame.
#[derive(Clone, Copy, JitLayout, Trace)]
pub struct Frame {
    /// The running function.
    pub cl: Gc<Closure>,
    /// Stack index of register 0.
    pub base: usize,
    /// The next instruction.
    pub pc: usize,
    /// Results wanted by the caller (-1: all).
    pub nres: i32,
    /// This frame's extra arguments for `...`: `Vm::varargs[va_start..va_start + va_len]`.
    /// `va_start` is `Vm::varargs`' length when the frame was pushed, so that the frames'
    /// ranges nest and popping frames down to any depth truncates `Vm::varargs` to the top
    /// frame's end (no vector per frame: a frame is a plain 40-byte record whose only drop
    /// is its closure's count).
    pub va_start: u32,
    /// The number of extra arguments.
    pub va_len: u32,
    /// Called from native code: the dispatch loop returns when this frame returns.
    pub boundary: bool,
    /// Called by a library function (not by a metamethod of the VM): error levels stop here.
    pub from_native: bool,
    /// A metamethod called by traced code as a guest call (`jit::meta_call`): what its
    /// caller's instruction still does with the result when this frame returns
    /// (`jit::finish_meta`); 0 for every other frame.
    pub fin: u16,
}

/// The names of the metamethods of operators, by event number: the arithmetic and bitwise
/// ones in [`ArOp`] order, then `__lt`, `__le` and `__eq` (`jit::meta_call` names them by
/// number).
pub const META_EVENTS: [&str; 17] = [
    "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__idiv", "__band", "__bor", "__bxor",
    "__shl", "__shr", "__unm", "__bnot", "__lt", "__le", "__eq",
];

/// Metamethod names, interned once.
#[derive(Trace)]
pub struct TmNames {
    pub index: Value,
    pub newindex: Value,
    pub call: Value,
    pub eq: Value,
    pub lt: Value,
    pub le: Value,
    pub concat: Value,
    pub len: Value,
    pub tostring: Value,
    pub name: Value,
    pub metatable: Value,
    pub arith: Vec<Value>,
}

/// The buffered standard output of a VM.
pub struct Out(pub std::io::BufWriter<std::io::Stdout>);

impl std::ops::Deref for Out {
    type Target = std::io::BufWriter<std::io::Stdout>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Out {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

// SAFETY: a writer of bytes holds no `Gc`.
unsafe impl Trace for Out {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

/// The roots every VM of a thread shares: the interned strings (so that the intern table
/// never holds a freed string, and the prototypes' string constants, which are all interned,
/// stay alive) and the tables' shared empty array part.
#[derive(Default)]
pub struct ThreadRoots;

// SAFETY: reports every `Gc` the thread-locals of `value` and `table` hold.
unsafe impl Trace for ThreadRoots {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        crate::value::trace_interned(t);
    }
}

/// The interpreter state. Every `Gc` the interpreter uses is reachable from it through
/// `Trace` (the roots of a collection), except while a native function that holds values in
/// its Rust locals has called back into Lua (`Vm::gc_holds`).
#[derive(JitLayout, Trace)]
pub struct Vm {
    /// The value stack.
    pub stack: Vec<Value>,
    /// Guest frames.
    pub frames: FrameStack,
    /// The argument buffer of native calls, kept between calls (a call that finds it taken,
    /// a native called by a native, makes its own).
    native_args: Vec<Value>,
    /// The extra arguments of the frames of vararg functions, frame after frame (see
    /// `Frame::va_start`).
    pub varargs: Vec<Value>,
    /// Open upvalues, by ascending stack slot.
    open_upvals: Vec<(usize, Gc<UpVal>)>,
    /// One past the stack slot of the highest open upvalue (0: none): a frame at `base` has
    /// open upvalues to close when `open_top > base`, one load and a comparison for traced
    /// code.
    pub open_top: usize,
    /// End of the values of the last open-result call or `...`.
    pub top: usize,
    /// The global table.
    pub globals: TRef,
    /// The metatable of strings.
    pub string_meta: Option<TRef>,
    /// Nested native -> Lua calls.
    pub native_depth: u32,
    /// Active `pcall`s: errors raised with none active take a traceback.
    pub pcall_depth: u32,
    /// The native running now and whether it was called from Lua (for messages).
    pub cur_native: (Option<Gc<Native>>, bool),
    /// Metamethod names.
    pub tm: TmNames,
    /// Buffered standard output.
    pub out: Out,
    /// The directory of the main script, for `require`.
    pub script_dir: String,
    /// Random generator state.
    pub rng: [u64; 4],
    /// How guest frames run: the plain loop, the JIT portal, or the portal's jitcode.
    pub mode: crate::Mode,
    /// An error raised inside the portal's generic step, on its way out.
    pub pending: Option<LuaError>,
    /// Calls into Lua made by native code that holds values in Rust locals, which the
    /// collector cannot see (`Vm::call`, metamethods called by the VM's slow paths, a sort's
    /// comparator): while one is active the plain loop does not collect. `pcall`, `xpcall`
    /// and the main chunk's call keep everything they use on the VM's stack and do not
    /// count.
    pub gc_holds: u32,
    /// The interned strings and other thread-wide roots.
    pub thread_roots: ThreadRoots,
    /// Test mode (`LUA_GC_STRESS=N`): the plain loop also collects at every `N`-th call or
    /// return, not only when the heap asks, so that a value the roots miss is freed soon (0:
    /// off).
    pub gc_stress: u32,
    /// A metamethod or a callback of the VM is being called (`call1s`): a Lua function
    /// without a loop then runs in the plain loop, not in a nested portal call (see
    /// `run_frames`).
    pub small_call: bool,
    /// Safe points left until the stress mode's next collection.
    gc_stress_left: Cell<u32>,
}

impl Vm {
    /// A VM with the standard libraries loaded.
    pub fn new() -> Vm {
        let s = Value::interned;
        let mut vm = Vm {
            stack: vec![Value::Nil; 1024],
            frames: FrameStack::with_capacity(64),
            varargs: vec![],
            native_args: Vec::with_capacity(8),
            open_upvals: vec![],
            open_top: 0,
            top: 0,
            globals: Table::new_gc(0, 0),
            string_meta: None,
            native_depth: 0,
            pcall_depth: 0,
            cur_native: (None, false),
            tm: TmNames {
                index: s("__index"),
                newindex: s("__newindex"),
                call: s("__call"),
                eq: s("__eq"),
                lt: s("__lt"),
                le: s("__le"),
                concat: s("__concat"),
                len: s("__len"),
                tostring: s("__tostring"),
                name: s("__name"),
                metatable: s("__metatable"),
                arith: META_EVENTS[..14].iter().map(|n| s(n)).collect(),
            },
            out: Out(std::io::BufWriter::with_capacity(
                1 << 16,
                std::io::stdout(),
            )),
            script_dir: String::new(),
            rng: [
                0x9E3779B97F4A7C15,
                0xBF58476D1CE4E5B9,
                0x94D049BB133111EB,
                0x2545F4914F6CDD1D,
            ],
            mode: crate::Mode::NoJit,
            pending: None,
            gc_holds: 0,
            thread_roots: ThreadRoots,
            gc_stress: 0,
            small_call: false,
            gc_stress_left: Cell::new(0),
        };
        crate::stdlib::open_libs(&mut vm);
        vm
    }

    /// Compiles a chunk into a closure over the globals (as `_ENV`).
    pub fn load(&mut self, src: &[u8], chunk: &str) -> Result<Value, String> {
        let body = crate::parser::parse_chunk(src, chunk)?;
        let proto = crate::compile::compile_chunk(&body, chunk)?;
        let env = UpVal::new(Up::Shut(Value::Tab(self.globals)));
        Ok(Value::LFunc(Gc::new(Closure {
            proto,
            upvals: vec![env],
        })))
    }

    /// A runtime error with the position of the running Lua code.
    pub fn rt_error(&self, msg: &str) -> LuaError {
        if self.cur_native.0.is_some() {
            return self.native_error(msg);
        }
        let pos = self.where_(1);
        self.error_value(Value::str(&format!("{pos}{msg}")))
    }

    /// An error carrying `v`, with a traceback when it will not be caught.
    pub fn error_value(&self, v: Value) -> LuaError {
        LuaError {
            value: v,
            traceback: if self.pcall_depth == 0 {
                Some(self.traceback())
            } else {
                None
            },
        }
    }

    /// An error raised by the running native function: positioned at its Lua caller.
    pub fn native_error(&self, msg: &str) -> LuaError {
        let pos = if self.cur_native.1 {
            self.where_(1)
        } else {
            String::new()
        };
        self.error_value(Value::str(&format!("{pos}{msg}")))
    }

    /// `bad argument #n to 'name' (msg)`.
    pub fn arg_error(&self, n: usize, msg: &str) -> LuaError {
        let name = self.native_name();
        self.native_error(&format!("bad argument #{n} to '{name}' ({msg})"))
    }

    /// The running native's name as messages give it.
    pub fn native_name(&self) -> String {
        let (n, from_lua) = &self.cur_native;
        let q = n.as_ref().map(|n| n.name.as_str()).unwrap_or("?");
        if *from_lua {
            q.rsplit('.').next().unwrap_or(q).to_string()
        } else {
            q.to_string()
        }
    }

    /// The slot above the running frame's registers, free for a nested call.
    fn free_slot(&self) -> usize {
        match self.frames.last() {
            Some(f) => (f.base + f.cl.proto.maxstack as usize).max(self.top),
            None => self.top,
        }
    }

    pub(crate) fn ensure_stack(&mut self, n: usize) {
        if self.stack.len() < n {
            let new = n.max(self.stack.len() * 2);
            self.stack.resize(new, Value::Nil);
        }
    }

    /// Calls `f` with `args` from native code and returns all its results. The caller may
    /// hold values in Rust locals across the call: no collection happens in the plain loop
    /// until it returns.
    pub fn call(&mut self, f: &Value, args: Vec<Value>) -> LResult<Vec<Value>> {
        let slot = self.call_in_place(f, &args, true)?;
        let res = self.stack[slot..self.top].to_vec();
        self.top = slot;
        Ok(res)
    }

    /// [`Vm::call`] for a caller that keeps every value it uses after the call on the VM's
    /// stack (its own arguments, which stay in their slots while a native runs) or in the
    /// VM: collections may happen during the call.
    pub fn call_rooted(&mut self, f: &Value, args: Vec<Value>) -> LResult<Vec<Value>> {
        let slot = self.call_in_place(f, &args, false)?;
        let res = self.stack[slot..self.top].to_vec();
        self.top = slot;
        Ok(res)
    }

    /// Calls `f` with `args` and leaves its results on the stack from the returned slot up to
    /// `self.top` (the caller resets `top` to that slot). `holds`: the caller holds values
    /// in Rust locals that the collector cannot see (counted in `gc_holds` during the call).
    fn call_in_place(&mut self, f: &Value, args: &[Value], holds: bool) -> LResult<usize> {
        if self.native_depth >= MAX_NATIVE_DEPTH {
            return Err(self.rt_error("C stack overflow"));
        }
        let slot = self.free_slot();
        self.ensure_stack(slot + args.len() + 1);
        let nargs = args.len();
        self.stack[slot] = *f;
        self.stack[slot + 1..slot + 1 + nargs].copy_from_slice(args);
        // The callee and its arguments are live until the call returns: a call made while it
        // runs (a native's own call into Lua) starts above them.
        self.top = slot + 1 + nargs;
        let depth = self.frames.len();
        let from_native = self.cur_native.0.is_some();
        let saved_native = std::mem::take(&mut self.cur_native);
        // Outside every other call (a message's `__tostring` after the main chunk ended), the
        // JIT portal this call enters is the outermost one, whose safe points collect
        // whatever `gc_holds` says: a caller that holds values stops collection meanwhile.
        let pause = holds && self.native_depth == 0 && gc::collection_enabled();
        if pause {
            gc::disable_collection();
        }
        self.native_depth += 1;
        self.gc_holds += holds as u32;
        let r = match self.precall(slot, nargs, -1, false) {
            Ok(true) => {
                let f = self.frames.last_mut().unwrap();
                f.boundary = true;
                f.from_native = from_native;
                self.run_frames(depth)
            }
            Ok(false) => Ok(()),
            Err(e) => Err(e),
        };
        self.native_depth -= 1;
        self.gc_holds -= holds as u32;
        if pause {
            // SAFETY: collection was enabled when this call began (by `run_chunk`, under its
            // contract); the call is over, so the caller is back in the state it was in.
            unsafe { gc::enable_collection() };
        }
        self.cur_native = saved_native;
        match r {
            Ok(()) => Ok(slot),
            Err(e) => {
                self.truncate_frames(depth);
                self.close_upvals(slot);
                self.top = slot;
                Err(e)
            }
        }
    }

    /// Runs guest frames down to `depth` in the configured mode.
    fn run_frames(&mut self, depth: usize) -> LResult<()> {
        if self.mode == crate::Mode::NoJit {
            return self.execute(depth);
        }
        let f = &self.frames[self.frames.len() - 1];
        let (proto, pc, base) = (f.cl.proto, f.pc, f.base);
        // A metamethod or callback without a loop (`__lt`, `__add`, a sort comparator) runs
        // in the plain loop with the JIT on: entering the portal again for it, and compiled
        // code from there, costs more than the call (oop.lua, 3 million such calls: 2.44 s
        // against 0.96 s). `--jitcode` keeps running them as jitcode, which the conformance
        // suite compares with the plain loop.
        let small = std::mem::take(&mut self.small_call);
        if small && !proto.loops && self.mode == crate::Mode::Jit {
            return self.execute(depth);
        }
        let r = if self.mode == crate::Mode::Jitcode {
            crate::jit::portal::run_jitcode(self, proto, pc, base, depth)
        } else {
            crate::jit::portal(self, proto, pc, base, depth)
        };
        if r == crate::jit::ERROR {
            return Err(self.pending.take().expect("an error is pending"));
        }
        Ok(())
    }

    /// Calls `f` and returns its first result.
    pub fn call1(&mut self, f: &Value, args: Vec<Value>) -> LResult<Value> {
        self.call1s(f, &args)
    }

    /// Calls `f` with the arguments in a slice and returns its first result (no vectors: the
    /// metamethod calls of the VM).
    pub fn call1s(&mut self, f: &Value, args: &[Value]) -> LResult<Value> {
        let was = std::mem::replace(&mut self.small_call, true);
        let slot = self.call_in_place(f, args, true);
        self.small_call = was;
        let slot = slot?;
        let v = if self.top > slot {
            std::mem::take(&mut self.stack[slot])
        } else {
            Value::Nil
        };
        self.top = slot;
        Ok(v)
    }

    /// Starts a call of the value at `func` with `nargs` arguments after it, wanting `nres`
    /// results (-1: all). A Lua function gets a new frame (returns true: the dispatch loop
    /// runs it); a native runs now and its results are stored from `func` (returns false).
    pub(crate) fn precall(
        &mut self,
        func: usize,
        nargs: usize,
        nres: i32,
        from_lua: bool,
    ) -> LResult<bool> {
        let mut nargs = nargs;
        for _ in 0..100 {
            match &self.stack[func] {
                Value::LFunc(_) => {
                    if self.frames.len() >= MAX_FRAMES {
                        return Err(self.rt_error("stack overflow"));
                    }
                    self.push_lua(func, nargs, nres);
                    return Ok(true);
                }
                Value::Builtin(n) => {
                    let n = *n;
                    // The arguments are copied into a buffer kept for the next call; they
                    // also stay in their slots (dead after the call: the results overwrite
                    // them), where the collector sees them while the native runs.
                    let mut args = std::mem::take(&mut self.native_args);
                    args.extend_from_slice(&self.stack[func + 1..func + 1 + nargs]);
                    self.cur_native = (Some(n), from_lua);
                    let r = (n.f)(self, &args);
                    self.cur_native.0 = None;
                    args.clear();
                    if args.capacity() <= 64 {
                        self.native_args = args;
                    }
                    let rets = r?;
                    self.place_results(func, rets, nres);
                    return Ok(false);
                }
                v => {
                    let h = self.metamethod(v, &self.tm.call.clone());
                    if matches!(h, Value::Nil) {
                        return Err(self.call_error(func));
                    }
                    self.ensure_stack(func + nargs + 2);
                    for i in (func..=func + nargs).rev() {
                        self.stack[i + 1] = std::mem::take(&mut self.stack[i]);
                    }
                    self.stack[func] = h;
                    nargs += 1;
                }
            }
        }
        Err(self.rt_error("'__call' chain too long; possible loop"))
    }

    /// The common call: pushes the frame of the Lua function in `stack[func]` with `nargs`
    /// arguments after it, wanting `nres` results, when there is room for a frame. The caller
    /// has saved its pc. False (nothing done) otherwise: the general path (`precall`) handles
    /// natives, `__call` and the overflow error.
    #[inline(always)]
    pub(crate) fn enter_lua(&mut self, func: usize, nargs: usize, nres: i32) -> bool {
        if !matches!(self.stack[func], Value::LFunc(_)) || self.frames.len() >= MAX_FRAMES {
            return false;
        }
        self.push_lua(func, nargs, nres);
        true
    }

    /// Pushes the frame of the Lua function in `stack[func]` (checked by the caller, with the
    /// frame count): its missing parameters nil, its extra arguments moved to `varargs` if it
    /// takes `...`.
    #[inline(always)]
    fn push_lua(&mut self, func: usize, nargs: usize, nres: i32) {
        // The frame owns the closure from here on: moved out of the function slot.
        let cl = exec::take_closure(&mut self.stack[func]);
        let p = cl.proto;
        let base = func + 1;
        let np = p.nparams as usize;
        self.ensure_stack(base + p.maxstack as usize + nargs + 1);
        let va_start = self.varargs.len() as u32;
        let mut va_len = 0;
        if p.is_vararg && nargs > np {
            let extra = &mut self.stack[base + np..base + nargs];
            self.varargs.extend(extra.iter_mut().map(std::mem::take));
            va_len = (nargs - np) as u32;
        }
        for i in nargs..np {
            self.stack[base + i] = Value::Nil;
        }
        self.frames.push(Frame {
            cl,
            base,
            pc: 0,
            nres,
            va_start,
            va_len,
            boundary: false,
            from_native: false,
            fin: 0,
        });
    }

    /// The common tail call: the Lua function in `stack[func]` with `nargs` arguments after it
    /// takes over the running frame at `base` in place, when it takes no `...`. False
    /// (nothing done) otherwise.
    #[inline(always)]
    pub(crate) fn tail_lua(&mut self, base: usize, func: usize, nargs: usize) -> bool {
        let Value::LFunc(f) = self.stack[func] else {
            return false;
        };
        let p = f.proto;
        if p.is_vararg {
            return false;
        }
        if self.open_top > base {
            self.close_upvals(base);
        }
        let f = exec::take_closure(&mut self.stack[func]);
        for i in 1..=nargs {
            self.stack[base - 1 + i] = std::mem::take(&mut self.stack[func + i]);
        }
        self.ensure_stack(base + p.maxstack as usize + nargs + 1);
        for i in nargs..p.nparams as usize {
            self.stack[base + i] = Value::Nil;
        }
        let fi = self.frames.len() - 1;
        let fr = &mut self.frames[fi];
        fr.cl = f;
        fr.pc = 0;
        if fr.va_len > 0 {
            let end = fr.va_start as usize;
            fr.va_len = 0;
            self.varargs.truncate(end);
        }
        true
    }

    /// The common return: pops the running frame (whose registers start at `base`), closing
    /// its upvalues, and moves its `n` results from stack slot `from` to its function slot,
    /// padded with nils or cut to the number the caller wants. Returns the popped frame.
    #[inline(always)]
    pub(crate) fn leave_lua(&mut self, base: usize, from: usize, n: usize) -> Frame {
        if self.open_top > base {
            self.close_upvals(base);
        }
        let f = self.frames.pop().unwrap();
        if f.va_len > 0 {
            self.varargs.truncate(f.va_start as usize);
        }
        // The function slot is nil (the frame took the closure out of it), so the first
        // result is written without a drop.
        let dest = base - 1;
        let want = if f.nres < 0 { n } else { f.nres as usize };
        if n >= 1 && want == 1 {
            // As two words: the result was often written as two words just before (`return
            // a + b`), and a 16-byte load of it would wait for them (`exec::copy_words`).
            assert!(dest < from && from < self.stack.len());
            let p = self.stack.as_mut_ptr();
            // SAFETY: both slots are in the stack (`dest < from < len`).
            unsafe { exec::copy_words(p.add(from), p.add(dest)) };
        } else {
            for i in 0..n {
                self.stack[dest + i] = std::mem::take(&mut self.stack[from + i]);
            }
            for i in n..want {
                self.stack[dest + i] = Value::Nil;
            }
        }
        self.top = dest + want;
        if f.fin != 0 {
            crate::jit::finish_meta(self, f.fin, dest);
        }
        f
    }

    /// Pops frames down to `depth` (an error unwinding), with their extra arguments.
    pub(crate) fn truncate_frames(&mut self, depth: usize) {
        self.frames.truncate(depth);
        let end = self
            .frames
            .last()
            .map_or(0, |f| (f.va_start + f.va_len) as usize);
        self.varargs.truncate(end);
    }

    fn place_results(&mut self, func: usize, rets: crate::value::Rets, nres: i32) {
        let n = rets.len();
        let want = if nres < 0 { n } else { nres as usize };
        self.ensure_stack(func + want.max(n) + 1);
        for (i, v) in rets.into_iter().enumerate() {
            if i >= want {
                break;
            }
            self.stack[func + i] = v;
        }
        for i in n..want {
            self.stack[func + i] = Value::Nil;
        }
        self.top = func + want;
    }

    /// Finds or creates the open upvalue for stack slot `idx`.
    pub(crate) fn find_upval(&mut self, idx: usize) -> Gc<UpVal> {
        match self.open_upvals.binary_search_by_key(&idx, |u| u.0) {
            Ok(i) => self.open_upvals[i].1,
            Err(i) => {
                let c = UpVal::new(Up::Open(idx));
                self.open_upvals.insert(i, (idx, c));
                self.open_top = self.open_top.max(idx + 1);
                c
            }
        }
    }

    /// Closes the open upvalues at slots `level` and above.
    #[inline]
    pub(crate) fn close_upvals(&mut self, level: usize) {
        while let Some((idx, _)) = self.open_upvals.last() {
            if *idx < level {
                break;
            }
            let (idx, cell) = self.open_upvals.pop().unwrap();
            cell.v.set(Up::Shut(self.stack[idx]));
        }
        self.open_top = self.open_upvals.last().map_or(0, |u| u.0 + 1);
    }

    /// Runs a loaded main chunk with `args` as its varargs. The caller holds `f` and
    /// `args` in no place that it uses afterwards: collections may happen during the run.
    pub fn run_main(&mut self, f: &Value, args: Vec<Value>) -> LResult<Vec<Value>> {
        self.call_rooted(f, args)
    }

    /// Reads a global.
    pub fn get_global(&self, name: &str) -> Value {
        self.globals.get(&Value::interned(name))
    }

    /// Sets a global.
    pub fn set_global(&mut self, name: &str, v: Value) {
        self.globals.set(Value::interned(name), v);
    }

    /// A native function value whose body captures no value of the heap.
    pub fn native(
        name: &str,
        f: impl Fn(&mut Vm, &[Value]) -> LResult<crate::value::Rets> + 'static,
    ) -> Value {
        Vm::native_keeping(name, vec![], f)
    }

    /// A native function value whose body captured the values in `keep` (all of those it
    /// captured that hold a `Gc`: the collector traces `keep`, not the closure).
    pub fn native_keeping(
        name: &str,
        keep: Vec<Value>,
        f: impl Fn(&mut Vm, &[Value]) -> LResult<crate::value::Rets> + 'static,
    ) -> Value {
        Value::Builtin(Gc::new(Native {
            name: name.to_string(),
            f: Box::new(f),
            keep,
        }))
    }

    /// Whether a backward jump of the plain loop should try to collect: the heap asks for
    /// it (one thread-local load).
    #[inline(always)]
    pub(crate) fn gc_wanted(&self) -> bool {
        gc::collection_wanted()
    }

    /// Whether a call or return of the plain loop should try to collect: the heap asks for
    /// it, or the stress mode's count ran out (checked here only: at backward jumps the
    /// stress mode's test cost mandelbrot 15% with `--no-jit`).
    #[inline(always)]
    pub(crate) fn gc_wanted_at_call(&self) -> bool {
        gc::collection_wanted() || (self.gc_stress != 0 && self.stress_tick())
    }

    #[cold]
    #[inline(never)]
    fn stress_tick(&self) -> bool {
        let left = self.gc_stress_left.get();
        if left > 1 {
            self.gc_stress_left.set(left - 1);
            return false;
        }
        self.gc_stress_left.set(self.gc_stress);
        true
    }

    /// A safe point of the plain loop (a backward jump, a call), when the heap asks for a
    /// collection: collects with the VM as the only root unless a native function that holds
    /// values the VM does not reach is active (`gc_holds`), or part of the JIT is running
    /// (the plain loop runs inside a residual call of compiled code, the tracer or jitcode:
    /// compiled code's own safe point after the call takes the heap's request).
    #[cold]
    #[inline(never)]
    pub(crate) fn collect_garbage(&mut self) {
        if self.gc_holds > 0 || gc::jit_active() {
            return;
        }
        let mut roots = Tracer::new();
        roots.root(&*self);
        // SAFETY: every `Gc` the interpreter uses again is reachable from the VM: its stack
        // (with the arguments of running natives, which stay in their slots), frames (which
        // own their closures), open upvalues, varargs, globals, metatables, pending error,
        // the running native and, through `thread_roots`, the interned strings (the
        // prototypes' string constants among them) and the shared empty array part. The
        // Rust frames below this one hold no other `Gc`: the dispatch loop keeps only
        // prototypes (never freed) and a closure that its frame owns; natives that hold
        // values in Rust locals across a call into Lua raise `gc_holds`, and then this does
        // not run; the only natives that do not (`pcall`, `xpcall`, the main chunk's call)
        // use afterwards only their arguments, which stay on the stack. Constants of compiled
        // traces are pinned by the framework, and `collect_in_interpreter` refuses while the
        // JIT's own frames (compiled code, tracer, blackhole, jitcode) are on the stack.
        // (It can still decline: a `RefCell` borrowed mutably abandons the collection.)
        let _ = unsafe { gc::collect_in_interpreter(&roots) };
    }
}

impl Default for Vm {
    fn default() -> Vm {
        Vm::new()
    }
}

pub use debug::Desc;

/// No operand description (for library calls of `Vm::index` and friends).
pub fn debug_none() -> Desc {
    Desc::None
}
