//! Objects an interpreter allocates in traced code: the [`Gc`] pointer, the heap it points
//! into, and the collector that frees unreachable objects.
//!
//! `Gc::new(Obj { .. })` is the allocation the codewriter can see: in an annotated function
//! it lowers to a jitcode `new` with `Obj`'s size descriptor followed by one store per field,
//! the tracer records it as the trace IR's `new`, and the optimizer removes it when the object
//! does not escape the trace (see the book's chapter "Objects, allocation removal and
//! memory").
//!
//! Memory: every object of this heap comes from [`alloc_object`] (the native `Gc::new`, the
//! jitcode runner, the tracer, compiled code, whose fast path is inline, and resume when it
//! rebuilds a virtual object): a cell of the non-moving heap of [`heap`], or an allocation of
//! its own when it is over 256 bytes.
//!
//! # Object kinds
//!
//! `Gc::new` accepts any `T: Trace`. A *plain* type ([`Trace::INLINE`]: every `Gc` it holds
//! is a word of its own bytes, and no drop glue: what `#[derive(JitLayout)]` structs of
//! scalars, `Gc`s and `Option<Gc>`s are) gets no header: the collector scans its objects word
//! by word, and traced code and compiled code allocate them inline. Any other type (a
//! `Vec<Value>`, a `Box<[u8]>`, a `String`, a `hashbrown::HashMap`, a `RefCell` holding `Gc`s)
//! is *typed*: its objects carry a one-word header that points to a static descriptor of the
//! type, with a trace function (the type's `Trace` impl: precise, through the memory the
//! object owns) and a drop function (when `std::mem::needs_drop::<T>()`), which the collector
//! runs on the objects it frees. Traced code allocates only plain types (`lower::gc_new`
//! asserts it at compile time); native interpreter code allocates both.
//!
//! A typed object's `Drop` runs during a collection, with the other objects it freed dropped
//! in any order before or after it: a `Drop` must not read a `Gc` (the object may already be
//! dropped, its memory reused later), nor allocate in the heap or look at it (`Gc::new` or
//! `gc::stats` panic there). `#[derive(Trace)]` refuses a type that implements `Drop`, so only
//! a hand-written `unsafe impl Trace` can give a type with `Gc`s a `Drop` of its own (and its
//! `SAFETY` promises the rule); the drop glue of fields (a `Vec`'s buffer, a `String`) is
//! always fine.
//!
//! # Safety model
//!
//! Safe code cannot free an object: nothing frees one unless an `unsafe` call allowed it.
//! With no such call a `Gc<T>` stays valid for the rest of the program (the heap then only
//! grows), exactly as before the collector existed. Two `unsafe` entry points free memory:
//!
//! - [`collect`], whose caller names every root;
//! - [`enable_collection`], which lets the portals of this thread collect at their safe points:
//!   at a native `can_enter_jit!` (the loop's back edge, where every live variable of the
//!   portal is a green or a red), when the heap has handed out its threshold since the last
//!   collection. The roots are then that portal's greens and reds, through [`Trace`]. The
//!   caller promises that they are the only roots: no `Gc` the program still uses is held
//!   elsewhere (an older stack frame, a thread-local, memory that no green or red reaches
//!   through `Trace`).
//!
//! What the framework checks at run time, so the contract is no larger than that: a safe point
//! collects only when exactly one portal call is active on the thread (so no compiled code,
//! tracer or blackhole interpreter is on the stack with objects in its registers: they run
//! inside a portal call, and a safe point inside them would be a nested one), when every green
//! and red implements [`Trace`] (otherwise it skips, and counts it in [`HeapStats`]), and never
//! while an allocation `crate::alloc::Tracker` is alive. The constants of compiled traces
//! (in machine code and resume data) are pinned while their trace's code lives (from when the
//! backend compiles it until it is freed). Inside a plain object every `Gc` is a word of the
//! object, so the collector scans it word by word with no type information, and compiled
//! code's inline allocation writes no header; inside a typed object, its `Trace` impl finds
//! them. A `RefCell` that is mutably borrowed while the collector marks cannot be read: the
//! collection is then abandoned and frees nothing ([`HeapStats`]'s `abandoned`).
//!
//! Compiled code collects too, in its allocation slow path (`alloc::jit_alloc`), under the
//! same conditions and one more compiled run active: its roots are the portal's greens and
//! reds as the `can_enter_jit!` that entered it saw them, and, conservatively, its native
//! stack, callee-saved registers and deadframe (see `gc/compiled.rs`, which also says when
//! the greens and reds it saw are not trusted). `enable_collection`'s contract adds that the
//! loop does not make a red that points to memory holding `Gc`s point elsewhere.
//!
//! Owns: the `Gc` type, the one allocation function of interpreter objects, the collection
//! entry points and their contracts. Must not know: jitcode, traces or any guest language.

mod compiled;
pub mod heap;
mod trace;

use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

#[doc(hidden)]
pub use compiled::with_portal_roots;
pub(crate) use compiled::Run;
use heap::TypeInfo;
pub use heap::{stats, HeapStats};
#[doc(hidden)]
pub use trace::probe;
pub use trace::{Trace, Tracer};

/// Allocates a zeroed object of `size` bytes aligned to `align` (a power of two) in the heap
/// of interpreter objects and returns its address. Every allocator of the pipeline calls this.
pub fn alloc_object(size: usize, align: usize) -> usize {
    crate::alloc::alloc_zeroed(size, align)
}

/// A pointer to an interpreter object of type `T` in the framework's heap: `Copy`, one word,
/// never null, valid until an `unsafe` collection that the program's roots do not reach it
/// from (see the module's safety model). Read the object through `Deref`; mutate it
/// only through cells inside it.
///
/// In traced code, `Gc::new(T { f: e, .. })` with a struct literal is an allocation the JIT
/// sees (`T` needs `#[derive(JitLayout)]`); `g.f` reads a field like through a reference, and
/// `g.c.get()` / `g.c.set(v)` read and write a `Cell` field (see `lower::cell`). An optional
/// link is an `Option<Gc<T>>`, one nullable word (see `lower::nullable`).
pub struct Gc<T: 'static> {
    ptr: NonNull<T>,
    _owns: PhantomData<&'static T>,
}

/// The descriptor of a typed `T` (see the module's object kinds): a header is its address.
struct Info<T>(PhantomData<T>);

impl<T: Trace + 'static> Info<T> {
    const INFO: &'static TypeInfo = &TypeInfo {
        trace: trace_object::<T>,
        drop: if std::mem::needs_drop::<T>() {
            Some(drop_object::<T>)
        } else {
            None
        },
    };
}

/// The trace function of a typed `T`.
///
/// # Safety
/// `addr` is the address of an initialized `T` of the heap, not dropped.
unsafe fn trace_object<T: Trace>(addr: usize, t: &mut Tracer) {
    // SAFETY: the caller's promise; only a shared reference, during a collection (no `&mut`
    // to a heap object exists: `Gc` hands out shared ones).
    unsafe { &*(addr as *const T) }.trace(t)
}

/// The drop function of a typed `T`.
///
/// # Safety
/// `addr` is the address of an initialized `T` of the heap that nothing uses again and that
/// is dropped once.
unsafe fn drop_object<T>(addr: usize) {
    // SAFETY: the caller's promise.
    unsafe { std::ptr::drop_in_place(addr as *mut T) }
}

impl<T: 'static> Gc<T> {
    /// Moves `value` into a new object of the heap: a plain one if `T` holds its `Gc`s in its
    /// own bytes ([`Trace::INLINE`]) and has no drop glue, else a typed one, whose `Drop` runs
    /// when a collection frees it (see the module's object kinds for what a `Drop` may not
    /// do). Without a collection, the object lives (and is never dropped) for the rest of the
    /// program.
    pub fn new(value: T) -> Gc<T>
    where
        T: Trace,
    {
        let layout = std::alloc::Layout::new::<T>();
        let plain = T::INLINE && !std::mem::needs_drop::<T>();
        // Never recorded by an allocation tracker (which frees what it records).
        let addr = if plain {
            crate::alloc::alloc_untracked(layout.size(), layout.align())
        } else {
            crate::alloc::alloc_with_header(layout.size(), layout.align())
        };
        let ptr = NonNull::new(addr as *mut T).expect("the allocator never returns null");
        // SAFETY: `addr` is a fresh allocation with `T`'s size and alignment (zeroed if plain;
        // a typed one's bytes are whatever its cell held, all overwritten here), owned by
        // nobody else; writing moves `value` in.
        unsafe { ptr.as_ptr().write(value) };
        if !plain {
            // SAFETY: a typed object has its header word just before it, in its allocation;
            // written after the object, so a header that is not 0 always describes an
            // initialized object (no collection runs in between anyway).
            unsafe {
                ((addr - heap::HEADER) as *mut usize)
                    .write(Info::<T>::INFO as *const TypeInfo as usize)
            };
        }
        Gc {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Whether `a` and `b` point to the same object.
    pub fn ptr_eq(a: Gc<T>, b: Gc<T>) -> bool {
        a.ptr == b.ptr
    }

    /// The object's address.
    pub fn as_ptr(self) -> *const T {
        self.ptr.as_ptr()
    }

    /// A `Gc` from the address of an object of this heap.
    ///
    /// # Safety
    /// `addr` is the address of a live `T` allocated by [`alloc_object`] and initialized (by
    /// [`Gc::new`], by traced code or by the JIT), that no collection has freed.
    pub unsafe fn from_addr(addr: usize) -> Gc<T> {
        Gc {
            ptr: NonNull::new(addr as *mut T).expect("a Gc is never null"),
            _owns: PhantomData,
        }
    }
}

impl<T: 'static> Clone for Gc<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: 'static> Copy for Gc<T> {}

impl<T: 'static> std::ops::Deref for Gc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: objects of this heap are initialized when a `Gc` to them exists and are
        // freed only by a collection whose caller vouched that this `Gc` is not used after
        // it unless a root reaches it; only shared references are handed out.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: fmt::Debug + 'static> fmt::Debug for Gc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Whether this thread's portals may collect at their safe points ([`enable_collection`]).
pub fn collection_enabled() -> bool {
    heap::enabled()
}

/// Lets the portals of this thread collect at their safe points (a native `can_enter_jit!`
/// when the heap asks for it), with the portal's greens and reds as the roots.
///
/// # Safety
/// Until [`disable_collection`], at every `can_enter_jit!` of a portal on this thread, every
/// `Gc` the program will use again is reachable through [`Trace`] from that portal's greens
/// and reds (or is a constant of a compiled trace): none is kept only in a caller's frame, a
/// thread-local or a static, a `Vec` that no green or red reaches, or the like. While compiled
/// code runs, the same holds of the greens and reds as the `can_enter_jit!` that entered it
/// saw, with the values compiled code holds: a red that is a reference to memory holding `Gc`s
/// (`out: &mut Out`) is not made to point elsewhere by the loop. A portal whose reference
/// greens are all `&'static` (see `JitDriver::with_static_greens`) collects in compiled code
/// that moved on to other greens, which no root reports: every `Gc` held by an object such a
/// green references must also be reachable from the reds (or be a trace constant). The thread runs jitcode and
/// compiled code only through its portals (not `Backend::run` or `run_jitcode` around a
/// portal call). The framework checks the rest (see the module's safety model).
pub unsafe fn enable_collection() {
    heap::set_enabled(true)
}

/// Stops the safe points of this thread from collecting (safe: it only keeps more memory).
pub fn disable_collection() {
    heap::set_enabled(false)
}

/// Sets how much this thread's heap hands out, at least, between two collections at safe
/// points (`0`: the default, 4 MiB); the threshold is this or twice the bytes live after the
/// last collection, whichever is more. Tests set it low to collect often.
pub fn set_collection_threshold(bytes: usize) {
    heap::set_min_threshold(bytes)
}

/// Counts `bytes` of memory that objects of this heap own out of line (a buffer a typed object
/// allocated natively: a table's array part, a string's bytes) toward the next collection, as
/// if the heap had handed them out, so that a program whose small objects hold big buffers
/// collects as its real footprint grows. Call it when such memory is allocated or grows; the
/// collector does not count it as live after a collection (the next threshold is set by the
/// heap's own live bytes).
pub fn note_external_bytes(bytes: usize) {
    heap::note_external(bytes)
}

/// Frees every object of this thread's heap that `roots` do not reach, now.
///
/// # Safety
/// Every `Gc` the program will use again is reachable through [`Trace`] from `roots` (or is
/// a constant of a compiled trace); no compiled code, tracer, jitcode runner or blackhole
/// interpreter is running on this thread (their registers would not be roots). Does nothing
/// while an allocation `crate::alloc::Tracker` is alive.
pub unsafe fn collect(roots: &Tracer) {
    if crate::alloc::tracking() {
        return;
    }
    if roots.blocked {
        heap::note_abandoned();
        return;
    }
    // SAFETY: forwarded.
    unsafe { heap::collect(&roots.words) }
}

/// Collects with `roots` now, as [`collect`] does, if no part of the JIT is running on this
/// thread (no compiled code, tracer, blackhole interpreter or jitcode runner: their registers
/// would not be roots); returns whether it collected. For an interpreter's own safe points in
/// code that also runs as a residual call of traced code (a plain dispatch loop that a portal
/// calls): there it does nothing, and the heap's request stays up until compiled code's safe
/// point after the call, or the next call made outside the JIT, takes it.
///
/// # Safety
/// Every `Gc` the program will use again is reachable through [`Trace`] from `roots`, apart
/// from those that only the JIT's own frames hold (or a constant of a compiled trace).
pub unsafe fn collect_in_interpreter(roots: &Tracer) -> bool {
    if jit_active() || crate::alloc::tracking() {
        return false;
    }
    if roots.blocked {
        heap::note_abandoned();
        return false;
    }
    // SAFETY: forwarded; nothing of the JIT runs on this thread, so `roots` are all of them.
    unsafe { heap::collect(&roots.words) };
    true
}

/// Whether some part of the JIT (the driver handling a hot loop or function entry, compiled
/// code, the tracer, the blackhole interpreter, a jitcode run) is running on this thread, so
/// that [`collect_in_interpreter`] would refuse: one thread-local load, for a safe point to
/// skip gathering its roots.
#[inline]
pub fn jit_active() -> bool {
    JIT_ACTIVE.with(|a| a.get()) != 0
}

thread_local! {
    /// How many JIT activities (driver entries and jitcode runs) are on this thread's stack.
    static JIT_ACTIVE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A JIT activity on the native stack (the driver handling a hot `can_enter_jit!` or
/// function entry, or a jitcode run), from [`JitActive::enter`] until dropped:
/// [`collect_in_interpreter`] does nothing meanwhile.
pub(crate) struct JitActive(());

impl JitActive {
    pub(crate) fn enter() -> JitActive {
        JIT_ACTIVE.with(|a| a.set(a.get() + 1));
        JitActive(())
    }
}

impl Drop for JitActive {
    fn drop(&mut self) {
        JIT_ACTIVE.with(|a| a.set(a.get() - 1));
    }
}

/// Whether a safe point should collect now: collection is enabled and the heap has handed
/// out its threshold since the last collection. One thread-local load; the `#[jit::interpreter]`
/// expansion tests it at every native `can_enter_jit!`.
#[inline]
pub fn collection_wanted() -> bool {
    heap::wanted()
}

/// A portal's safe point (the `#[jit::interpreter]` expansion of `can_enter_jit!`, when
/// [`collection_wanted`]): collects with `roots` (the portal's greens and reds) unless one of
/// them is opaque, more than one portal call is active, or a tracker is alive.
///
/// # Safety
/// Called only by the expansion, with every green and red of the portal in `roots`.
#[doc(hidden)]
pub unsafe fn __safepoint(roots: Tracer) {
    if !heap::enabled() || crate::warm::portal_depth() != 1 || crate::alloc::tracking() {
        return;
    }
    if roots.opaque {
        heap::note_untraceable();
        // Ask again only after another threshold's worth of allocation.
        heap::defer();
        return;
    }
    if roots.blocked {
        heap::note_abandoned();
        return;
    }
    // SAFETY: `enable_collection`'s contract makes the greens and reds the only roots; one
    // portal call is active and we are at its native `can_enter_jit!`, so no compiled code,
    // tracer or blackhole interpreter is running.
    unsafe { heap::collect(&roots.words) }
}

/// The anchors `roots` reports (see `with_portal_roots`), if collection is enabled and the
/// roots are not opaque; `None` otherwise (no compiled run collects).
pub(crate) fn anchors(roots: &dyn Fn(&mut Tracer)) -> Option<Vec<usize>> {
    if !heap::enabled() {
        return None;
    }
    let mut t = Tracer {
        shallow: true,
        ..Tracer::default()
    };
    roots(&mut t);
    (!t.opaque).then_some(t.anchors)
}

/// The allocation slow path of compiled code (`alloc::jit_alloc`) when the heap asks for a
/// collection: collects with the roots `compiled` finds (the portal's greens and reds as of
/// the run's entry, and conservatively the run's stack, registers and deadframe), if
/// collection is enabled and exactly one portal call and one compiled run are active.
pub(crate) fn collect_in_compiled_code() {
    if !heap::enabled() || crate::alloc::tracking() {
        return;
    }
    let Some(t) = compiled::roots() else {
        return;
    };
    if t.opaque {
        heap::note_untraceable();
        heap::defer();
        return;
    }
    if t.blocked {
        heap::note_abandoned();
        return;
    }
    // SAFETY: `enable_collection`'s contract makes the portal's greens and reds the only roots
    // besides what compiled code holds; the one compiled run, suspended in this slow path,
    // holds its values in registers, its stack frame and its deadframe, all in `t`; no tracer
    // or blackhole interpreter runs while compiled code does.
    unsafe { heap::collect(&t.words) };
    heap::note_in_compiled_code();
}

/// Makes every constant of `consts` that points into the heap a root until the returned
/// [`Pins`] is dropped (the backend keeps them with each trace it compiles: the constants are
/// baked into machine code and resume data, and live as long as the trace's code).
pub(crate) fn pin_constants(consts: &[crate::ir::Const]) -> Pins {
    let mut words = Vec::new();
    for c in consts {
        if let crate::ir::Const::Value(v) = c {
            let w = v.bits() as usize;
            if heap::pin(w) {
                words.push(w);
            }
        }
    }
    Pins(words)
}

/// The heap objects a compiled trace names, kept alive until it is dropped (with the trace's
/// code).
pub(crate) struct Pins(Vec<usize>);

impl Drop for Pins {
    fn drop(&mut self) {
        heap::unpin(&self.0);
    }
}

#[cfg(test)]
mod tests;
