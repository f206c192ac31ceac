//! Memory that traces allocate (`new`, `new_array`, and virtual objects materialized on a
//! guard failure), and the objects of [`crate::gc`]. Every allocator of the pipeline (the
//! native `Gc::new`, the jitcode runner, the reference interpreter, compiled code, resume)
//! goes through [`alloc_zeroed`] (compiled code inlines its fast path, see [`Nursery`]), and
//! tests can ask which addresses are objects allocated by traces ([`Tracker`]).
//!
//! Small objects (at most [`MAX_SMALL`] bytes, aligned to at most 8) are carved from the
//! thread's [`Nursery`], a bump-pointer region of zeroed chunks; larger ones come from the
//! global allocator. Nothing is freed yet (there is no collector), except by a [`Tracker`]:
//! while one is alive on the thread the nursery is empty and every allocation is a global
//! allocation the tracker records and frees when dropped.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};

thread_local! {
    static TRACKED: RefCell<Option<Vec<(usize, Layout)>>> = const { RefCell::new(None) };
    static NURSERY: Nursery = const { Nursery { top: Cell::new(0), end: Cell::new(0) } };
    static RESERVED: Cell<usize> = const { Cell::new(0) };
}

/// The bytes this thread has taken from the global allocator for objects so far (nursery
/// chunks and large objects): what the heap costs, since nothing is freed yet. Tests use it to
/// check that a compiled loop allocates nothing.
pub fn reserved_bytes() -> usize {
    RESERVED.with(|r| r.get())
}

/// The largest object the nursery serves (bytes).
pub const MAX_SMALL: usize = 256;
/// The size of a nursery chunk (bytes).
const CHUNK: usize = 1 << 20;

/// A thread's bump-pointer region: objects are carved from `top` up to `end`, in zeroed memory
/// never used before. Compiled code reads and advances `top` itself (`top` at offset 0, `end`
/// at 8) and calls [`jit_alloc`] only when the object does not fit. An empty nursery has
/// `top == end == 0`.
#[repr(C)]
pub struct Nursery {
    top: Cell<usize>,
    end: Cell<usize>,
}

impl Nursery {
    fn bump(&self, size: usize) -> Option<usize> {
        let top = self.top.get();
        let new = top.checked_add(size)?;
        (top != 0 && new <= self.end.get()).then(|| {
            self.top.set(new);
            top
        })
    }
}

/// The address of this thread's [`Nursery`], for compiled code (which runs only on the
/// thread of the driver that compiled it; the nursery lives as long as the thread).
pub fn nursery_addr() -> usize {
    NURSERY.with(|n| n as *const Nursery as usize)
}

/// The size a small object takes in the nursery (rounded up to 8 bytes).
pub fn nursery_size(size: usize) -> usize {
    (size.max(1) + 7) & !7
}

fn tracking() -> bool {
    TRACKED.with(|t| t.borrow().is_some())
}

/// Allocates `size` zeroed bytes aligned to `align` (a power of two; 0 means 8) and returns
/// the address. Aborts on allocation failure, as `Box::new` does.
pub fn alloc_zeroed(size: usize, align: usize) -> usize {
    let align = if align == 0 { 8 } else { align };
    if align <= 8 && size <= MAX_SMALL {
        let size = nursery_size(size);
        if let Some(p) = NURSERY.with(|n| n.bump(size)) {
            return p;
        }
        if !tracking() {
            let chunk = global_zeroed(Layout::from_size_align(CHUNK, 8).expect("chunk layout"));
            return NURSERY.with(|n| {
                n.top.set(chunk);
                n.end.set(chunk + CHUNK);
                n.bump(size).expect("a fresh chunk holds a small object")
            });
        }
    }
    let layout = Layout::from_size_align(size.max(1), align).expect("bad allocation layout");
    let p = global_zeroed(layout);
    TRACKED.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            v.push((p, layout));
        }
    });
    p
}

/// Like [`alloc_zeroed`], but never recorded by a [`Tracker`] (so never freed): the native
/// `Gc::new`, whose objects safe code may keep after a tracker is dropped.
pub fn alloc_untracked(size: usize, align: usize) -> usize {
    let align = if align == 0 { 8 } else { align };
    if align <= 8 && size <= MAX_SMALL {
        if let Some(p) = NURSERY.with(|n| n.bump(nursery_size(size))) {
            return p;
        }
    }
    if tracking() {
        global_zeroed(Layout::from_size_align(size.max(1), align).expect("bad allocation layout"))
    } else {
        alloc_zeroed(size, align)
    }
}

fn global_zeroed(layout: Layout) -> usize {
    RESERVED.with(|r| r.set(r.get() + layout.size()));
    // SAFETY: every layout here has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    p as usize
}

/// The C-ABI entry compiled code calls to allocate.
pub extern "C" fn jit_alloc(size: usize, align: usize) -> usize {
    alloc_zeroed(size, align)
}

/// While alive, records every allocation this thread makes through [`alloc_zeroed`], and
/// frees them all when dropped. For tests and the reference interpreter's users that compare
/// objects by content ([`Tracker::size_of`]): objects that traces, jitcode or compiled code
/// allocate while it lives are freed with it, so nothing may use them afterwards (the native
/// `Gc::new` is never tracked).
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
        // chunk is abandoned).
        NURSERY.with(|n| {
            n.top.set(0);
            n.end.set(0);
        });
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
        }
    }
}
