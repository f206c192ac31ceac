//! The collected heap: chunks of same-size cells, a mark bit per cell, large objects on the
//! side, and a non-moving mark-sweep collection.
//!
//! Objects. Two kinds share the heap:
//!
//! - *plain* objects (`Trace::INLINE` types that need no `Drop`: every `Gc` they hold is a
//!   word of their own bytes) have no header. They live in the plain chunks, which is what
//!   lets compiled code allocate them inline (a bump of its size class's nursery region,
//!   nothing to write but the fields), and the collector scans them word by word with no type
//!   information (conservative within the object: any word that points into a cell of the
//!   heap keeps that cell; an integer that happens to look like one only retains memory);
//! - *typed* objects (everything else `Gc::new` accepts: a struct with a `Vec<Value>`, a
//!   `Box<[u8]>`, a `String`, a `HashMap`) have a one-word header just before the object: the
//!   address of a static `TypeInfo` with the type's trace function (its `Trace` impl, which
//!   reaches the `Gc`s in the memory the object owns, precisely) and its drop function. They
//!   live in typed chunks (cells of the object's size plus the header, in their own size
//!   classes and regions, which compiled code never sees). A typed cell's header is 0 when it
//!   holds no object (never allocated, or freed).
//!
//! Layout. A chunk is `CHUNK` bytes aligned to `CHUNK` (mapped from the system on its own),
//! holding cells of one size class (8 to 256 bytes) and one kind. An address maps to its chunk
//! by masking and to its cell by dividing. The chunk's mark bitmap says which cells were
//! reachable at the last collection; between collections the allocator hands out the runs of
//! unmarked cells ("holes") of each class once each, in address order, zeroing the plain ones
//! first (see "Zeroing" below), and
//! takes a spare chunk or a new one when none is left. Objects over 256 bytes (with their
//! header, for a typed one) are *large*: one allocation of the global allocator each, found by
//! address in an ordered map, with their own mark bit.
//!
//! Collection (`collect`): clear the marks; mark from the roots, which are the words the caller
//! names (precise: the `Trace` of the portal's greens and reds) and the pinned words (trace
//! constants); then scan every marked object: a plain one word by word, a typed one through
//! its `TypeInfo::trace`, marking what its words or `Gc`s point into. Then sweep: every typed
//! cell that is not marked and holds an object gets its header cleared and is dropped in place
//! (`TypeInfo::drop`), every unmarked large object is dropped (if typed) and deallocated, and
//! chunks left with no marked cell leave their class: kept as spares (any class may take one)
//! up to the next collection's worth of allocation, unmapped beyond that, so memory goes down
//! after a peak. The unmarked cells of the other chunks *are* the free space the allocator
//! finds next. The nursery regions are emptied, so no region spans a cell that was free before
//! and is live now.
//!
//! Zeroing. A plain object's cell is zeroed when the allocator hands it out (compiled code
//! writes only the fields it stores, and the collector scans every word of a plain cell). A
//! typed cell is not: only its header matters before `Gc::new` writes the object, and the
//! header of every typed cell that holds no object is 0 already (a new chunk is zeroed by the
//! system, a spare chunk a typed class takes gets its cells' headers cleared, the sweep
//! clears the header of every object it frees, and a cell handed out but never used keeps
//! its 0). Zeroing the typed holes was 10% of binarytrees.lua's instructions (the memset of
//! `next_region`).
//!
//! Drop order: the objects a collection frees are dropped one after the other, in no
//! particular order, while the heap is borrowed (an allocation or a look at the heap from a
//! `Drop` panics). A `Drop` that read a `Gc` could read an object already dropped: `Trace`'s
//! contract forbids it, and `#[derive(Trace)]` refuses a type with a `Drop` impl.
//!
//! Soundness rests on four facts: (1) every object of the heap is allocated through `refill`,
//! the nursery fast path or `alloc_large`, so it lies in a chunk cell or a large allocation;
//! (2) every `Gc` stored inside a plain object is a word of that object (`Gc::new` sends every
//! other type to the typed kind; traced code allocates only `Trace::INLINE` types without
//! drop glue, `lower::gc_new` asserts it; jitcode, compiled code and resume store `Gc` fields
//! as words); (3) a typed object's header is written after the object and cleared before it
//! is dropped, so a header that is not 0 always describes a live, initialized object, and the
//! typed object's `Trace` reports all its `Gc`s (an `unsafe` trait); (4) the caller of
//! `collect` names every root (the contract of `gc::collect` and `gc::enable_collection`).
//!
//! A value that cannot report its `Gc`s during the marking (a `RefCell` mutably borrowed)
//! makes the tracer `blocked`: the collection is then abandoned, every cell is treated as
//! marked until the next collection and nothing is freed or dropped.
//!
//! Owns: chunks, marks, holes, large objects, the collection, the sweep and its statistics.
//! Must not know: `Gc`'s type parameter or `Trace` (the front in `gc.rs` turns roots into
//! words and types into `TypeInfo`s; the heap only hands a [`Tracer`] to their trace
//! functions), jitcode, traces, or any guest language.

use std::alloc::Layout;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

use super::Tracer;
use crate::alloc::{
    class_size, empty_nurseries, empty_plain_nurseries, global_zeroed, note_released,
    note_reserved, with_nursery, with_typed_nursery, CLASSES,
};

/// The size and alignment of a chunk (bytes).
pub(crate) const CHUNK: usize = 1 << 18;
/// The bytes of a typed object's header (the address of its [`TypeInfo`]), just before it.
pub(crate) const HEADER: usize = 8;
/// The bytes handed out between two collections, at least (the heap asks for a collection
/// once it has handed out this much, or twice the live bytes if that is more).
const MIN_THRESHOLD: usize = 4 << 20;

/// The entries of the heap's cache of chunk look-ups (`Heap::recent`).
const RECENT: usize = 64;

/// What the collector knows of the type of a typed object: how to trace and how to drop one.
/// `gc.rs` makes one static per type; a typed object's header is its address.
pub(crate) struct TypeInfo {
    /// Reports the `Gc`s of the object at the address (its `Trace` impl).
    pub(crate) trace: unsafe fn(usize, &mut Tracer),
    /// Drops the object at the address in place (`None`: the type has no drop glue).
    pub(crate) drop: Option<unsafe fn(usize)>,
}

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
    /// `cell_index`'s multiplier for this chunk's cell size.
    recip: u64,
    /// The class: `0..CLASSES` plain, `CLASSES..2 * CLASSES` typed.
    class: usize,
    marks: Vec<u64>,
}

/// The multiplier that divides an offset into a chunk by `cell` (see [`cell_index`]).
fn recip(cell: usize) -> u64 {
    (1u64 << 32) / cell as u64 + 1
}

/// `off / cell` for an offset into a chunk (`off < CHUNK`), by a multiplication with
/// `recip(cell)` instead of a division (a 64-bit division was the slowest instruction of the
/// mark). Exact: `recip(cell) * cell` exceeds 2^32 by `e < cell <= 256`, so the product
/// overshoots `off * 2^32 / cell` by `off * e / cell < 2^26 / cell`, which is less than the
/// `2^32 / cell` it would take to reach the next quotient.
#[inline(always)]
fn cell_index(off: usize, recip: u64) -> usize {
    ((off as u64 * recip) >> 32) as usize
}

impl Chunk {
    fn typed(&self) -> bool {
        self.class >= CLASSES
    }

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

    fn live(&self) -> usize {
        self.marks.iter().map(|m| m.count_ones() as usize).sum()
    }
}

#[derive(Default)]
struct Class {
    /// Indices into `Heap::chunks`, in the order they were taken.
    chunks: Vec<usize>,
    /// Where the search for the next hole resumes: a position in `chunks` and a cell.
    cursor: (usize, usize),
}

/// An object outside the chunks: one allocation of the global allocator.
struct Large {
    /// The allocation's layout (its address is the map's key).
    layout: Layout,
    /// Typed: the object starts `layout.align().max(HEADER)` bytes into the allocation, its
    /// header just before it. Plain: the object is the allocation.
    typed: bool,
    marked: bool,
}

impl Large {
    /// The object's address, for an allocation at `start`.
    fn obj(&self, start: usize) -> usize {
        if self.typed {
            start + self.layout.align().max(HEADER)
        } else {
            start
        }
    }
}

/// A marked object whose words or `Gc`s are still to be scanned: a plain one (`size` bytes at
/// `addr`) or, with `size == 0`, a typed one (the object at `addr`, its header before it).
type Work = (usize, usize);

#[derive(Default)]
struct Heap {
    chunks: Vec<Chunk>,
    by_base: HashMap<usize, usize, BuildHasherDefault<BaseHasher>>,
    /// `0..CLASSES` plain, `CLASSES..2 * CLASSES` typed.
    classes: Vec<Class>,
    /// Empty chunks, kept mapped for any class to take (their memory is not zeroed).
    spare: Vec<usize>,
    /// Objects outside the chunks, by allocation address.
    large: BTreeMap<usize, Large>,
    /// The lowest and one past the highest address of a large allocation (a quick test that
    /// most scanned words fail).
    large_span: (usize, usize),
    /// Words that are roots while compiled traces hold them (their constants), with how many
    /// traces hold each.
    pinned: HashMap<usize, u32>,
    /// Bytes handed out since the last collection.
    since: usize,
    threshold: usize,
    /// The least `threshold` (0: `MIN_THRESHOLD`).
    min_threshold: usize,
    enabled: bool,
    stats: HeapStats,
    /// The base and index of chunks `mark` found, direct-mapped by the chunk's number modulo
    /// [`RECENT`] (base 0: none): a scanned word's chunk is found here with one compare, and
    /// looked up in `by_base` only on a miss. Before, one entry (the chunk found last) missed
    /// on a third of the words of binarytrees.lua, whose tables and parts alternate between
    /// chunks of two classes, and each miss was a hash look-up. Reset whenever `chunks` is
    /// renumbered.
    recent: Vec<(usize, usize)>,
    /// The work list and the tracer's words of the last collection, kept for their capacity
    /// (growing them anew was 0.9% of binarytrees' instructions).
    work: Vec<Work>,
    words: Vec<usize>,
}

/// What the collector of this thread has done so far ([`stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HeapStats {
    /// Collections run (abandoned ones included).
    pub collections: u64,
    /// Of those, collections in compiled code's allocation slow path.
    pub in_compiled_code: u64,
    /// Collections a safe point skipped because a green or red of the portal does not
    /// implement `Trace` (the collector cannot see what it holds).
    pub skipped_untraceable: u64,
    /// Collections abandoned because a value could not report its `Gc`s while marking (a
    /// `RefCell` holding `Gc`s was mutably borrowed; see `Tracer::cannot_see`): nothing was
    /// freed.
    pub abandoned: u64,
    /// Bytes in cells and large objects marked live by the last collection (with headers).
    pub live_bytes: usize,
    /// Objects marked live by the last collection.
    pub live_objects: usize,
    /// Objects with drop glue dropped by collections so far.
    pub dropped: u64,
    /// Empty chunks returned to the system so far.
    pub released_chunks: u64,
    /// Bytes of the heap's chunks now (free and used, spares included).
    pub chunk_bytes: usize,
    /// Bytes of the objects outside the chunks now (over 256 bytes; freed when unreachable).
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

/// The address of this thread's "a collection is wanted" flag (one byte, 0 or 1), for
/// compiled code's safe points after residual calls (compiled code runs only on the thread
/// of the driver that compiled it; the flag lives as long as the thread).
pub(crate) fn wanted_flag_addr() -> usize {
    WANTED.with(|w| w as *const std::cell::Cell<bool> as usize)
}

/// Counts `bytes` that objects of the heap own out of line toward the next collection.
pub(crate) fn note_external(bytes: usize) {
    HEAP.with(|h| h.borrow_mut().handed_out(bytes));
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

/// Counts a collection abandoned before it began (a root could not report its `Gc`s).
pub(crate) fn note_abandoned() {
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        h.stats.collections += 1;
        h.stats.abandoned += 1;
    });
    defer();
}

/// The collector's statistics for this thread.
pub fn stats() -> HeapStats {
    HEAP.with(|h| {
        let h = h.borrow();
        HeapStats {
            chunk_bytes: (h.chunks.len() + h.spare.len()) * CHUNK,
            large_bytes: h.large.values().map(|l| l.layout.size()).sum(),
            ..h.stats
        }
    })
}

/// Allocates a zeroed large object of `size` bytes aligned to `align` (a power of two) from
/// the global allocator, with room for a header before it if `typed`, and returns the
/// object's address. Freed by the collection that finds it unreachable.
#[inline(never)]
pub(crate) fn alloc_large(size: usize, align: usize, typed: bool) -> usize {
    let pad = if typed { align.max(HEADER) } else { 0 };
    let layout =
        Layout::from_size_align(pad + size.max(1), align.max(8)).expect("bad allocation layout");
    let start = global_zeroed(layout);
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        let end = start + layout.size();
        h.large_span = if h.large.is_empty() {
            (start, end)
        } else {
            (h.large_span.0.min(start), h.large_span.1.max(end))
        };
        h.large.insert(
            start,
            Large {
                layout,
                typed,
                marked: false,
            },
        );
        h.handed_out(layout.size());
    });
    start + pad
}

/// Makes `word` a root until as many [`unpin`]s if it points into the heap (a constant baked
/// into compiled code or resume data); returns whether it did.
pub(crate) fn pin(word: usize) -> bool {
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        let inside = h.find(word).is_some() || h.find_large(word).is_some();
        if inside {
            *h.pinned.entry(word).or_insert(0) += 1;
        }
        inside
    })
}

/// Undoes one [`pin`] of each of `words` (nothing once the thread's heap is gone: the thread
/// is ending).
pub(crate) fn unpin(words: &[usize]) {
    let _ = HEAP.try_with(|h| {
        let mut h = h.borrow_mut();
        for w in words {
            if let Some(n) = h.pinned.get_mut(w) {
                *n -= 1;
                if *n == 0 {
                    h.pinned.remove(w);
                }
            }
        }
    });
}

/// The slow path of a small allocation of class `class` (of the typed classes if `typed`):
/// installs the next hole (or a new chunk) as the class's nursery region and allocates one
/// cell from it.
#[inline(never)]
pub(crate) fn refill(class: usize, typed: bool) -> usize {
    let cell = class_size(class);
    let k = if typed { CLASSES + class } else { class };
    let (top, end) = HEAP.with(|h| h.borrow_mut().next_region(k));
    if typed {
        with_typed_nursery(class, |n| n.set(top + cell, end));
    } else {
        with_nursery(class, |n| n.set(top + cell, end));
    }
    top
}

/// A fresh chunk from the system: `CHUNK` bytes aligned to `CHUNK`, zeroed.
fn map_chunk() -> usize {
    let len = 2 * CHUNK;
    // SAFETY: an anonymous private mapping of fresh memory, owned by nobody else.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        std::alloc::handle_alloc_error(Layout::from_size_align(CHUNK, CHUNK).expect("layout"));
    }
    let p = p as usize;
    let base = (p + CHUNK - 1) & !(CHUNK - 1);
    // SAFETY: the parts of the mapping before and after the aligned chunk, which nothing
    // uses (page-aligned: `p` and `base` are, and `CHUNK` is a multiple of the page size).
    unsafe {
        if base > p {
            libc::munmap(p as *mut libc::c_void, base - p);
        }
        let end = base + CHUNK;
        if p + len > end {
            libc::munmap(end as *mut libc::c_void, p + len - end);
        }
    }
    note_reserved(CHUNK);
    base
}

/// Returns a chunk's memory to the system.
///
/// # Safety
/// `base` came from `map_chunk` and no object lives in the chunk (nothing will read it).
unsafe fn unmap_chunk(base: usize) {
    // SAFETY: the caller's promise; the chunk is a whole mapping of its own.
    unsafe { libc::munmap(base as *mut libc::c_void, CHUNK) };
    note_released(CHUNK);
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

    /// The chunk and cell `word` points into, if it points into a chunk.
    #[inline]
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

    /// The address of the large allocation `word` points into, if it does.
    fn find_large(&self, word: usize) -> Option<usize> {
        if word < self.large_span.0 || word >= self.large_span.1 {
            return None;
        }
        let (&start, l) = self.large.range(..=word).next_back()?;
        (word < start + l.layout.size()).then_some(start)
    }

    fn next_region(&mut self, k: usize) -> (usize, usize) {
        if self.classes.is_empty() {
            self.classes.resize_with(2 * CLASSES, Class::default);
        }
        let cell = class_size(k % CLASSES);
        loop {
            let (pos, from) = self.classes[k].cursor;
            let Some(&ci) = self.classes[k].chunks.get(pos) else {
                break;
            };
            let c = &self.chunks[ci];
            let start = c.next_free(from);
            if start == c.cells {
                self.classes[k].cursor = (pos + 1, 0);
                continue;
            }
            let stop = c.next_marked(start);
            let (top, end) = (c.base + start * cell, c.base + stop * cell);
            self.classes[k].cursor = (pos, stop);
            if k < CLASSES {
                // SAFETY: `[top, end)` are free cells of a chunk this heap owns: unmarked at
                // the last collection, so no object that a root reaches lies there, and not
                // handed out since (the cursor passes each hole once between collections).
                unsafe { std::ptr::write_bytes(top as *mut u8, 0, end - top) };
            }
            // A typed hole is not zeroed: its cells' headers are 0 already (see the module's
            // "Zeroing"), and `Gc::new` writes the whole object before its header.
            self.handed_out(end - top);
            return (top, end);
        }
        let cells = CHUNK / cell;
        // A spare chunk (zeroed here: all of it for a plain class, the headers of its cells
        // for a typed one) or a new one (zeroed by the system), all of it one region.
        let base = match self.spare.pop() {
            Some(base) if k < CLASSES => {
                // SAFETY: a spare chunk holds no object (it was empty when it became one) and
                // belongs to no class.
                unsafe { std::ptr::write_bytes(base as *mut u8, 0, CHUNK) };
                base
            }
            Some(base) => {
                for i in 0..cells {
                    // SAFETY: the first word of a cell of a spare chunk, which holds no object
                    // and belongs to no class.
                    unsafe { ((base + i * cell) as *mut usize).write(0) };
                }
                base
            }
            None => map_chunk(),
        };
        let ci = self.chunks.len();
        self.chunks.push(Chunk {
            base,
            cell,
            cells,
            recip: recip(cell),
            class: k,
            marks: vec![0; cells.div_ceil(64)],
        });
        self.by_base.insert(base, ci);
        let class_state = &mut self.classes[k];
        class_state.chunks.push(ci);
        class_state.cursor = (class_state.chunks.len(), 0);
        self.handed_out(cells * cell);
        (base, base + cells * cell)
    }

    fn handed_out(&mut self, bytes: usize) {
        self.since += bytes;
        if self.enabled && self.since >= self.due_at() && !WANTED.with(|w| w.replace(true)) {
            // Compiled code collects only in its allocation slow path: send its next inline
            // allocation there, in case this allocation was not its own (a typed object or a
            // large one that a residual call made).
            empty_plain_nurseries();
        }
    }

    /// The chunk and cell `word` points into, if it points into a chunk, through the
    /// direct-mapped cache `recent`.
    #[inline]
    fn find_cached(&mut self, word: usize) -> Option<(usize, usize)> {
        let base = word & !(CHUNK - 1);
        if base == 0 {
            return None;
        }
        let slot = (base / CHUNK) % RECENT;
        let (b, k) = self.recent[slot];
        let k = if b == base {
            k
        } else {
            let &k = self.by_base.get(&base)?;
            self.recent[slot] = (base, k);
            k
        };
        let c = &self.chunks[k];
        let i = cell_index(word - base, c.recip);
        (i < c.cells).then_some((k, i))
    }

    #[inline(always)]
    fn mark(&mut self, word: usize, work: &mut Vec<Work>) {
        if let Some((k, i)) = self.find_cached(word) {
            let c = &mut self.chunks[k];
            if !c.marked(i) {
                c.marks[i / 64] |= 1 << (i % 64);
                let cell = c.base + i * c.cell;
                work.push(if c.typed() {
                    (cell + HEADER, 0)
                } else {
                    (cell, c.cell)
                });
            }
        } else if word >= self.large_span.0 && word < self.large_span.1 {
            self.mark_large(word, work);
        }
    }

    /// `mark` of a word in the range of the large objects (out of line: most words the
    /// collector scans are not).
    #[inline(never)]
    fn mark_large(&mut self, word: usize, work: &mut Vec<Work>) {
        if let Some(start) = self.find_large(word) {
            let l = self.large.get_mut(&start).expect("found");
            if !l.marked {
                l.marked = true;
                work.push(if l.typed {
                    (l.obj(start), 0)
                } else {
                    (start, l.layout.size())
                });
            }
        }
    }

    /// Marks everything (an abandoned collection: nothing is freed until the next one).
    fn mark_all(&mut self) {
        for c in &mut self.chunks {
            c.marks.iter_mut().for_each(|m| *m = !0);
        }
        for l in self.large.values_mut() {
            l.marked = true;
        }
    }

    /// Drops and clears every typed object the marking did not reach; frees the unmarked
    /// large objects.
    fn sweep(&mut self) {
        let mut dropped = 0;
        for c in self.chunks.iter().filter(|c| c.typed()) {
            for (w, &m) in c.marks.iter().enumerate() {
                let mut free = !m;
                while free != 0 {
                    let i = w * 64 + free.trailing_zeros() as usize;
                    free &= free - 1;
                    if i >= c.cells {
                        break;
                    }
                    // SAFETY: a cell of a typed chunk of this heap.
                    dropped += unsafe { free_typed(c.base + i * c.cell + HEADER) };
                }
            }
        }
        let dead: Vec<usize> = self
            .large
            .iter()
            .filter(|(_, l)| !l.marked)
            .map(|(&s, _)| s)
            .collect();
        for start in dead {
            let l = self.large.remove(&start).expect("listed");
            if l.typed {
                // SAFETY: a typed large object (initialized, or with a 0 header).
                dropped += unsafe { free_typed(l.obj(start)) };
            }
            // SAFETY: allocated by `alloc_large` with this layout, unreachable, freed once
            // (removed from the map).
            unsafe { std::alloc::dealloc(start as *mut u8, l.layout) };
            note_released(l.layout.size());
        }
        self.large_span = match (self.large.first_key_value(), self.large.last_key_value()) {
            (Some((&lo, _)), Some((&hi, l))) => (lo, hi + l.layout.size()),
            _ => (0, 0),
        };
        self.stats.dropped += dropped;
    }

    /// Takes the chunks with no live cell out of their classes: spares up to `keep` of them,
    /// returned to the system beyond that.
    fn release_empty(&mut self, keep: usize) {
        if self.chunks.iter().all(|c| c.live() > 0) {
            return;
        }
        let old = std::mem::take(&mut self.chunks);
        self.by_base.clear();
        self.recent.iter_mut().for_each(|e| *e = (0, 0));
        for cl in &mut self.classes {
            cl.chunks.clear();
        }
        for c in old {
            if c.live() > 0 {
                let ci = self.chunks.len();
                self.by_base.insert(c.base, ci);
                self.classes[c.class].chunks.push(ci);
                self.chunks.push(c);
            } else if self.spare.len() < keep {
                self.spare.push(c.base);
            } else {
                // SAFETY: from `map_chunk`; no live cell, and its typed objects were dropped by
                // the sweep; it is in no class and no region any more.
                unsafe { unmap_chunk(c.base) };
                self.stats.released_chunks += 1;
            }
        }
        while self.spare.len() > keep {
            let base = self.spare.pop().expect("nonempty");
            // SAFETY: a spare chunk holds no object and belongs to no class.
            unsafe { unmap_chunk(base) };
            self.stats.released_chunks += 1;
        }
    }
}

/// Drops the typed object at `obj` if its header says one is there, clearing the header
/// first; returns 1 if it had drop glue, else 0.
///
/// # Safety
/// `obj` is the address of a typed object slot of this heap (header before it), unreachable.
unsafe fn free_typed(obj: usize) -> u64 {
    let hp = (obj - HEADER) as *mut usize;
    // SAFETY: the header word of the slot (heap memory is always initialized).
    let header = unsafe { hp.read() };
    if header == 0 {
        return 0;
    }
    // SAFETY: as above; cleared before the drop, so a panicking drop is never run again.
    unsafe { hp.write(0) };
    // SAFETY: a header that is not 0 is the address of the object's static `TypeInfo`.
    let info = unsafe { &*(header as *const TypeInfo) };
    match info.drop {
        Some(d) => {
            // SAFETY: the object is initialized (its header was set) and unreachable: no one
            // uses it again, and it is dropped once (its header is now 0).
            unsafe { d(obj) };
            1
        }
        None => 0,
    }
}

/// How many marked objects wait, prefetched, between the work list and their scan.
const PREFETCH: usize = 8;

/// Asks the processor to bring the cache line at `addr` in (a hint: no fault, no effect on
/// what the program computes).
#[inline(always)]
fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the
    // address; SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(addr as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Scans `[addr, addr + size)` word by word, marking what the words point into.
///
/// # Safety
/// The range is readable memory of the heap (a cell or a large object), 8-aligned.
unsafe fn scan(h: &mut Heap, addr: usize, size: usize, work: &mut Vec<Work>) {
    for off in (0..size / 8).map(|k| k * 8) {
        // SAFETY: in the range the caller vouches for; heap memory is always initialized
        // (zeroed when it is taken and when a hole is handed out).
        let w = unsafe { ((addr + off) as *const usize).read() };
        h.mark(w, work);
    }
}

/// Reports the `Gc`s of the typed object at `obj` to `t` (nothing if its slot is empty).
///
/// # Safety
/// `obj` is the address of a typed object slot of this heap (header before it).
unsafe fn trace_typed(obj: usize, t: &mut Tracer) {
    // SAFETY: the header word of the slot.
    let header = unsafe { ((obj - HEADER) as *const usize).read() };
    if header != 0 {
        // SAFETY: a header that is not 0 is the address of the object's static `TypeInfo`,
        // and the object is initialized and not dropped.
        unsafe { ((*(header as *const TypeInfo)).trace)(obj, t) };
    }
}

/// Collects: frees every object that neither `roots` nor the pinned words reach (small ones'
/// cells become holes the allocator hands out again; typed ones are dropped first).
///
/// # Safety
/// Every object the thread will use after this call is reachable from `roots` or a pinned
/// word, through words of plain objects and the `Trace` of typed ones; no compiled code,
/// tracer, jitcode runner or blackhole interpreter of this thread is running (their registers
/// are not roots).
pub(crate) unsafe fn collect(roots: &[usize]) {
    let t0 = Instant::now();
    empty_nurseries();
    HEAP.with(|h| {
        let mut h = h.borrow_mut();
        let h = &mut *h;
        for c in &mut h.chunks {
            c.marks.iter_mut().for_each(|m| *m = 0);
        }
        for l in h.large.values_mut() {
            l.marked = false;
        }
        if h.recent.len() != RECENT {
            h.recent = vec![(0, 0); RECENT];
        }
        let mut work = std::mem::take(&mut h.work);
        for &w in roots {
            h.mark(w, &mut work);
        }
        let pinned: Vec<usize> = h.pinned.keys().copied().collect();
        for w in pinned {
            h.mark(w, &mut work);
        }
        let mut t = Tracer::new();
        t.words = std::mem::take(&mut h.words);
        // The objects popped from the work list wait in a short queue, prefetched, before they
        // are scanned: the first read of a marked object (a typed one's header) missed the
        // cache and was most of the mark's time, and the queue gives the memory time to come.
        let mut queue = [(0, 0); PREFETCH];
        let (mut head, mut len) = (0, 0);
        loop {
            while len < PREFETCH {
                let Some(item) = work.pop() else { break };
                prefetch(if item.1 == 0 { item.0 - HEADER } else { item.0 });
                queue[(head + len) % PREFETCH] = item;
                len += 1;
            }
            if len == 0 {
                break;
            }
            let (a, s) = queue[head];
            head = (head + 1) % PREFETCH;
            len -= 1;
            if s != 0 {
                // SAFETY: a plain cell of one of the heap's chunks, or a plain large object.
                unsafe { scan(h, a, s, &mut work) };
            } else {
                // SAFETY: a typed object slot.
                unsafe { trace_typed(a, &mut t) };
                for w in t.words.drain(..) {
                    h.mark(w, &mut work);
                }
            }
        }
        let abandoned = t.blocked;
        h.work = work;
        h.words = std::mem::take(&mut t.words);
        if abandoned {
            h.mark_all();
            h.stats.abandoned += 1;
        }
        let mut live = (0, 0);
        for c in &h.chunks {
            let n = c.live();
            live = (live.0 + n * c.cell, live.1 + n);
        }
        for l in h.large.values().filter(|l| l.marked) {
            live = (live.0 + l.layout.size(), live.1 + 1);
        }
        for cl in &mut h.classes {
            cl.cursor = (0, 0);
        }
        h.since = 0;
        if !abandoned {
            h.threshold = 2 * live.0;
            h.sweep();
            let keep = h.due_at().div_ceil(CHUNK) + 1;
            h.release_empty(keep);
            (h.stats.live_bytes, h.stats.live_objects) = live;
        }
        WANTED.with(|w| w.set(false));
        let pause = t0.elapsed();
        let s = &mut h.stats;
        s.collections += 1;
        s.max_pause = s.max_pause.max(pause);
        s.total_pause += pause;
    });
}

#[cfg(test)]
mod tests {
    use super::{cell_index, class_size, recip, CHUNK, CLASSES};

    /// The multiplication gives the quotient of every 8-aligned offset of a chunk for every
    /// class (the offsets a scanned word and the cells' ends can have), and one cell-size
    /// step at the end of the chunk.
    #[test]
    fn cell_index_divides_exactly() {
        for class in 0..CLASSES {
            let cell = class_size(class);
            let r = recip(cell);
            for off in (0..CHUNK).step_by(8).chain([CHUNK - 1, CHUNK]) {
                assert_eq!(cell_index(off, r), off / cell, "offset {off}, cell {cell}");
            }
        }
    }
}
