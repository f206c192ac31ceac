//! Memory that traces allocate (`new`, `new_array`, and virtual objects materialized on a
//! guard failure). Every allocator of the pipeline (reference interpreter, compiled code,
//! resume) goes through [`alloc_zeroed`], so an object allocated by any of them can be freed
//! like a `Box` of a type with that size and alignment, and tests can ask which addresses are
//! objects allocated by traces ([`Tracker`]).

use std::alloc::Layout;
use std::cell::RefCell;

thread_local! {
    static TRACKED: RefCell<Option<Vec<(usize, Layout)>>> = const { RefCell::new(None) };
}

/// Allocates `size` zeroed bytes aligned to `align` (a power of two; 0 means 8) and returns
/// the address. Aborts on allocation failure, as `Box::new` does.
pub fn alloc_zeroed(size: usize, align: usize) -> usize {
    let align = if align == 0 { 8 } else { align };
    let layout = Layout::from_size_align(size.max(1), align).expect("bad allocation layout");
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    TRACKED.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            v.push((p as usize, layout));
        }
    });
    p as usize
}

/// The C-ABI entry compiled code calls to allocate.
pub extern "C" fn jit_alloc(size: usize, align: usize) -> usize {
    alloc_zeroed(size, align)
}

/// While alive, records every allocation this thread makes through [`alloc_zeroed`], and
/// frees them all when dropped. For tests and the reference interpreter's users that compare
/// objects by content ([`Tracker::size_of`]).
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
