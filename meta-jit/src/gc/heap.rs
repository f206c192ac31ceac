//! The collected heap: chunks of same-size cells, a mark bit per cell, and a non-moving
//! mark-sweep collection.
//!
//! Layout. A chunk is `CHUNK` bytes aligned to `CHUNK`, holding cells of one size class
//! (8 to 256 bytes). No object has a header: a cell's size is its chunk's, and an address maps
//! to its chunk by masking and to its cell by dividing, so compiled code's inline allocation is
//! a bump of the class's nursery region and nothing more. The chunk's mark bitmap says which
//! cells were reachable at the last collection; between collections the allocator hands out the
//! runs of unmarked cells ("holes") of each class once each, in address order, zeroing them
//! first, and takes a new chunk when none is left.
//!
//! Collection (`collect`): clear the marks; mark from the roots, which are the words the
//! caller names (precise: the `Trace` of the portal's greens and reds), the pinned words (trace
//! constants) and every word of the large objects; then scan every marked cell word by word and
//! mark what its words point into (conservative within objects: any word that is the address of,
//! or into, a cell of the heap keeps that cell; an integer that happens to look like one only
//! retains memory, it is never treated as anything but a reason to keep a cell). There is no
//! sweep proper: the unmarked cells *are* the free space the allocator finds next. The nursery
//! regions are emptied, so no region spans a cell that was free before and is live now.
//!
//! Soundness rests on three facts: (1) every object of the heap is allocated through
//! `refill` or the nursery fast path, so it lies in a chunk cell; (2) every `Gc` stored inside
//! an object is a word of that object (`Trace::INLINE`, asserted by `Gc::new`, and jitcode,
//! compiled code and resume store `Gc` fields as words); (3) the caller of `collect` names
//! every root (the contract of `gc::collect` and `gc::enable_collection`).
//!
//! Owns: chunks, marks, holes, the collection and its statistics. Must not know: `Gc`'s type
//! parameter or `Trace` (the front in `gc.rs` turns roots into words), jitcode, traces, or any
//! guest language.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

use crate::alloc::{class_size, empty_nurseries, global_zeroed, with_nursery, CLASSES};

/// The size and alignment of a chunk (bytes).
pub(crate) const CHUNK: usize = 1 << 18;
/// The bytes handed out between two collections, at least (the heap asks for a collection
/// once it has handed out this much, or twice the live bytes if that is more).
const MIN_THRESHOLD: usize = 4 << 20;

/// Hashes a chunk's base address (a multiple of `CHUNK`) by one multiplication: the
/// collector looks up every word it scans, and SipHash was most of the marking time.
#[derive(Default)]
struct BaseHasher(u64);

impl Hasher for BaseHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = ((n / CHUNK) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

struct Chunk {
    base: usize,
    cell: usize,
    cells: usize,
    marks: Vec<u64>,
}

impl Chunk {
    fn marked(&self, i: usize) -> bool {
        self.marks[i / 64] >> (i % 64) & 1 != 0
    }

    /// The first unmarked cell at or after `i` (or `cells`).
    fn next_free(&self, mut i: usize) -> usize {
        while i < self.cells {
            let w = self.marks[i / 64] >> (i % 64);
            if w == 0 {
                // Everything from `i` to the end of this word is free.
                return i;
            }
            let ones = w.trailing_ones() as usize;
            if ones < 64 - i % 64 {
                return (i + ones).min(self.cells);
            }
            i = (i / 64 + 1) * 64;
        }
        self.cells
    }

    /// The first marked cell at or after `i` (or `cells`).
    fn next_marked(&self, mut i: usize) -> usize {
        while i < self.cells {
            let w = self.marks[i / 64] >> (i % 64);
            if w != 0 {
                return (i + w.trailing_zeros() as usize).min(self.cells);
            }
            i = (i / 64 + 1) * 64;
        }
        self.cells
    }
}

#[derive(Default)]
struct Class {
    /// Indices into `Heap::chunks`, in the order they were taken.
    chunks: Vec<usize>,
    /// Where the search for the next hole resumes: a position in `chunks` and a cell.
    cursor: (usize, usize),
}

#[derive(Default)]
struct Heap {
    chunks: Vec<Chunk>,
    by_base: HashMap<usize, usize, BuildHasherDefault<BaseHasher>>,
    classes: Vec<Class>,
    /// Objects outside the chunks (large ones, and those `Gc::new` made while a tracker was
    /// alive): never freed, scanned as roots.
    large: Vec<(usize, usize)>,
    /// Words that are roots for as long as the thread lives (constants of compiled traces).
    pinned: HashSet<usize>,
    /// Bytes handed out since the last collection.
    since: usize,
    threshold: usize,
    /// The least `threshold` (0: `MIN_THRESHOLD`).
    min_threshold: usize,
    enabled: bool,
    stats: HeapStats,
}

/// What the collector of this thread has done so far ([`stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HeapStats {
    /// Collections run.
    pub collections: u64,
    /// Of those, collections in compiled code's allocation slow path.
    pub in_compiled_code: u64,
    /// Collections a safe point skipped because a green or red of the portal does not
    /// implement `Trace` (the collector cannot see what it holds).
    pub skipped_untraceable: u64,
    /// Bytes in cells marked live by the last collection.
    pub live_bytes: usize,
    /// Cells marked live by the last collection.
    pub live_objects: usize,
    /// Bytes of the heap's chunks (free and used).
    pub chunk_bytes: usize,
    /// Bytes of objects outside the chunks (never freed).
    pub large_bytes: usize,
    /// The longest collection so far.
    pub max_pause: Duration,
    /// All collections together.
    pub total_pause: Duration,
}

thread_local! {
    static HEAP: RefCell<Heap> = RefCell::new(Heap::default());
    static WANTED: Cell<bool> = const { Cell::new(false) };
}

/// Whether the heap asks for a collection (collection is enabled on this thread and the heap
/// has handed out its threshold since the last one). One thread-local load.
#[inline]
pub(crate) fn wanted() -> bool {
    WANTED.with(|w| w.get())
}

/// Turns the heap's requests for collections on or off (`gc::enable_collection`).
pub(crate) fn set_enabled(on: bool) {
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        h.enabled = on;
        let due = on && h.since >= h.due_at();
        WANTED.with(|w| w.set(due));
    });
}

/// Whether collection is enabled on this thread.
pub(crate) fn enabled() -> bool {
    HEAP.with(|h| h.borrow().enabled)
}

/// Sets the least number of bytes the heap hands out between two collections (`0`: the
/// default, 4 MiB); the threshold is this or twice the live bytes of the last collection,
/// whichever is more.
pub(crate) fn set_min_threshold(bytes: usize) {
    HEAP.with(|h| h.borrow_mut().min_threshold = bytes);
}

/// Withdraws the request for a collection until another threshold's worth of allocation.
pub(crate) fn defer() {
    HEAP.with(|h| h.borrow_mut().since = 0);
    WANTED.with(|w| w.set(false));
}

/// Counts a collection in compiled code's allocation slow path.
pub(crate) fn note_in_compiled_code() {
    HEAP.with(|h| h.borrow_mut().stats.in_compiled_code += 1);
}

/// Counts a safe point that could not collect (a green or red the collector cannot see).
pub(crate) fn note_untraceable() {
    HEAP.with(|h| h.borrow_mut().stats.skipped_untraceable += 1);
}

/// The collector's statistics for this thread.
pub fn stats() -> HeapStats {
    HEAP.with(|h| {
        let h = h.borrow();
        HeapStats {
            chunk_bytes: h.chunks.len() * CHUNK,
            large_bytes: h.large.iter().map(|l| l.1).sum(),
            ..h.stats
        }
    })
}

/// Records an object outside the chunks (never freed; its words are roots).
pub(crate) fn add_large(addr: usize, size: usize) {
    HEAP.with(|h| h.borrow_mut().large.push((addr, size)));
}

/// Makes `word` a root for the rest of the thread's life if it points into the heap (a
/// constant baked into compiled code or resume data).
pub(crate) fn pin(word: usize) {
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        if h.find(word).is_some() {
            h.pinned.insert(word);
        }
    });
}

/// The slow path of a small allocation of class `class`: installs the next hole (or a new
/// chunk) as the class's nursery region and allocates one cell from it.
pub(crate) fn refill(class: usize) -> usize {
    let cell = class_size(class);
    let (top, end) = HEAP.with(|h| h.borrow_mut().next_region(class));
    with_nursery(class, |n| n.set(top + cell, end));
    top
}

impl Heap {
    /// The bytes to hand out before the next collection is due.
    fn due_at(&self) -> usize {
        let min = match self.min_threshold {
            0 => MIN_THRESHOLD,
            m => m,
        };
        self.threshold.max(min)
    }

    /// The chunk and cell `word` points into, if it points into the heap.
    fn find(&self, word: usize) -> Option<(usize, usize)> {
        let base = word & !(CHUNK - 1);
        if base == 0 {
            return None;
        }
        let &k = self.by_base.get(&base)?;
        let c = &self.chunks[k];
        let i = (word - base) / c.cell;
        (i < c.cells).then_some((k, i))
    }

    fn next_region(&mut self, class: usize) -> (usize, usize) {
        if self.classes.is_empty() {
            self.classes.resize_with(CLASSES, Class::default);
        }
        let cell = class_size(class);
        loop {
            let (pos, from) = self.classes[class].cursor;
            let Some(&k) = self.classes[class].chunks.get(pos) else {
                break;
            };
            let c = &self.chunks[k];
            let start = c.next_free(from);
            if start == c.cells {
                self.classes[class].cursor = (pos + 1, 0);
                continue;
            }
            let stop = c.next_marked(start);
            let (top, end) = (c.base + start * cell, c.base + stop * cell);
            self.classes[class].cursor = (pos, stop);
            // SAFETY: `[top, end)` are free cells of a chunk this heap owns: unmarked at the
            // last collection, so no object that a root reaches lies there, and not handed out
            // since (the cursor passes each hole once between collections).
            unsafe { std::ptr::write_bytes(top as *mut u8, 0, end - top) };
            self.handed_out(end - top);
            return (top, end);
        }
        // A new chunk: zeroed by the global allocator, all of it one region.
        let base = global_zeroed(Layout::from_size_align(CHUNK, CHUNK).expect("chunk layout"));
        let cells = CHUNK / cell;
        let k = self.chunks.len();
        self.chunks.push(Chunk {
            base,
            cell,
            cells,
            marks: vec![0; cells.div_ceil(64)],
        });
        self.by_base.insert(base, k);
        let class_state = &mut self.classes[class];
        class_state.chunks.push(k);
        class_state.cursor = (class_state.chunks.len(), 0);
        self.handed_out(cells * cell);
        (base, base + cells * cell)
    }

    fn handed_out(&mut self, bytes: usize) {
        self.since += bytes;
        if self.enabled && self.since >= self.due_at() {
            WANTED.with(|w| w.set(true));
        }
    }

    fn mark(&mut self, word: usize, work: &mut Vec<(usize, usize)>) {
        if let Some((k, i)) = self.find(word) {
            let c = &mut self.chunks[k];
            if !c.marked(i) {
                c.marks[i / 64] |= 1 << (i % 64);
                work.push((c.base + i * c.cell, c.cell));
            }
        }
    }
}

/// Scans `[addr, addr + size)` word by word, marking what the words point into.
///
/// # Safety
/// The range is readable memory of the heap (a cell or a large object), 8-aligned.
unsafe fn scan(h: &mut Heap, addr: usize, size: usize, work: &mut Vec<(usize, usize)>) {
    for off in (0..size / 8).map(|k| k * 8) {
        // SAFETY: in the range the caller vouches for; heap memory is always initialized
        // (zeroed when it is taken and when a hole is handed out).
        let w = unsafe { ((addr + off) as *const usize).read() };
        h.mark(w, work);
    }
}

/// Collects: frees every cell that neither `roots`, the pinned words nor the large objects
/// reach (their memory becomes holes the allocator hands out again).
///
/// # Safety
/// Every object the thread will use after this call is reachable from `roots`, a pinned word
/// or a large object, through words of objects; no compiled code, tracer, jitcode runner or
/// blackhole interpreter of this thread is running (their registers are not roots).
pub(crate) unsafe fn collect(roots: &[usize]) {
    let t0 = Instant::now();
    empty_nurseries();
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        let h = &mut *h;
        for c in &mut h.chunks {
            c.marks.iter_mut().for_each(|m| *m = 0);
        }
        let mut work = Vec::new();
        for &w in roots {
            h.mark(w, &mut work);
        }
        let pinned: Vec<usize> = h.pinned.iter().copied().collect();
        for w in pinned {
            h.mark(w, &mut work);
        }
        for (a, s) in h.large.clone() {
            // SAFETY: a live allocation of `s` bytes at `a` (large objects are never freed).
            unsafe { scan(h, a, s, &mut work) };
        }
        while let Some((a, s)) = work.pop() {
            // SAFETY: a cell of one of the heap's chunks.
            unsafe { scan(h, a, s, &mut work) };
        }
        let mut live = (0, 0);
        for c in &h.chunks {
            let n: usize = c.marks.iter().map(|m| m.count_ones() as usize).sum();
            live = (live.0 + n * c.cell, live.1 + n);
        }
        for cl in &mut h.classes {
            cl.cursor = (0, 0);
        }
        h.since = 0;
        h.threshold = 2 * live.0;
        WANTED.with(|w| w.set(false));
        let pause = t0.elapsed();
        let s = &mut h.stats;
        s.collections += 1;
        (s.live_bytes, s.live_objects) = live;
        s.max_pause = s.max_pause.max(pause);
        s.total_pause += pause;
    });
}
