//! A global allocator that counts the allocations (and reallocations) of each thread, for the
//! test binaries that measure what a path of the driver allocates: `mod counting;` installs it
//! in the binary. Per thread, so that the test harness's own threads do not count (a global
//! count once saw 1,004 allocations where the test's thread made 1,000).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // A thread being torn down has no counter left; its allocations are not the test's.
    let _ = ALLOCS.try_with(|a| a.set(a.get() + 1));
}

// SAFETY: forwards every call to the system allocator unchanged, counting allocations (the
// counter is a const thread-local cell, which never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract is `System.dealloc`'s.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is `System.realloc`'s.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The allocations and reallocations of the calling thread so far.
pub fn allocations() -> usize {
    ALLOCS.with(|a| a.get())
}
