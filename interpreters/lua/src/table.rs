//! Lua tables: an array part for the keys `1..=len` and a hash part in insertion order (so that
//! `next` can walk it while fields are set to nil), plus the metatable.
//!
//! Every integer key in the array part's range (`1..=arr.items.len()`) that holds a value is in
//! the array part, whatever the order the keys came in: a key past `len` but inside the part
//! moves `len` up to it (the items between stay nil), and a new integer key that finds the hash
//! part full makes the table choose its array part's size as PUC Lua's rehash does (the
//! largest power of two more than half of whose keys hold a value, `Table::rehash_size`), then
//! move the keys of that range out of the hash part. `len` is the last item that holds a
//! value, and a border: the key `len + 1` is never in the hash part (`Table::migrate`).
//!
//! A table is an object of the collected heap (`Gc<Table>`) that changes through shared
//! references: the array part's length, its items and the metatable are `Cell`s, which traced
//! code can read and write with no call (`t.arr.get().items[i].get()`, see `crate::jit`). The
//! array part ([`ArrayPart`]) never changes length: growing installs a new, bigger part (and a
//! full part that is not half used may give way to a smaller one, `Table::append`). The
//! hash part's entries are cells of such a part too (key and value side by side), which the
//! table mirrors with the keys' shape (`crate::shape`), so that traced code reads a field of a
//! shaped table with no call; its index and counts sit behind a `RefCell` and stay native
//! code. No method here holds that borrow across anything that can run Lua code or collect
//! (they call neither).
//!
//! Float keys with an integral value are normalized to integers. This module knows nothing
//! about metamethods; the VM applies them.

use crate::shape::Shape;
use crate::value::{float_to_int, LStr, TRef, Value};
use hashbrown::HashTable;
use meta_jit::gc::{Trace, Tracer};
use meta_jit::hints::*;
use std::cell::{Cell, RefCell};

/// The items of a table's array part: a fixed number of slots, of which the table's `len`
/// first are in use (the slots after them are nil).
///
/// Its `Drop` gives a small part's buffer to [`POOL`] for the next part of its length, instead
/// of to the global allocator: the collector drops the parts it frees in bursts of tens of
/// thousands, and `malloc`/`free` of their buffers was 17% of binarytrees.lua's
/// instructions (measured under callgrind), most of it glibc sorting the burst of frees.
#[derive(JitLayout)]
pub struct ArrayPart {
    /// The slots; never resized.
    pub items: Vec<Cell<Value>>,
}

// SAFETY: every `Gc` of a part is one of its items, all reported. Its `Drop` reads no item (a
// recycled buffer is reset to nil when it is taken again).
unsafe impl Trace for ArrayPart {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        self.items.trace(t);
    }
}

impl Drop for ArrayPart {
    #[inline]
    fn drop(&mut self) {
        let items = std::mem::take(&mut self.items);
        let n = items.len();
        if (1..=POOL_LEN).contains(&n) && items.capacity() == n {
            recycle(items);
        }
    }
}

/// The longest array part whose buffer [`POOL`] keeps.
const POOL_LEN: usize = 16;
/// The most bytes of items [`POOL`] keeps (beyond that, dropped parts free their buffers).
const POOL_BYTES: usize = 4 << 20;
/// The bytes of one item.
const VALUE_BYTES: usize = std::mem::size_of::<Cell<Value>>();

/// Buffers of dropped array parts of lengths `1..=POOL_LEN` (capacity equal to the length),
/// kept for new parts of the same length: one list per length, linked through the first
/// word of each buffer (a free buffer's items are not values any more), and the bytes of all
/// of them. Plain cells with no destructor, so that a look at the pool is one thread-local
/// access with no check; [`POOL_OWNER`] frees the buffers when the thread ends.
struct Pool {
    heads: [Cell<*mut Cell<Value>>; POOL_LEN],
    bytes: Cell<usize>,
}

thread_local! {
    /// The buffers the collector's drops of small array parts leave for new parts.
    static POOL: Pool = const {
        Pool {
            heads: [const { Cell::new(std::ptr::null_mut()) }; POOL_LEN],
            bytes: Cell::new(0),
        }
    };
    /// Frees [`POOL`]'s buffers when the thread ends; touched before a buffer goes into the
    /// pool, so that its destructor is registered (and, once it has run, nothing goes in).
    static POOL_OWNER: PoolOwner = const { PoolOwner };
}

/// The owner of [`POOL`]'s buffers (see there).
struct PoolOwner;

impl Drop for PoolOwner {
    fn drop(&mut self) {
        let _ = POOL.try_with(|p| {
            for (i, head) in p.heads.iter().enumerate() {
                while let Some(v) = pop(head, i + 1) {
                    drop(v);
                }
            }
            p.bytes.set(0);
        });
    }
}

/// Puts `items` (length `1..=POOL_LEN`, capacity equal to it) into [`POOL`], or frees it if
/// the pool is full or gone.
#[inline]
fn recycle(items: Vec<Cell<Value>>) {
    let n = items.len();
    let _ = POOL.try_with(move |p| {
        let bytes = p.bytes.get();
        if bytes + n * VALUE_BYTES > POOL_BYTES {
            return;
        }
        // An empty pool makes sure its owner is alive (registered, or not yet destroyed).
        if bytes == 0 && POOL_OWNER.try_with(|_| ()).is_err() {
            return;
        }
        p.bytes.set(bytes + n * VALUE_BYTES);
        let head = &p.heads[n - 1];
        let buf = std::mem::ManuallyDrop::new(items).as_mut_ptr();
        // SAFETY: `buf` is the buffer of a vector of `n >= 1` items (16 bytes each, aligned to
        // 8), which the pool owns from here on (the vector is forgotten): its first word may
        // hold the link to the next buffer of the list.
        unsafe { (buf as *mut *mut Cell<Value>).write(head.get()) };
        head.set(buf);
    });
}

/// Takes a buffer of `n` items from the pool's list `head`, as a vector of `n` nils.
#[inline]
fn pop(head: &Cell<*mut Cell<Value>>, n: usize) -> Option<Vec<Cell<Value>>> {
    let buf = head.get();
    if buf.is_null() {
        return None;
    }
    // SAFETY: a buffer `recycle` put into this list (of `n` items), whose first word links to
    // the next one.
    head.set(unsafe { (buf as *const *mut Cell<Value>).read() });
    for i in 0..n {
        // SAFETY: item `i < n` of the buffer, which the pool owned alone and now we do.
        unsafe { buf.add(i).write(Cell::new(Value::Nil)) };
    }
    // SAFETY: `buf` came from a `Vec<Cell<Value>>` of length and capacity `n` (from the global
    // allocator), and its `n` items are initialized (nil).
    Some(unsafe { Vec::from_raw_parts(buf, n, n) })
}

/// `cap` nil slots: a buffer from [`POOL`] if it has one of that length, else a new one.
#[inline]
fn nil_items(cap: usize) -> Vec<Cell<Value>> {
    if cap <= POOL_LEN {
        let reused = POOL.with(|p| {
            let v = pop(&p.heads[cap - 1], cap)?;
            p.bytes.set(p.bytes.get() - cap * VALUE_BYTES);
            Some(v)
        });
        if let Some(v) = reused {
            return v;
        }
    }
    (0..cap).map(|_| Cell::new(Value::Nil)).collect()
}

thread_local! {
    /// The array part of every table without array items (a root: see [`trace_empty_part`]).
    static EMPTY: Cell<Option<Gc<ArrayPart>>> = const { Cell::new(None) };
}

/// The shared array part with no slots. The look-up is inline and the first call's
/// allocation is not: with both in one closure, the thread-local access was a call, 3% of
/// binarytrees.lua's instructions.
#[inline]
fn empty_part() -> Gc<ArrayPart> {
    match EMPTY.with(Cell::get) {
        Some(p) => p,
        None => new_empty_part(),
    }
}

/// Makes the shared empty part (the first [`empty_part`] of the thread).
#[inline(never)]
fn new_empty_part() -> Gc<ArrayPart> {
    let p = Gc::new(ArrayPart { items: Vec::new() });
    EMPTY.with(|e| e.set(Some(p)));
    p
}

/// Reports the shared empty array part to `t` (a root for the thread's life, with the
/// interned strings: `crate::value::trace_interned`).
pub fn trace_empty_part(t: &mut Tracer) {
    EMPTY.with(|e| {
        if let Some(p) = e.get() {
            t.mark(p);
        }
    });
}

/// A new array part of `cap` nil slots.
#[inline]
fn new_part(cap: usize) -> Gc<ArrayPart> {
    if cap == 0 {
        return empty_part();
    }
    // The part's items are memory the heap's own threshold does not count: a program whose
    // garbage is mostly array parts (the sieve's, 16 MB and 32 MB, replaced when they grow)
    // would never make it ask for a collection (the sieve's peak went from 35 MB to 266 MB
    // with no collection at all). Strings' bytes are not reported: with them, strbuild's peak
    // went from 69 MB to 77 MB and its time from 0.17 s to 0.20 s (measured with the first
    // version of this counting). Small parts are not reported: the part object itself counts,
    // and reporting the 4 to 8 slots of every object's fields doubled oop.lua's collections.
    if cap > 16 {
        meta_jit::gc::note_external_bytes(cap * std::mem::size_of::<Value>());
    }
    Gc::new(ArrayPart {
        items: nil_items(cap),
    })
}

/// Where [`Table::next_pos`] found the next entry of a traversal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextPos {
    /// Item `j` of the array part (key `j + 1`).
    InArray(usize),
    /// Entry `j` of the hash part (key and value are items `2j` and `2j + 1` of `hpart`).
    InHash(usize),
}

/// The hash part: entries in insertion order (so that `next` can walk them while fields are
/// set to nil) and an index of their positions.
struct HashPart {
    /// The entries, key and value side by side: entry `j`'s key is item `2j` and its value item
    /// `2j + 1`; a removed entry keeps its key with a nil value, and the items after the last
    /// entry are nil. A heap object that the table also holds (`Table::hpart`), so that traced
    /// code reads and writes a field of a shaped table with no call; replaced by a bigger one
    /// when full. (One allocation per hash part, as a `Vec` of pairs was: keys and values in
    /// two allocations made oop.lua 48% slower without the JIT.)
    part: Gc<ArrayPart>,
    /// The number of entries.
    n: u32,
    /// Indexes into the entries, hashed by [`key_hash`] of their key: every entry when there
    /// are more than [`SMALL`] or a key is not a string, none otherwise (an object's fields
    /// are searched along the entries, and cost no allocation and no insertion for an index;
    /// integer keys keep the index's probe, a scan measured slower on fannkuch).
    index: Option<Box<HashTable<u32>>>,
    /// Entries whose key is a string that is not interned (an upper bound: entries whose
    /// value became nil still count until `compact`). While it is 0, an interned key is found
    /// by comparing pointers only.
    plain_keys: u32,
    /// Bit `hash % 64` of every string key of the entries (a superset after removals,
    /// recomputed by `compact`): a string whose bit is clear is no key here, found without a
    /// search (a method looked up in an object before its class).
    str_mask: u64,
    /// Entries whose key is an integer (live or dead, until `compact`): while it is 0, a rehash
    /// or a bigger array part has no key to take from here.
    int_keys: u32,
    /// Entries whose value moved to the array part since the last `compact` (dead entries:
    /// their keys now belong to the array part, so nothing revives them). A bigger array part
    /// compacts the hash part once they are more than half of the entries, so that the
    /// compaction is paid for by the moves (`Table::resize_array`).
    moved_out: u32,
}

#[cfg(test)]
thread_local! {
    /// Work of the table's bulk operations (array items and hash entries that rehashes,
    /// array resizes, compactions and hash part growth visit or copy), and the number of
    /// rehashes: the tests' measure of amortized cost, a count rather than a time.
    static WORK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

#[cfg(test)]
thread_local! {
    /// Searches of a string key after its inline cache missed (`find_and_remember`).
    static SEARCHES: Cell<u64> = const { Cell::new(0) };
}

/// Counts `n` items of bulk work (and a rehash if `rehash`) in the tests' [`WORK`].
#[inline(always)]
fn count_work(_n: usize, _rehash: bool) {
    #[cfg(test)]
    WORK.with(|w| {
        let (n, r) = w.get();
        w.set((n + _n as u64, r + _rehash as u64));
    });
}

/// Remembers the position `j` in the inline cache `ic` of a string key: the last two
/// positions found, 16 bits each, the last one in the low bits (a position past 16 bits
/// is not remembered).
#[inline]
fn ic_remember(ic: &Cell<u32>, j: usize) {
    if j < 0xffff {
        ic.set((ic.get() << 16) | j as u32);
    }
}

/// The bit of a string hash in [`HashPart::str_mask`].
#[inline(always)]
fn mask_bit(hash: u64) -> u64 {
    1 << (hash & 63)
}

// SAFETY: every `Gc` of a hash part is in `part`, which is reported; the index holds positions
// only and the shape addresses only. No `Drop` of its own.
unsafe impl Trace for HashPart {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        self.part.trace(t);
    }
}

/// The most entries a hash part searches without its index.
const SMALL: usize = 8;

/// The array part's size the rehash considers is at most `2^MAX_BITS`.
const MAX_BITS: usize = 26;

/// The slice `b` of the integer key `k` for the rehash: `k` in `(2^(b-1), 2^b]` (key 1 in
/// slice 0); None for keys the array part would never hold.
fn slice_of(k: i64) -> Option<usize> {
    if !(1..=1 << MAX_BITS).contains(&k) {
        return None;
    }
    Some(64 - (k as u64 - 1).leading_zeros() as usize)
}

/// The smallest full array part whose growth considers a smaller part instead
/// ([`Table::append`]).
const MIN_SHRINK: usize = 32;

/// A table.
#[derive(JitLayout)]
pub struct Table {
    /// Array items in use: the keys `1..=len`; the last one is never nil (those before it may
    /// be), and the slots after it are.
    pub len: Cell<u32>,
    /// The array part (at least `len` slots).
    pub arr: Cell<Gc<ArrayPart>>,
    /// The metatable.
    pub meta: Cell<Option<TRef>>,
    /// Entries of the hash part (live or dead): 0 when it is empty, which traced code reads
    /// (it cannot look into the `RefCell`) before it appends to the array part.
    pub nhash: Cell<u32>,
    /// The shape of the hash part's keys (the hash part's own, mirrored for traced code): the
    /// value of the string key whose `Shape::slot` is `i` is item `2i + 1` of [`Table::hpart`].
    pub shape: Cell<&'static Shape>,
    /// The entries of the hash part (the hash part's own, mirrored for traced code).
    pub hpart: Cell<Gc<ArrayPart>>,
    /// The hash part.
    hash: RefCell<HashPart>,
}

// SAFETY: a table's `Gc`s are its array part, its metatable and those of its hash part, all
// reported; `hpart` is the hash part's own entries (reported with it) and `shape` holds none.
// No `Drop` of its own.
unsafe impl Trace for Table {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        self.arr.trace(t);
        self.meta.trace(t);
        self.hash.trace(t);
    }
}

/// Spreads the bits of `x` (the low bits choose the bucket, the high bits tag it).
#[inline]
fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// The hash of a (normalized) key: a string's own hash, or the mixed bits of the value.
#[inline]
fn key_hash(k: &Value) -> u64 {
    match k {
        Value::Str(s) => s.hash,
        Value::Int(i) => mix(*i as u64),
        Value::Num(f) => match float_to_int(*f) {
            Some(i) => mix(i as u64),
            None => mix(f.to_bits()),
        },
        Value::Boolean(b) => mix(*b as u64 + 1),
        Value::Nil => 0,
        _ => mix(k.ptr() as u64),
    }
}

fn norm(k: &Value) -> Option<Value> {
    if let Value::Num(f) = k {
        if let Some(i) = float_to_int(*f) {
            return Some(Value::Int(i));
        }
    }
    None
}

/// Whether `e` is the string object `p`.
#[inline(always)]
fn is_str(e: &Value, p: *const crate::value::LStr) -> bool {
    matches!(e, Value::Str(s) if std::ptr::eq(s.as_ptr(), p))
}

impl HashPart {
    /// An empty hash part with room for `n` entries.
    fn with_capacity(n: usize) -> HashPart {
        HashPart {
            part: new_part(2 * n),
            n: 0,
            index: None,
            plain_keys: 0,
            str_mask: 0,
            int_keys: 0,
            moved_out: 0,
        }
    }

    /// The number of entries.
    #[inline(always)]
    fn len(&self) -> usize {
        self.n as usize
    }

    /// The key of entry `j`.
    #[inline(always)]
    fn key(&self, j: usize) -> Value {
        self.part.items[2 * j].get()
    }

    /// The value of entry `j`.
    #[inline(always)]
    fn val(&self, j: usize) -> Value {
        self.part.items[2 * j + 1].get()
    }

    /// The key and the value of entry `j < self.len()`, without bounds checks (the inline
    /// caches' hit path, which has just compared `j` with the length).
    #[inline(always)]
    fn entry(&self, j: usize) -> (&Cell<Value>, &Cell<Value>) {
        debug_assert!(j < self.len());
        debug_assert!(2 * self.len() <= self.part.items.len());
        // SAFETY: `j < n` (the caller's test), and `2 * n <= part.items.len()` always: an
        // entry is appended only after `grow` made room for it (`set`), `grow` copies into a
        // part twice as large, and `compact` only lowers `n`. So `2 * j + 1` is in bounds.
        unsafe {
            let items = &self.part.items;
            (items.get_unchecked(2 * j), items.get_unchecked(2 * j + 1))
        }
    }

    /// Sets the value of entry `j`. (Nothing counts the entries whose value is nil: traced
    /// code writes values itself, nil included.)
    #[inline(always)]
    fn set_val(&self, j: usize, v: Value) {
        self.part.items[2 * j + 1].set(v)
    }

    /// The keys, in order.
    fn keys(&self) -> impl Iterator<Item = Value> + '_ {
        (0..self.len()).map(|j| self.key(j))
    }

    /// The position of key `k` among the entries. An interned string key in a small table
    /// whose string keys are all interned (the fields and methods of objects) is found inline
    /// by comparing pointers along the keys; the rest goes through the index (`find_hashed`).
    #[inline(always)]
    fn find(&self, k: &Value) -> Option<usize> {
        if let Value::Str(ks) = k {
            if self.str_mask & mask_bit(ks.hash) == 0 {
                return None;
            }
            if ks.interned && self.plain_keys == 0 && self.len() <= SMALL {
                // Every string key here is interned, and so is `ks`: the entry of an equal
                // key holds this very object.
                let p = ks.as_ptr();
                return (0..self.len()).position(|j| is_str(&self.entry(j).0.get(), p));
            }
        }
        self.find_hashed(k)
    }

    /// Whether the hash part is full: a new key needs a bigger part (or a compaction).
    fn full(&self) -> bool {
        2 * self.len() == self.part.items.len()
    }

    /// Whether a full hash part drops its dead entries before it gets a new key: the entries
    /// whose value is nil are more than half (and more than 8).
    fn compaction_due(&self) -> bool {
        count_work(self.len(), false);
        let dead = (0..self.len())
            .filter(|&j| matches!(self.val(j), Value::Nil))
            .count();
        dead > 8 && dead * 2 > self.len()
    }

    /// `find` through the index.
    #[inline(never)]
    fn find_hashed(&self, k: &Value) -> Option<usize> {
        let Some(ix) = &self.index else {
            return self.find_small(k);
        };
        if let Value::Str(ks) = k {
            if ks.interned && self.plain_keys == 0 {
                // As in `find`: compare pointers only.
                let p = ks.as_ptr();
                return ix
                    .find(ks.hash, |&i| is_str(&self.key(i as usize), p))
                    .map(|&i| i as usize);
            }
            // Strings: a pointer comparison first (constants are interned), then the bytes.
            return ix
                .find(ks.hash, |&i| match &self.key(i as usize) {
                    Value::Str(s) => {
                        Gc::ptr_eq(*s, *ks) || (s.hash == ks.hash && s.bytes == ks.bytes)
                    }
                    _ => false,
                })
                .map(|&i| i as usize);
        }
        if let Value::Int(ki) = *k {
            return self.find_int(ki);
        }
        ix.find(key_hash(k), |&i| self.key(i as usize).raw_eq(k))
            .map(|&i| i as usize)
    }

    /// `find` in a hash part without an index (at most [`SMALL`] entries, all with string
    /// keys): along the keys, with the comparisons of the index's probes.
    fn find_small(&self, k: &Value) -> Option<usize> {
        match k {
            Value::Str(ks) => self.keys().position(|e| match e {
                Value::Str(s) => Gc::ptr_eq(s, *ks) || (s.hash == ks.hash && s.bytes == ks.bytes),
                _ => false,
            }),
            Value::Int(ki) => self
                .keys()
                .position(|e| matches!(e, Value::Int(j) if j == *ki)),
            _ => self.keys().position(|e| e.raw_eq(k)),
        }
    }

    /// The position of the integer key `ki` among the entries.
    #[inline]
    fn find_int(&self, ki: i64) -> Option<usize> {
        // Without an index (string keys only) there is no integer key.
        let ix = self.index.as_ref()?;
        ix.find(
            mix(ki as u64),
            |&i| matches!(self.key(i as usize), Value::Int(j) if j == ki),
        )
        .map(|&i| i as usize)
    }

    #[inline]
    fn get(&self, k: &Value) -> Value {
        match self.find(k) {
            Some(i) => self.val(i),
            None => Value::Nil,
        }
    }

    /// The position of the string key `k` among the entries when it is the one `ic` names
    /// (one pointer comparison). Keys are unique, so the entry that holds this very key
    /// object is the key's entry, whatever happened to the table since `ic` was set; an equal
    /// key held by another string object is a miss, and `find` decides. The cache holds two
    /// positions, 16 bits each ([`ic_remember`]): this tests the last one remembered, and
    /// the miss path (`find_and_remember`) the one before.
    #[inline(always)]
    fn ic_hit(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        let Value::Str(ks) = k else {
            return None;
        };
        let j = (ic.get() & 0xffff) as usize;
        if j < self.len() {
            if let Value::Str(s) = self.entry(j).0.get() {
                if Gc::ptr_eq(s, *ks) {
                    return Some(j);
                }
            }
        }
        None
    }

    /// `find` for a string key, first at the position `ic` remembers, which it updates.
    #[inline(always)]
    fn find_ic(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        if let Some(j) = self.ic_hit(k, ic) {
            return Some(j);
        }
        self.find_and_remember(k, ic)
    }

    /// The position `ic` remembered before the last, when its entry holds this very key: a
    /// site that sees objects of two layouts (richards' tasks, made with and without a field)
    /// finds both without a search.
    #[inline(always)]
    fn ic_second(&self, ks: Gc<LStr>, ic: &Cell<u32>) -> Option<usize> {
        let j = (ic.get() >> 16) as usize;
        (j < self.len() && is_str(&self.entry(j).0.get(), ks.as_ptr())).then_some(j)
    }

    /// `find` after the last remembered position missed: the one before, then a search.
    #[inline(never)]
    fn find_and_remember(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        if let Value::Str(ks) = k {
            if let Some(j) = self.ic_second(*ks, ic) {
                return Some(j);
            }
        }
        self.search_and_remember(k, ic)
    }

    /// `find` when both remembered positions missed; remembers the position found.
    fn search_and_remember(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        if self.n == 0 {
            return None;
        }
        #[cfg(test)]
        SEARCHES.with(|c| c.set(c.get() + 1));
        let j = self.find(k)?;
        ic_remember(ic, j);
        Some(j)
    }

    fn remove(&mut self, k: &Value) {
        if let Some(j) = self.find(k) {
            self.set_val(j, Value::Nil);
        }
    }

    /// `self[k] = v`; `shape` is the table's shape of these keys, which it keeps up to date.
    fn set(&mut self, k: Value, v: Value, shape: &Cell<&'static Shape>) {
        if let Some(j) = self.find(&k) {
            self.set_val(j, v);
            return;
        }
        if matches!(v, Value::Nil) {
            return;
        }
        if self.full() && self.compaction_due() {
            self.compact(shape);
        }
        let ns = shape.get().with(&k);
        self.append(k, v);
        shape.set(ns);
    }

    /// Appends the entry `k`, `v`: `k` is no key here, `v` is not nil, and no compaction is
    /// due (`set`'s first steps). Keeps the masks, counts and index up to date, and grows the
    /// part when it is full; the caller sets the shape.
    #[inline]
    fn append(&mut self, k: Value, v: Value) {
        if let Value::Str(s) = &k {
            self.plain_keys += !s.interned as u32;
            self.str_mask |= mask_bit(s.hash);
        }
        self.int_keys += matches!(k, Value::Int(_)) as u32;
        let n = self.len();
        if 2 * n == self.part.items.len() {
            self.grow();
        }
        self.part.items[2 * n].set(k);
        self.part.items[2 * n + 1].set(v);
        self.n += 1;
        let part = self.part;
        if let Some(ix) = &mut self.index {
            ix.insert_unique(key_hash(&k), n as u32, |&i| {
                key_hash(&part.items[2 * i as usize].get())
            });
        } else if n + 1 > SMALL || !matches!(k, Value::Str(_)) {
            self.build_index();
        }
    }

    /// Replaces `part` by one with room for twice as many entries (at least 4).
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.len();
        count_work(n, false);
        let new = new_part(2 * (n * 2).max(4));
        for (d, s) in new.items.iter().zip(&self.part.items[..2 * n]) {
            d.set(s.get());
        }
        self.part = new;
        if self.index.is_some() {
            // A new index with room for the new part's entries, built along the entries in
            // order: letting the index grow by itself later rehashes it bucket by bucket, which
            // reads the entries' keys in the buckets' order, one cache miss each (a third of
            // the time of a loop that adds integer keys to the hash part).
            self.index = None;
            self.build_index_for(new.items.len() / 2);
        }
    }

    /// Indexes every entry (there is no index when this is called).
    fn build_index(&mut self) {
        self.build_index_for(self.len());
    }

    /// [`HashPart::build_index`] with room for `cap` entries.
    fn build_index_for(&mut self, cap: usize) {
        let part = self.part;
        let hash = |i: u32| key_hash(&part.items[2 * i as usize].get());
        count_work(self.len(), false);
        let mut ix = HashTable::with_capacity(cap);
        for j in 0..self.n {
            ix.insert_unique(hash(j), j, |&i| hash(i));
        }
        self.index = Some(Box::new(ix));
    }

    /// Drops the entries whose value is nil, keeping the others in order (and `shape`, the
    /// table's shape of the keys, up to date).
    fn compact(&mut self, shape: &Cell<&'static Shape>) {
        count_work(self.len(), false);
        self.moved_out = 0;
        let items = &self.part.items;
        let mut w = 0;
        for j in 0..self.len() {
            let v = self.val(j);
            if !matches!(v, Value::Nil) {
                items[2 * w].set(self.key(j));
                items[2 * w + 1].set(v);
                w += 1;
            }
        }
        for it in &items[2 * w..2 * self.len()] {
            it.set(Value::Nil);
        }
        self.n = w as u32;
        shape.set(Shape::of_keys(self.keys()));
        self.str_mask = (self.keys())
            .map(|k| match k {
                Value::Str(s) => mask_bit(s.hash),
                _ => 0,
            })
            .fold(0, |m, b| m | b);
        self.plain_keys = (self.keys())
            .filter(|k| matches!(k, Value::Str(s) if !s.interned))
            .count() as u32;
        self.int_keys = (self.keys()).filter(|k| matches!(k, Value::Int(_))).count() as u32;
        self.index = None;
        if self.len() > SMALL || self.keys().any(|k| !matches!(k, Value::Str(_))) {
            // With room for the part's entries: the keys added until it is full again would
            // make the index grow by rehashing (a queue's hash part compacts again and again).
            self.build_index_for(self.part.items.len() / 2);
        }
    }
}

impl Default for Table {
    fn default() -> Table {
        Table::with_capacity(0, 0)
    }
}

impl Table {
    /// An empty table with room for `narr` array items and `nhash` hash entries.
    pub fn with_capacity(narr: usize, nhash: usize) -> Table {
        let h = HashPart::with_capacity(nhash);
        Table {
            len: Cell::new(0),
            arr: Cell::new(new_part(narr)),
            meta: Cell::new(None),
            nhash: Cell::new(0),
            shape: Cell::new(Shape::root()),
            hpart: Cell::new(h.part),
            hash: RefCell::new(h),
        }
    }

    /// A new table object.
    pub fn new_gc(narr: usize, nhash: usize) -> TRef {
        Gc::new(Table::with_capacity(narr, nhash))
    }

    /// The metatable.
    #[inline]
    pub fn meta(&self) -> Option<TRef> {
        self.meta.get()
    }

    /// Sets the metatable.
    pub fn set_meta(&self, m: Option<TRef>) {
        self.meta.set(m)
    }

    /// The number of array items in use.
    #[inline]
    pub fn arr_len(&self) -> usize {
        self.len.get() as usize
    }

    /// Whether the hash part has no entries (live or dead).
    #[inline]
    fn hash_empty(&self) -> bool {
        self.nhash.get() == 0
    }

    /// `h.set(k, v)` on this table's hash part `h`, keeping `nhash` up to date.
    #[inline]
    fn hash_set(&self, h: &mut HashPart, k: Value, v: Value) {
        h.set(k, v, &self.shape);
        self.nhash.set(h.n);
        self.hpart.set(h.part);
    }

    /// The entry of the integer key `i` in the hash part, if it has one: its value is item
    /// `2 * j + 1` of `hpart`.
    pub fn hash_entry_of_int(&self, i: i64) -> Option<usize> {
        self.hash.borrow().find_int(i)
    }

    /// The entry of the string key `k` in the hash part, if it has one: its value is item
    /// `2 * j + 1` of `hpart`.
    pub fn hash_entry_of_str(&self, k: Gc<LStr>) -> Option<usize> {
        let h = self.hash.borrow();
        if h.n == 0 {
            return None;
        }
        h.find(&Value::Str(k))
    }

    /// `t[i]` for an integer key. A key of the array part's range is read from its slot,
    /// also past `len` (a nil slot): the hash part holds no value for such a key.
    /// The array part's read inline (the plain loop's `GetTable` runs in two copies of `run`,
    /// where a plain `#[inline]` was no longer taken), the hash part's out of line.
    #[inline(always)]
    pub fn get_int(&self, i: i64) -> Value {
        let items = &self.arr.get().items;
        let k = (i as u64).wrapping_sub(1);
        if k < items.len() as u64 {
            return items[k as usize].get();
        }
        self.get_int_hashed(i)
    }

    /// [`Table::get_int`] of a key outside the array part's range.
    #[inline(never)]
    fn get_int_hashed(&self, i: i64) -> Value {
        let h = self.hash.borrow();
        match h.find_int(i) {
            Some(j) => h.val(j),
            None => Value::Nil,
        }
    }

    /// `t[k]` without metamethods.
    pub fn get(&self, k: &Value) -> Value {
        match k {
            Value::Int(i) => self.get_int(*i),
            Value::Num(_) => match norm(k) {
                Some(Value::Int(i)) => self.get_int(i),
                _ => self.hash.borrow().get(k),
            },
            Value::Nil => Value::Nil,
            _ => self.get_str(k),
        }
    }

    /// `t[k]` for a string key.
    #[inline]
    pub fn get_str(&self, k: &Value) -> Value {
        let h = self.hash.borrow();
        if h.n == 0 {
            return Value::Nil;
        }
        h.get(k)
    }

    /// `t[k]` for a string key, with the inline cache `ic` of the instruction that reads it
    /// (`Proto::ic`).
    #[inline(always)]
    pub fn get_str_ic(&self, k: &Value, ic: &Cell<u32>) -> Value {
        {
            // SAFETY: the hash part is not borrowed mutably (checked: `Err` otherwise), and
            // the reference lives only in this block, which calls nothing that could borrow
            // it mutably (it copies one value out).
            if let Ok(h) = unsafe { self.hash.try_borrow_unguarded() } {
                // The hit, inline: the entry at the remembered position holds this very key.
                if let Value::Str(ks) = k {
                    if let Some(j) = h.ic_hit(k, ic) {
                        return h.entry(j).1.get();
                    }
                    // Not a key of this table: no search.
                    if h.str_mask & mask_bit(ks.hash) == 0 {
                        return Value::Nil;
                    }
                    if let Some(j) = h.ic_second(*ks, ic) {
                        return h.entry(j).1.get();
                    }
                }
            }
        }
        self.get_str_ic_miss(k, ic)
    }

    /// The hit of [`Table::get_str_ic`] alone: true, with the value in `out`, when the entry
    /// that `ic` remembers holds this very key and a value other than nil. False (`out`
    /// untouched) otherwise, without a search: the caller goes on with `get_str_ic`.
    #[inline(always)]
    pub fn get_str_cached(&self, k: &Value, ic: &Cell<u32>, out: &mut Value) -> bool {
        // SAFETY: as in `get_str_ic`: the reference lives only in this block, which copies
        // one value out and calls nothing.
        if let Ok(h) = unsafe { self.hash.try_borrow_unguarded() } {
            if let Some(j) = h.ic_hit(k, ic) {
                let v = h.entry(j).1.get();
                if !matches!(v, Value::Nil) {
                    *out = v;
                    return true;
                }
            }
        }
        false
    }

    /// [`Table::get_str_ic`] when neither remembered position holds the key (it tested both).
    #[inline(never)]
    fn get_str_ic_miss(&self, k: &Value, ic: &Cell<u32>) -> Value {
        let h = self.hash.borrow();
        match h.search_and_remember(k, ic) {
            Some(j) => h.val(j),
            None => Value::Nil,
        }
    }

    /// [`Table::set_str_fast`] with the inline cache `ic` of the instruction that writes.
    #[inline(always)]
    pub fn set_str_fast_ic(&self, k: &Value, v: Value, ic: &Cell<u32>) -> Result<(), Value> {
        let mut h = self.hash.borrow_mut();
        let j = h.find_ic(k, ic);
        self.set_str_found(&mut h, j, k, v)
    }

    /// `t[k] = v` for a string key `k` when no metamethod can apply: the key holds a value,
    /// or the table has no metatable. Gives `v` back otherwise (the caller tries
    /// `__newindex`).
    #[inline]
    pub fn set_str_fast(&self, k: &Value, v: Value) -> Result<(), Value> {
        let mut h = self.hash.borrow_mut();
        let j = h.find(k);
        self.set_str_found(&mut h, j, k, v)
    }

    /// The two above, once the key's entry `j` (if any) is found in the hash part `h`.
    #[inline(always)]
    fn set_str_found(
        &self,
        h: &mut HashPart,
        j: Option<usize>,
        k: &Value,
        v: Value,
    ) -> Result<(), Value> {
        let no_meta = self.meta.get().is_none();
        match j {
            Some(j) => {
                // `j` is an entry of `h` (`find` and the cache give only those).
                let ev = h.entry(j).1;
                if no_meta || !matches!(ev.get(), Value::Nil) {
                    ev.set(v);
                } else {
                    return Err(v);
                }
            }
            None if no_meta => self.hash_set(h, *k, v),
            None => return Err(v),
        }
        Ok(())
    }

    /// Appends the string key `k`, which is no key of the hash part, with the value `v` (not
    /// nil) as [`Table::set`] does, giving the table the shape `shape` (the current one with
    /// `k`, which the caller knows), when that changes the shape by one transition: no
    /// compaction is due (a full part with mostly dead entries drops them first, which
    /// changes the entries' positions). Gives the hash part's entries (a new part if it grew);
    /// None, with nothing done, otherwise. The caller has checked that no `__newindex` applies.
    /// (Traced code's new key, `crate::jit::field_set`: it knows the new shape and the key's
    /// slot, the old shape's length.)
    pub fn append_str_key(
        &self,
        k: &Value,
        v: Value,
        shape: &'static Shape,
    ) -> Option<Gc<ArrayPart>> {
        let mut h = self.hash.borrow_mut();
        if h.full() && h.compaction_due() {
            return None;
        }
        debug_assert!(std::ptr::eq(shape, self.shape.get().with(k)));
        self.shape.set(shape);
        Some(self.append_entry(&mut h, k, v))
    }

    /// Appends the key `k`, which is no key of the hash part, with the value `v` (not nil) as
    /// [`Table::set`] does, when the table has the dictionary shape (which it keeps) and no
    /// compaction is due (see [`Table::append_str_key`]). Gives the hash part's entries;
    /// None, with nothing done, otherwise.
    pub fn append_dict_key(&self, k: &Value, v: Value) -> Option<Gc<ArrayPart>> {
        let mut h = self.hash.borrow_mut();
        if !self.shape.get().is_dict() || (h.full() && h.compaction_due()) {
            return None;
        }
        Some(self.append_entry(&mut h, k, v))
    }

    /// The entry `k`, `v` appended to the hash part `h` of this table (`k` no key of it, `v`
    /// not nil), with the cells traced code reads (`nhash`, `hpart`) set; gives the entries.
    fn append_entry(&self, h: &mut HashPart, k: &Value, v: Value) -> Gc<ArrayPart> {
        debug_assert!(h.find(k).is_none() && !matches!(v, Value::Nil));
        h.append(*k, v);
        self.nhash.set(h.n);
        self.hpart.set(h.part);
        h.part
    }

    /// `t[i] = v` for an integer key and a value other than nil when no metamethod can apply:
    /// the key holds a value (array or hash part), or the table has no metatable. Gives `v`
    /// back otherwise.
    /// The store into a slot up to `len` inline (see [`Table::get_int`]), the rest out of line.
    #[inline(always)]
    pub fn set_int_fast(&self, i: i64, v: Value) -> Result<(), Value> {
        if matches!(v, Value::Nil) {
            return Err(v);
        }
        let n = self.len.get() as u64;
        if (i as u64).wrapping_sub(1) < n {
            let slot = &self.arr.get().items[(i - 1) as usize];
            if self.meta.get().is_none() || !matches!(slot.get(), Value::Nil) {
                slot.set(v);
                return Ok(());
            }
            return Err(v);
        }
        self.set_int_fast_rest(i, v)
    }

    /// [`Table::set_int_fast`] of a key past `len` (`v` is not nil).
    #[inline(never)]
    fn set_int_fast_rest(&self, i: i64, v: Value) -> Result<(), Value> {
        let n = self.len.get() as u64;
        let no_meta = self.meta.get().is_none();
        if i as u64 == n + 1 && no_meta && self.hash_empty() {
            self.append(v);
            return Ok(());
        } else if i >= 1 && (i as u64) <= self.arr.get().items.len() as u64 {
            // A nil slot past `len`: the hash part holds no value for its key (no search).
        } else {
            // A key of the hash part that holds a value.
            let h = self.hash.borrow_mut();
            if let Some(j) = h.find_int(i) {
                if !matches!(h.val(j), Value::Nil) {
                    h.set_val(j, v);
                    return Ok(());
                }
            }
        }
        if no_meta {
            self.set_int(i, v);
            return Ok(());
        }
        Err(v)
    }

    /// Appends `v` at key `len + 1` of the array part, installing a bigger part when the
    /// slots are used up. The caller holds no borrow of the hash part.
    fn push(&self, v: Value) {
        let n = self.len.get() as usize;
        let part = self.arr.get();
        if n < part.items.len() {
            part.items[n].set(v);
            self.len.set(n as u32 + 1);
        } else {
            self.grow(n, v);
        }
    }

    /// [`Table::push`] for a store of the key `len + 1` (a value other than nil, and no
    /// borrow of the hash part): when the array part is full and not even half of its
    /// slots hold a value, the table may choose a smaller array part instead of a bigger one
    /// ([`Table::shrink_size`]), as PUC Lua's rehash does. A queue (`q[tail] = v`,
    /// `q[head] = nil`) kept every slot it ever used otherwise: 64 MB for 4 million items
    /// that passed through a window of 1000.
    fn append(&self, v: Value) {
        let n = self.len.get() as usize;
        if n < self.arr.get().items.len() || n < MIN_SHRINK {
            return self.push(v);
        }
        self.append_full(n, v);
    }

    #[inline(never)]
    fn append_full(&self, n: usize, v: Value) {
        let size = {
            let h = self.hash.borrow();
            self.shrink_size(&h, n as i64 + 1)
        };
        match size {
            Some(size) => {
                self.shrink_array(size);
                self.hash_set(&mut self.hash.borrow_mut(), Value::Int(n as i64 + 1), v);
            }
            None => self.grow(n, v),
        }
    }

    /// The array part's size PUC Lua's rehash would choose once the integer key `i` is added
    /// (see [`Table::rehash_size`]) when it is smaller than the array part and the key after
    /// it holds no value (so that `len` stays a border: that key would go to the hash part).
    /// Counts the items of the array part from key 1 up, and stops once they are more than
    /// half of the smallest power of two `2^b >= len`: that size is then the least the
    /// rehash could choose (a dense part is counted only to its middle).
    fn shrink_size(&self, h: &HashPart, i: i64) -> Option<usize> {
        let n = self.len.get() as usize;
        let items = &self.arr.get().items;
        let half = n.next_power_of_two() / 2;
        let mut slices = [0usize; MAX_BITS + 1];
        let mut lo = 0;
        let mut used = 0;
        for (b, count) in slices.iter_mut().enumerate() {
            let hi = (1usize << b).min(n);
            if lo >= hi {
                break;
            }
            count_work(hi - lo, false);
            *count = items[lo..hi]
                .iter()
                .filter(|c| !matches!(c.get(), Value::Nil))
                .count();
            used += *count;
            if used > half {
                return None;
            }
            lo = hi;
        }
        count_work(0, true);
        if h.int_keys > 0 {
            count_work(h.len(), false);
            for j in 0..h.len() {
                if let (Value::Int(k), false) = (h.key(j), matches!(h.val(j), Value::Nil)) {
                    if let Some(b) = slice_of(k) {
                        slices[b] += 1;
                    }
                }
            }
        }
        if let Some(b) = slice_of(i) {
            slices[b] += 1;
        }
        let mut used = 0;
        let mut best = 0;
        for (b, count) in slices.iter().enumerate() {
            used += count;
            if 2 * used > 1 << b {
                best = 1 << b;
            }
        }
        (best < items.len() && matches!(items[best].get(), Value::Nil)).then_some(best)
    }

    /// Installs an array part of `size` slots, smaller than the one in use, whose key
    /// `size + 1` holds no value, and moves the items past it to the hash part. The caller
    /// holds no borrow of the hash part.
    fn shrink_array(&self, size: usize) {
        let n = self.len.get() as usize;
        let old = self.arr.get();
        let new = new_part(size);
        count_work(n, false);
        for (d, s) in new.items.iter().zip(&old.items[..n.min(size)]) {
            d.set(s.get());
        }
        self.arr.set(new);
        self.len.set(n.min(size) as u32);
        self.trim();
        let mut h = self.hash.borrow_mut();
        for (k, c) in old.items[..n].iter().enumerate().skip(size) {
            let v = c.get();
            if !matches!(v, Value::Nil) {
                self.hash_set(&mut h, Value::Int(k as i64 + 1), v);
            }
        }
    }

    #[inline(never)]
    fn grow(&self, n: usize, v: Value) {
        self.resize_array((n * 2).max(4));
        self.arr.get().items[n].set(v);
        self.len.set(self.len.get().max(n as u32 + 1));
    }

    /// Installs an array part of `cap > arr.items.len()` slots and moves into it the keys
    /// of the new range (`old cap + 1..=cap`) from the hash part (every integer key in the
    /// array part's range lives in the array part). `len` becomes the largest key in use. The
    /// caller holds no borrow of the hash part, and keeps the border (a key `cap + 1` of the
    /// hash part: [`Table::migrate`]).
    ///
    /// The work is paid for by the growth, whatever the hash part's size: the new range's
    /// keys are looked up one by one when they are fewer than the hash entries (the entries
    /// are walked otherwise), and a moved entry stays in the hash part, dead, until the moved
    /// ones are more than half of the entries. (Walking and compacting the whole hash part at
    /// every doubling made a table filled at odd keys, then at even keys, O(n log n): 17
    /// walks of up to 500,000 entries for n = 10^6.)
    fn resize_array(&self, cap: usize) {
        let n = self.len.get() as usize;
        let old = self.arr.get();
        let old_cap = old.items.len();
        let new = new_part(cap);
        count_work(n, false);
        for (d, s) in new.items.iter().zip(&old.items[..n]) {
            d.set(s.get());
        }
        self.arr.set(new);
        if self.hash_empty() {
            return;
        }
        let mut h = self.hash.borrow_mut();
        if h.int_keys == 0 {
            return;
        }
        let mut top = n;
        let mut moved = 0;
        let mut take = |h: &HashPart, j: usize, k: usize| {
            let v = h.val(j);
            if !matches!(v, Value::Nil) {
                new.items[k - 1].set(v);
                h.set_val(j, Value::Nil);
                top = top.max(k);
                moved += 1;
            }
        };
        if cap - old_cap < h.len() {
            count_work(cap - old_cap, false);
            for k in old_cap + 1..=cap {
                if let Some(j) = h.find_int(k as i64) {
                    take(&h, j, k);
                }
            }
        } else {
            count_work(h.len(), false);
            for j in 0..h.len() {
                if let Value::Int(k) = h.key(j) {
                    if k >= 1 && (k as u64) <= cap as u64 {
                        take(&h, j, k as usize);
                    }
                }
            }
        }
        self.len.set(top as u32);
        if moved > 0 {
            h.moved_out += moved;
            if 2 * h.moved_out as usize > h.len() {
                h.compact(&self.shape);
                self.nhash.set(h.n);
                self.hpart.set(h.part);
            }
        }
    }

    /// The array part's size PUC Lua's rehash would choose once the integer key `i` is added:
    /// the largest power of two `2^b` such that more than half the keys `1..=2^b` hold a value
    /// (counting the array part's, the hash part's and `i`). None unless it is bigger than the
    /// array part.
    ///
    /// Only sizes bigger than the array part matter, and every item of the array part is a key
    /// below them: the array part counts as its number of items that hold a value, which is
    /// at most `len`. That bound is tried first, and the items are counted only when it
    /// allows a bigger size, so that a rehash of a table with a big array part and a small
    /// hash part costs the hash part's entries (which its growth pays for), not the items.
    fn rehash_size(&self, h: &HashPart, i: i64) -> Option<usize> {
        // `slices[b]`: hash keys (and `i`) in `(2^(b-1), 2^b]` (key 1 in `slices[0]`).
        let slice = slice_of;
        count_work(0, true);
        let mut slices = [0usize; MAX_BITS + 1];
        if h.int_keys > 0 {
            count_work(h.len(), false);
            for j in 0..h.len() {
                if let Value::Int(k) = h.key(j) {
                    if let (Some(b), false) = (slice(k), matches!(h.val(j), Value::Nil)) {
                        slices[b] += 1;
                    }
                }
            }
        }
        if let Some(b) = slice(i) {
            slices[b] += 1;
        }
        let cap = self.arr.get().items.len();
        // The largest size `2^b > cap` with more than `2^(b-1)` keys in use when the array
        // part holds `in_array` of them.
        let best = |in_array: usize| {
            let mut used = in_array;
            let mut best = 0;
            for (b, count) in slices.iter().enumerate() {
                used += count;
                if 1 << b > cap && 2 * used > 1 << b {
                    best = 1 << b;
                }
            }
            best
        };
        let n = self.len.get() as usize;
        if best(n) == 0 {
            return None;
        }
        count_work(n, false);
        let in_array = (self.arr.get().items[..n].iter())
            .filter(|c| !matches!(c.get(), Value::Nil))
            .count();
        Some(best(in_array)).filter(|&b| b > 0)
    }

    /// Drops the last array item.
    fn pop(&self) {
        let n = self.len.get() as usize - 1;
        self.arr.get().items[n].set(Value::Nil);
        self.len.set(n as u32);
    }

    /// Drops trailing nils of the array part (keeps the border at its end).
    fn trim(&self) {
        let part = self.arr.get();
        while self.len.get() > 0
            && matches!(part.items[self.len.get() as usize - 1].get(), Value::Nil)
        {
            self.pop();
        }
    }

    /// `t[i] = v` for an integer key. A key in `1..=arr.items.len()` goes to the array part
    /// (a key past `len` moves `len` up to it); a key past the array part goes to the hash
    /// part, unless the hash part is full: then a rehash may make room for it in a bigger
    /// array part ([`Table::rehash_size`]).
    pub fn set_int(&self, i: i64, v: Value) {
        let n = self.len.get() as usize;
        let cap = self.arr.get().items.len();
        if i >= 1 && (i as u64) <= n as u64 {
            let idx = (i - 1) as usize;
            if !matches!(v, Value::Nil) || idx + 1 < n {
                self.arr.get().items[idx].set(v);
            } else {
                // The last item becomes nil: shrink to keep the border at the end.
                self.pop();
                self.trim();
            }
            return;
        }
        if i >= 1 && (i as u64) <= cap as u64 {
            // A free slot of the array part: the hash part holds no such key.
            if !matches!(v, Value::Nil) {
                self.arr.get().items[(i - 1) as usize].set(v);
                self.len.set(i as u32);
                self.migrate();
            }
            return;
        }
        if i as u64 == n as u64 + 1 && !matches!(v, Value::Nil) {
            // The array part is full (`n == cap`): append, the key leaving the hash part first
            // (the bigger part would take its old value from there).
            if !self.hash_empty() {
                self.hash.borrow_mut().remove(&Value::Int(i));
            }
            self.append(v);
            self.migrate();
            return;
        }
        let mut h = self.hash.borrow_mut();
        if !matches!(v, Value::Nil) && h.full() && h.find_int(i).is_none() {
            if let Some(cap) = self.rehash_size(&h, i) {
                drop(h);
                self.resize_array(cap);
                self.migrate();
                // `i` may be a key of the array part now; the hash part has room otherwise
                // (or the next rehash finds no bigger size: no loop).
                return self.set_int(i, v);
            }
        }
        self.hash_set(&mut h, Value::Int(i), v);
    }

    /// Moves keys `len+1, len+2, ...` from the hash part to the array part (after `len` grew
    /// to the end of the array part: a key in the array part's range is never in the hash
    /// part), so that `len` stays a border.
    fn migrate(&self) {
        loop {
            let n = self.len.get() as usize;
            if self.hash_empty() || n < self.arr.get().items.len() {
                return;
            }
            let v = {
                let h = self.hash.borrow();
                match h.find_int(n as i64 + 1) {
                    Some(j) if !matches!(h.val(j), Value::Nil) => {
                        let v = h.val(j);
                        h.set_val(j, Value::Nil);
                        v
                    }
                    _ => return,
                }
            };
            self.push(v);
        }
    }

    /// `t[k] = v` without metamethods; the caller has rejected nil and NaN keys.
    pub fn set(&self, k: Value, v: Value) {
        match k {
            Value::Int(i) => self.set_int(i, v),
            Value::Num(_) => match norm(&k) {
                Some(Value::Int(i)) => self.set_int(i, v),
                _ => self.hash_set(&mut self.hash.borrow_mut(), k, v),
            },
            _ => self.hash_set(&mut self.hash.borrow_mut(), k, v),
        }
    }

    /// `table.insert(t, pos, v)` for `1 <= pos <= #t` on a table whose items are all in the
    /// array part: shifts them up in one pass. False (nothing done) for other tables.
    pub fn insert_at(&self, pos: i64, v: Value) -> bool {
        if self.meta.get().is_some() || !self.hash_empty() {
            return false;
        }
        let n = self.len.get() as usize;
        if pos < 1 || pos as u64 > n as u64 {
            return false;
        }
        self.push(Value::Nil);
        let items = &self.arr.get().items;
        let p = pos as usize - 1;
        for w in items[p..=n].windows(2).rev() {
            w[1].set(w[0].get());
        }
        items[p].set(v);
        true
    }

    /// `table.remove(t, pos)` for `1 <= pos <= #t == len` without a metatable: shifts the
    /// items down in one pass and returns the removed one; None (nothing done) otherwise.
    pub fn remove_at(&self, pos: i64) -> Option<Value> {
        let n = self.len.get() as usize;
        if self.meta.get().is_some() || n == 0 {
            return None;
        }
        if pos < 1 || pos as u64 > n as u64 {
            return None;
        }
        let items = &self.arr.get().items;
        let p = pos as usize - 1;
        let r = items[p].get();
        // Pairs of neighbours: no bounds check per item (deltablue spends 7% of its
        // instructions here).
        for w in items[p..n].windows(2) {
            w[0].set(w[1].get());
        }
        self.pop();
        // Keep the border at the end, as setting the last item to nil does.
        self.trim();
        Some(r)
    }

    /// `#t`: a border.
    pub fn len(&self) -> i64 {
        let n = self.len.get() as usize;
        if n > 0 || self.hash_empty() {
            return n as i64;
        }
        // Only a hash part: probe upwards, as Lua's unbound search does.
        let h = self.hash.borrow();
        let mut i: i64 = 0;
        while !matches!(h.get(&Value::Int(i + 1)), Value::Nil) {
            i += 1;
        }
        i
    }

    /// True if the table has no items.
    pub fn is_empty(&self) -> bool {
        let h = self.hash.borrow();
        self.len.get() == 0 && (0..h.len()).all(|j| matches!(h.val(j), Value::Nil))
    }

    /// The array items in use, copied out.
    pub fn array_items(&self) -> Vec<Value> {
        let n = self.len.get() as usize;
        self.arr.get().items[..n].iter().map(Cell::get).collect()
    }

    /// The key after `k` in traversal order (`next`): `Ok(None)` at the end, `Err` if `k` is
    /// not a key of the table.
    #[allow(clippy::result_unit_err)]
    pub fn next(&self, k: &Value) -> Result<Option<(Value, Value)>, ()> {
        Ok(match self.next_pos(k)? {
            None => None,
            Some(NextPos::InArray(j)) => {
                Some((Value::Int(j as i64 + 1), self.arr.get().items[j].get()))
            }
            Some(NextPos::InHash(j)) => {
                let h = self.hash.borrow();
                Some((h.key(j), h.val(j)))
            }
        })
    }

    /// Where the entry after `k` in traversal order is ([`Table::next`], which reads it
    /// there): `Ok(None)` at the end, `Err` if `k` is not a key of the table. The JIT's `next`
    /// reads the key and the value itself (the array part's item, or the hash part's entry
    /// in `hpart`).
    #[allow(clippy::result_unit_err)]
    pub fn next_pos(&self, k: &Value) -> Result<Option<NextPos>, ()> {
        let n = self.len.get() as usize;
        let part = self.arr.get();
        let h = self.hash.borrow();
        // Where the walk goes on: an index of the array part (then the whole hash part), or
        // an entry of the hash part.
        let (from, start_hash) = match norm(k).unwrap_or(*k) {
            Value::Nil => (0, 0),
            // A key in the array part's range is the array part's, also past `len` (an item
            // set to nil during the traversal moved `len` down).
            Value::Int(i) if i >= 1 && (i as u64) <= part.items.len() as u64 => (i as usize, 0),
            key => match h.find(&key) {
                Some(j) => (n, j + 1),
                None => return Err(()),
            },
        };
        for j in from..n {
            if !matches!(part.items[j].get(), Value::Nil) {
                return Ok(Some(NextPos::InArray(j)));
            }
        }
        for j in start_hash.min(h.len())..h.len() {
            if !matches!(h.val(j), Value::Nil) {
                return Ok(Some(NextPos::InHash(j)));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A dropped small array part leaves its buffer in the pool, and the next part of its
    /// length takes it back with every item nil; a part of another length does not.
    #[test]
    fn dropped_part_buffers_are_reused_as_nil_items() {
        let part = ArrayPart {
            items: nil_items(3),
        };
        part.items[0].set(Value::Int(7));
        part.items[2].set(Value::Boolean(true));
        let buf = part.items.as_ptr();
        drop(part);
        let other = nil_items(4);
        assert_ne!(other.as_ptr(), buf);
        let again = nil_items(3);
        assert_eq!(again.as_ptr(), buf);
        assert_eq!(again.len(), 3);
        assert!(again.iter().all(|v| matches!(v.get(), Value::Nil)));
        // Taken out: the next buffer of that length is a new one.
        let fresh = nil_items(3);
        assert_ne!(fresh.as_ptr(), buf);
    }

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// The representation's invariants: `len` within the array part, its last item not nil,
    /// the slots after it nil, no integer key of the array part's range holding a value in
    /// the hash part, and `nhash` / `hpart` mirroring the hash part.
    fn check_invariants(t: &Table) {
        let n = t.len.get() as usize;
        let items = &t.arr.get().items;
        assert!(n <= items.len());
        if n > 0 {
            assert!(!matches!(items[n - 1].get(), Value::Nil));
        }
        assert!(items[n..].iter().all(|c| matches!(c.get(), Value::Nil)));
        let h = t.hash.borrow();
        assert_eq!(t.nhash.get(), h.n);
        assert!(Gc::ptr_eq(t.hpart.get(), h.part));
        for j in 0..h.len() {
            if let (Value::Int(k), false) = (h.key(j), matches!(h.val(j), Value::Nil)) {
                assert!(
                    k < 1 || k as u64 > items.len() as u64,
                    "key {k} in the hash part"
                );
            }
        }
    }

    /// Every integer key of `1..=n` that holds a value is in the array part.
    fn all_in_array(t: &Table, n: i64) -> bool {
        (1..=n).all(|i| i <= t.len.get() as i64) && t.hash.borrow().int_keys == 0
    }

    /// `#t` is a border: `t[#t]` holds a value (or `#t` is 0) and `t[#t + 1]` is nil.
    fn check_border(t: &Table) {
        let b = t.len();
        assert!(b == 0 || !matches!(t.get_int(b), Value::Nil), "#t = {b}");
        assert!(matches!(t.get_int(b + 1), Value::Nil), "#t = {b}");
    }

    /// `next` from nil visits the keys of `model` once each, with their values.
    fn check_next(t: &Table, model: &BTreeMap<i64, i64>) {
        let mut seen = BTreeMap::new();
        let mut k = Value::Nil;
        while let Some((key, v)) = t.next(&k).unwrap() {
            let (Value::Int(ki), Value::Int(vi)) = (key, v) else {
                panic!("unexpected entry");
            };
            assert!(seen.insert(ki, vi).is_none(), "key {ki} twice");
            k = key;
        }
        assert_eq!(&seen, model);
    }

    fn fill(keys: &[i64]) -> Table {
        let t = Table::default();
        for &k in keys {
            t.set(Value::Int(k), Value::Int(10 * k));
            check_invariants(&t);
        }
        t
    }

    #[test]
    fn keys_in_reverse_order_end_in_the_array_part() {
        let keys: Vec<i64> = (1..=100).rev().collect();
        let t = fill(&keys);
        assert!(all_in_array(&t, 100));
        assert_eq!(t.len(), 100);
        let model = keys.iter().map(|&k| (k, 10 * k)).collect();
        check_next(&t, &model);
    }

    #[test]
    fn keys_in_random_order_end_in_the_array_part() {
        let mut rng = Rng(0x9E37_79B9);
        let mut keys: Vec<i64> = (1..=1000).collect();
        for j in (1..keys.len()).rev() {
            keys.swap(j, rng.below(j as u64 + 1) as usize);
        }
        let t = fill(&keys);
        assert!(all_in_array(&t, 1000));
        assert_eq!(t.len(), 1000);
        for k in 1..=1000 {
            assert!(matches!(t.get_int(k), Value::Int(v) if v == 10 * k));
        }
    }

    /// Queens' diagonals: keys 2..=24 and never 1 still make an array part, with a hole.
    #[test]
    fn keys_without_the_first_end_in_the_array_part() {
        let t = fill(&[
            13, 2, 24, 7, 5, 19, 3, 11, 22, 9, 17, 4, 6, 8, 10, 12, 14, 15, 16,
        ]);
        for k in [18, 20, 21, 23] {
            t.set(Value::Int(k), Value::Int(10 * k));
            check_invariants(&t);
        }
        assert!(all_in_array(&t, 24));
        assert!(matches!(t.get_int(1), Value::Nil));
        check_border(&t);
    }

    /// Sparse keys stay in the hash part.
    #[test]
    fn sparse_keys_stay_in_the_hash_part() {
        let keys: Vec<i64> = (1..=20).map(|k| k * k * 7).collect();
        let t = fill(&keys);
        assert_eq!(t.arr_len(), 0);
        assert_eq!(t.hash.borrow().int_keys, 20);
    }

    /// Items set to nil while `next` walks the table (the clearing loop of Lua's manual).
    #[test]
    fn clearing_while_traversing() {
        let t = fill(&[1, 2, 3, 4, 5, 100]);
        let mut k = Value::Nil;
        while let Some((key, _)) = t.next(&k).unwrap() {
            t.set_int(
                match key {
                    Value::Int(i) => i,
                    _ => unreachable!(),
                },
                Value::Nil,
            );
            k = key;
        }
        assert!(t.is_empty());
    }

    /// A read site that sees tables of two layouts (a key at two positions) finds the key
    /// with no search once it has seen both: its cache remembers two positions.
    #[test]
    fn an_inline_cache_remembers_two_layouts() {
        let (a, b, k) = (
            Value::Str(crate::value::intern(b"a")),
            Value::Str(crate::value::intern(b"b")),
            Value::Str(crate::value::intern(b"k")),
        );
        let t1 = Table::default();
        t1.set(k, Value::Int(1));
        let t2 = Table::default();
        t2.set(a, Value::Int(0));
        t2.set(b, Value::Int(0));
        t2.set(k, Value::Int(2));
        let ic = Cell::new(0);
        SEARCHES.with(|c| c.set(0));
        let mut sum = 0;
        for _ in 0..100 {
            for t in [&t1, &t2] {
                if let Value::Int(i) = t.get_str_ic(&k, &ic) {
                    sum += i;
                }
            }
        }
        assert_eq!(sum, 300);
        assert_eq!(SEARCHES.with(|c| c.get()), 1);
    }

    /// The work (items and entries visited or copied, rehashes) counted while `f` runs.
    fn work_of(f: impl FnOnce()) -> (u64, u64) {
        WORK.with(|w| w.set((0, 0)));
        f();
        WORK.with(|w| w.get())
    }

    /// Filling a table in the patterns that made the rehash super-linear, or could: the work
    /// of rehashes, array resizes, compactions and hash growth stays a few items per key (it
    /// was 23 per key for odd then even keys, n = 2^17, when every bigger array part walked
    /// and compacted the whole hash part), and rehashes are O(log n).
    #[test]
    fn filling_patterns_cost_amortized_constant_work_per_key() {
        let n: i64 = 1 << 17;
        let mut rng = Rng(0x5EED);
        let mut random: Vec<i64> = (1..=n).collect();
        for j in (1..random.len()).rev() {
            random.swap(j, rng.below(j as u64 + 1) as usize);
        }
        let odd_even: Vec<i64> = (1..=n).step_by(2).chain((2..=n).step_by(2)).collect();
        let patterns: Vec<(&str, Vec<i64>)> = vec![
            ("odd then even", odd_even),
            ("top down", (1..=n).rev().collect()),
            ("random", random),
            ("multiples of 3", (1..=n).map(|k| 3 * k).collect()),
            ("multiples of 100", (1..=n).map(|k| 100 * k).collect()),
            ("in order", (1..=n).collect()),
        ];
        for (name, keys) in patterns {
            let t = Table::default();
            let (work, rehashes) = work_of(|| {
                for &k in &keys {
                    t.set_int(k, Value::Int(k));
                }
            });
            let per_key = work as f64 / keys.len() as f64;
            eprintln!("{name}: {per_key:.2} items per key, {rehashes} rehashes");
            assert!(per_key < 6.0, "{name}: {per_key:.2} items of work per key");
            assert!(rehashes <= 40, "{name}: {rehashes} rehashes");
            check_invariants(&t);
            for &k in &keys[..100] {
                assert!(matches!(t.get_int(k), Value::Int(v) if v == k));
            }
        }
        // Removing and adding back every other key, a big array part with a small hash part
        // of far keys, and string keys beside integer keys.
        let t = Table::default();
        for k in 1..=n {
            t.set_int(k, Value::Int(k));
        }
        let (work, rehashes) = work_of(|| {
            for k in (1..=n).step_by(2) {
                t.set_int(k, Value::Nil);
            }
            for k in (1..=n).step_by(2) {
                t.set_int(k, Value::Int(k));
            }
            for k in 0..1000 {
                t.set_int(4 * n + 7 * k, Value::Int(k));
            }
            for k in 0..n {
                t.set(Value::str(&format!("k{k}")), Value::Int(k));
            }
        });
        let per_key = work as f64 / (2 * n) as f64;
        eprintln!("mixed: {per_key:.2} items per key, {rehashes} rehashes");
        assert!(per_key < 6.0, "mixed: {per_key:.2} items of work per key");
        check_invariants(&t);
        assert_eq!(t.len(), n);
    }

    /// A queue (`q[tail] = v`, `q[head] = nil`) keeps an array part of the size of its
    /// window, not of every key it used: a full part that is not half used makes way for a
    /// smaller one (the items to the hash part), at a cost of a few items per key.
    #[test]
    fn a_queue_keeps_a_small_array_part() {
        let n: i64 = 1 << 17;
        let window = 1000;
        let t = Table::default();
        let mut model = BTreeMap::new();
        let (work, rehashes) = work_of(|| {
            for k in 1..=n {
                t.set_int(k, Value::Int(k));
                model.insert(k, k);
                if k > window {
                    t.set_int(k - window, Value::Nil);
                    model.remove(&(k - window));
                }
                if k % 4099 == 0 {
                    check_invariants(&t);
                    check_border(&t);
                }
            }
        });
        let per_key = work as f64 / n as f64;
        eprintln!("queue: {per_key:.2} items per key, {rehashes} rehashes");
        // About 7: the hash part fills once per `window` keys, and its rehash, compaction
        // and index rebuild visit its entries (about `2 * window`) each time.
        assert!(per_key < 10.0, "queue: {per_key:.2} items of work per key");
        assert!(t.arr.get().items.len() <= 4 * window as usize);
        assert!(t.hash.borrow().part.items.len() <= 16 * window as usize);
        check_invariants(&t);
        check_border(&t);
        check_next(&t, &model);
    }

    /// Random sets and removals against a `BTreeMap`: values, borders, traversals and the
    /// representation's invariants after every step.
    #[test]
    fn random_operations_match_a_map() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let t = Table::default();
            let mut model = BTreeMap::new();
            let span = [8, 40, 300][seed as usize % 3];
            for step in 0..600 {
                let k = rng.below(span + 6) as i64 - 3;
                if rng.below(4) == 0 {
                    t.set_int(k, Value::Nil);
                    model.remove(&k);
                } else {
                    let v = step as i64;
                    t.set_int(k, Value::Int(v));
                    model.insert(k, v);
                }
                check_invariants(&t);
                if step % 37 == 0 {
                    for k in -3..span as i64 + 3 {
                        let want = model.get(&k).copied();
                        match t.get_int(k) {
                            Value::Int(v) => assert_eq!(Some(v), want, "key {k}"),
                            Value::Nil => assert_eq!(None, want, "key {k}"),
                            _ => unreachable!(),
                        }
                    }
                    check_border(&t);
                    check_next(&t, &model);
                }
            }
        }
    }
}
