//! Memory that traces allocate (`new`, `new_array`, and virtual objects materialized on a
//! guard failure), and the objects of [`crate::gc`]: the allocation front. Every allocator of
//! the pipeline (the native `Gc::new`, the jitcode runner, the reference interpreter, compiled
//! code, resume) goes through [`alloc_zeroed`] (compiled code inlines its fast path, see
//! [`Nursery`]), except `Gc::new` of a typed object (one with a header, see `gc::heap`), which
//! goes through `alloc_with_header`; and tests can ask which addresses are objects allocated
//! by traces ([`Tracker`]).
//!
//! Small objects (at most [`MAX_SMALL`] bytes, aligned to at most 8) are carved from one of the
//! thread's [`Nursery`] regions, one per size class (multiples of 8 bytes): a bump pointer over
//! a free, zeroed run of cells of that size in a chunk of the collected heap
//! ([`crate::gc::heap`], which owns the chunks, finds the next free run when a region is used
//! up, and frees unreachable cells when a collection runs). Typed objects have regions of their
//! own (the typed size classes), which compiled code never sees. Larger objects come from the
//! global allocator, one allocation each, which the heap frees when a collection finds them
//! unreachable. While a [`Tracker`] is alive on the thread the (plain) nurseries are empty and
//! every allocation of traces is an individual one the tracker records and frees when dropped.
//!
//! Owns: the nurseries' fast path, the size classes, the tracker, the count of the bytes the
//! heap holds. Must not know: how the heap finds free cells or marks objects (`gc::heap`),
//! jitcode, traces, or any guest language.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};

/// The largest object the nurseries serve (bytes).
pub const MAX_SMALL: usize = 256;
/// The number of size classes: 8, 16, .., [`MAX_SMALL`] bytes.
pub(crate) const CLASSES: usize = MAX_SMALL / 8;

thread_local! {
    static TRACKED: RefCell<Option<Vec<(usize, Layout)>>> = const { RefCell::new(None) };
    static NURSERIES: [Nursery; CLASSES] = const { [const { Nursery::empty() }; CLASSES] };
    static TYPED_NURSERIES: [Nursery; CLASSES] =
        const { [const { Nursery::empty() }; CLASSES] };
    /// The bytes the heap holds now, and the most it has held.
    static RESERVED: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// The most bytes this thread's heap has held from the system at once so far (chunks and
/// objects outside them, and the objects of trackers): the heap's peak footprint, which never
/// goes down. Tests use it to check that memory stays bounded; [`crate::gc::stats`] has the
/// current sizes.
pub fn reserved_bytes() -> usize {
    RESERVED.with(|r| r.get().1)
}

/// Counts `bytes` taken from the system for the heap.
pub(crate) fn note_reserved(bytes: usize) {
    RESERVED.with(|r| {
        let (now, peak) = r.get();
        r.set((now + bytes, peak.max(now + bytes)));
    });
}

/// Counts `bytes` of the heap returned to the system.
pub(crate) fn note_released(bytes: usize) {
    RESERVED.with(|r| {
        let (now, peak) = r.get();
        r.set((now.saturating_sub(bytes), peak));
    });
}

/// A thread's bump-pointer region for one size class: objects are carved from `top` up to
/// `end`, in zeroed cells nothing uses. Compiled code reads and advances `top` itself (`top` at
/// offset 0, `end` at 8) and calls [`jit_alloc`] only when the object does not fit. An empty
/// region has `top == end == 0`.
#[repr(C)]
pub struct Nursery {
    top: Cell<usize>,
    end: Cell<usize>,
}

impl Nursery {
    const fn empty() -> Nursery {
        Nursery {
            top: Cell::new(0),
            end: Cell::new(0),
        }
    }

    #[inline(always)]
    fn bump(&self, size: usize) -> Option<usize> {
        let top = self.top.get();
        let new = top.checked_add(size)?;
        (top != 0 && new <= self.end.get()).then(|| {
            self.top.set(new);
            top
        })
    }

    /// Makes `[top, end)` the region (the heap's slow path; `0, 0` empties it).
    pub(crate) fn set(&self, top: usize, end: usize) {
        self.top.set(top);
        self.end.set(end);
    }
}

/// The size class of a small object of `size` bytes.
#[inline(always)]
pub(crate) fn class_of(size: usize) -> usize {
    nursery_size(size) / 8 - 1
}

/// The cell size of class `class` (bytes).
#[inline(always)]
pub(crate) fn class_size(class: usize) -> usize {
    (class + 1) * 8
}

/// Runs `f` on the nursery of size class `class`.
#[inline(always)]
pub(crate) fn with_nursery<R>(class: usize, f: impl FnOnce(&Nursery) -> R) -> R {
    NURSERIES.with(|n| f(&n[class]))
}

/// Runs `f` on the region of typed size class `class` (objects with a header).
#[inline(always)]
pub(crate) fn with_typed_nursery<R>(class: usize, f: impl FnOnce(&Nursery) -> R) -> R {
    TYPED_NURSERIES.with(|n| f(&n[class]))
}

/// Empties the nursery regions of the thread that compiled code allocates from (not the typed
/// ones): its next allocation takes the slow path.
pub(crate) fn empty_plain_nurseries() {
    NURSERIES.with(|ns| ns.iter().for_each(|n| n.set(0, 0)));
}

/// Empties every nursery region of the thread, typed ones included (before a collection, and
/// when a tracker starts).
pub(crate) fn empty_nurseries() {
    NURSERIES.with(|ns| ns.iter().for_each(|n| n.set(0, 0)));
    TYPED_NURSERIES.with(|ns| ns.iter().for_each(|n| n.set(0, 0)));
}

/// The address of this thread's [`Nursery`] for objects of `size` bytes, for compiled code
/// (which runs only on the thread of the driver that compiled it; the nurseries live as long
/// as the thread).
pub fn nursery_addr_for(size: usize) -> usize {
    NURSERIES.with(|n| &n[class_of(size)] as *const Nursery as usize)
}

/// The size a small object takes in the nursery (rounded up to 8 bytes).
#[inline(always)]
pub fn nursery_size(size: usize) -> usize {
    (size.max(1) + 7) & !7
}

/// Whether an allocation [`Tracker`] is alive on this thread.
pub(crate) fn tracking() -> bool {
    TRACKED.with(|t| t.borrow().is_some())
}

/// Allocates `size` zeroed bytes aligned to `align` (a power of two; 0 means 8) and returns
/// the address. Aborts on allocation failure, as `Box::new` does.
pub fn alloc_zeroed(size: usize, align: usize) -> usize {
    let align = if align == 0 { 8 } else { align };
    if align <= 8 && size <= MAX_SMALL {
        let class = class_of(size);
        if let Some(p) = with_nursery(class, |n| n.bump(class_size(class))) {
            return p;
        }
        if !tracking() {
            return crate::gc::heap::refill(class, false);
        }
    }
    if !tracking() {
        return crate::gc::heap::alloc_large(size, align, false);
    }
    let layout = Layout::from_size_align(size.max(1), align).expect("bad allocation layout");
    let p = global_zeroed(layout);
    TRACKED.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            v.push((p, layout))
        }
    });
    p
}

/// Allocates a typed object of `size` bytes aligned to `align` (a power of two) with a
/// header word just before it, which is 0 and which the caller sets once the object is
/// written (see `gc::heap`), and returns the object's address. The object's bytes are not
/// zeroed: the caller writes the whole object. Never tracked.
///
/// Inline, so that `Gc::new` of a given type computes its size class at compile time and
/// its fast path is a bump of the class's region; the slow paths are calls (out of line, the
/// function's prologue and the size tests were 3.5% of binarytrees.lua's instructions).
#[inline(always)]
pub(crate) fn alloc_with_header(size: usize, align: usize) -> usize {
    use crate::gc::heap::HEADER;
    if align <= 8 && size + HEADER <= MAX_SMALL {
        // At least a byte of object after the header, so that the object's address is in its
        // own cell.
        let class = class_of(size.max(1) + HEADER);
        let cell = match with_typed_nursery(class, |n| n.bump(class_size(class))) {
            Some(cell) => cell,
            None => crate::gc::heap::refill(class, true),
        };
        return cell + HEADER;
    }
    crate::gc::heap::alloc_large(size, align, true)
}

/// Like [`alloc_zeroed`], but never recorded by a [`Tracker`] (so never freed by one): the
/// native `Gc::new`, whose objects safe code may keep after a tracker is dropped.
///
/// Inline: the fast path (a bump of the class's region, which a tracker leaves empty) has
/// constant sizes in `Gc::new`.
#[inline(always)]
pub fn alloc_untracked(size: usize, align: usize) -> usize {
    if (align == 0 || align <= 8) && size <= MAX_SMALL {
        let class = class_of(size);
        // While a tracker is alive the regions are empty (`Tracker::new`) and are not refilled
        // (`alloc_zeroed`), so this bump never takes a cell a tracker should have recorded.
        if let Some(p) = with_nursery(class, |n| n.bump(class_size(class))) {
            return p;
        }
    }
    alloc_untracked_slow(size, align)
}

/// [`alloc_untracked`] when the object is not small or its class's region is used up.
#[inline(never)]
fn alloc_untracked_slow(size: usize, align: usize) -> usize {
    if !tracking() {
        return alloc_zeroed(size, align);
    }
    let align = if align == 0 { 8 } else { align };
    // Outside the heap's chunks and regions (which a tracker's allocations must not take).
    crate::gc::heap::alloc_large(size, align, false)
}

/// `layout` from the global allocator, zeroed, counted in [`reserved_bytes`].
pub(crate) fn global_zeroed(layout: Layout) -> usize {
    note_reserved(layout.size());
    // SAFETY: every layout here has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    p as usize
}

/// The C-ABI entry compiled code calls to allocate (and nothing else calls): the slow path,
/// where a collection may run first when the heap asks for one (see `gc`'s safety model).
pub extern "C" fn jit_alloc(size: usize, align: usize) -> usize {
    if crate::gc::heap::wanted() {
        crate::gc::collect_in_compiled_code();
    }
    alloc_zeroed(size, align)
}

/// The C-ABI entry of compiled code's safe point after a residual call (and nothing else
/// calls it): collects when the heap asks for it, under the same conditions as the
/// allocation slow path [`jit_alloc`].
pub extern "C" fn jit_safepoint() {
    if crate::gc::heap::wanted() {
        crate::gc::collect_in_compiled_code();
        if crate::gc::heap::wanted() {
            // It could not collect here (a nested portal call, a tracker, a borrowed
            // `RefCell`): ask again after another threshold's worth of allocation, instead of
            // taking this slow path after every call until then.
            crate::gc::heap::defer();
        }
    }
}

/// While alive, records every allocation this thread makes through [`alloc_zeroed`], and
/// frees them all when dropped. For tests and the reference interpreter's users that compare
/// objects by content ([`Tracker::size_of`]): objects that traces, jitcode or compiled code
/// allocate while it lives are freed with it, so nothing may use them afterwards (the native
/// `Gc::new` is never tracked). No collection runs while a tracker is alive.
pub struct Tracker {
    _private: (),
}

impl Tracker {
    /// Starts recording (panics if a tracker is already alive on this thread).
    pub fn new() -> Tracker {
        TRACKED.with(|t| {
            let mut t = t.borrow_mut();
            assert!(t.is_none(), "one allocation tracker per thread");
            *t = Some(Vec::new());
        });
        // Every allocation from now on is one the tracker records (the rest of the current
        // regions is found again by the heap after its next collection).
        empty_nurseries();
        Tracker { _private: () }
    }

    /// The size of the tracked object that starts at `addr`, if there is one.
    pub fn size_of(&self, addr: usize) -> Option<usize> {
        TRACKED.with(|t| {
            t.borrow()
                .as_ref()
                .and_then(|v| v.iter().find(|e| e.0 == addr).map(|e| e.1.size()))
        })
    }
}

impl Default for Tracker {
    fn default() -> Tracker {
        Tracker::new()
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        let all = TRACKED.with(|t| t.borrow_mut().take()).unwrap_or_default();
        for (p, layout) in all {
            // SAFETY: `p` was allocated by `alloc_zeroed` with exactly this layout, and is
            // freed once: the list was taken out of the thread-local.
            unsafe { std::alloc::dealloc(p as *mut u8, layout) };
            note_released(layout.size());
        }
    }
}
