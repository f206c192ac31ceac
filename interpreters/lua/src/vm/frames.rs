//! The guest frame stack: a vector whose first `n` records are the live frames. Popping a
//! frame only lowers `n`, so the records above stay allocated, and a push below the vector's
//! length is stores into a record that exists: traced code pushes and pops frames with
//! stores, loads and a counter (`jit::call_fast`, `jit::return_fast`), no call. Natively the
//! stack derefs to the slice of live frames.

use super::Frame;
use meta_jit::gc::{Trace, Tracer};
use meta_jit::hints::*;
use std::ops::{Deref, DerefMut};

/// The guest frames: `items[..n]` are live, the records above are dead ones left by pops
/// (their closures may be freed: nothing reads them before a push writes them whole).
#[derive(JitLayout)]
pub struct FrameStack {
    /// Live frames, then dead records. Public for traced code, which writes records below
    /// the length and never changes the length: only `push` grows the vector, and nothing
    /// shrinks it (`deref` relies on `n <= items.len()`).
    pub items: Vec<Frame>,
    /// The number of live frames.
    pub n: usize,
}

impl FrameStack {
    /// An empty stack with room for `cap` frames before the vector grows.
    pub fn with_capacity(cap: usize) -> FrameStack {
        FrameStack {
            items: Vec::with_capacity(cap),
            n: 0,
        }
    }

    /// Pushes a frame: a record written over a dead one, or a new one.
    #[inline(always)]
    pub fn push(&mut self, f: Frame) {
        if self.n == self.items.capacity() {
            self.grow();
        }
        let n = self.n;
        // SAFETY: `n <= items.len() <= capacity` and `n < capacity` (grown just above): the
        // slot is a dead record (a `Frame` has no drop) or allocated and uninitialized, and
        // `set_len` covers exactly the records written. Written in place, with the growth
        // out of line and taking no frame: an assignment (or a `Vec::push` on the slow path)
        // built the frame on the machine stack first and copied it, and that copy's load of
        // two smaller stores stalled (fib with `--no-jit` took 35% longer).
        unsafe {
            self.items.as_mut_ptr().add(n).write(f);
            if n == self.items.len() {
                self.items.set_len(n + 1);
            }
        }
        self.n = n + 1;
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.items.reserve(self.items.len().max(16));
    }

    /// Pops the top frame (it stays allocated as a dead record).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Frame> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some(self.items[self.n])
    }

    /// Pops frames down to `depth`.
    pub fn truncate(&mut self, depth: usize) {
        self.n = self.n.min(depth);
    }
}

impl Deref for FrameStack {
    type Target = [Frame];
    #[inline(always)]
    fn deref(&self) -> &[Frame] {
        // SAFETY: `n <= items.len()` always (push grows `items` before it counts a frame,
        // pop and truncate only lower `n`).
        unsafe { self.items.get_unchecked(..self.n) }
    }
}

impl DerefMut for FrameStack {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Frame] {
        // SAFETY: as in `deref`.
        unsafe { self.items.get_unchecked_mut(..self.n) }
    }
}

// SAFETY: the live frames' `Gc`s are reported; the dead records' are not, and nothing reads
// them (a push overwrites a record before it counts it live).
unsafe impl Trace for FrameStack {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        self.iter().for_each(|f| f.trace(t));
    }
}
