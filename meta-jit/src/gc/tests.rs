//! Unit tests of the collector's typed objects that need the crate's own dependencies
//! (`hashbrown`'s map) or its internals; the end-to-end ones are in `tests/tests/gc_*.rs`.

use std::cell::{Cell, RefCell};

use super::{collect, stats, Gc, Trace, Tracer};

thread_local! {
    static DROPS: Cell<usize> = const { Cell::new(0) };
}

struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        DROPS.with(|d| d.set(d.get() + 1));
    }
}

// SAFETY: holds no `Gc`; its `Drop` reads none.
unsafe impl Trace for Counted {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

struct Item {
    v: i64,
    _c: Counted,
}

// SAFETY: holds no `Gc`.
unsafe impl Trace for Item {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

/// An entry's items.
type Items = (Gc<Item>, Option<Gc<Item>>);

/// A map whose values are `Gc`s.
struct Map {
    m: RefCell<hashbrown::HashMap<i64, Items>>,
}

// SAFETY: reports the map's `Gc`s through its `Trace`.
unsafe impl Trace for Map {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        self.m.trace(t)
    }
}

fn collect_from(root: Gc<Map>) {
    let mut t = Tracer::new();
    t.root(&root);
    // SAFETY: only `root` and what it reaches are used afterwards.
    unsafe { collect(&t) };
}

// Which types are inline (plain objects when they need no drop), checked at compile time.
const _: () = {
    // Plain (no header): what compiled code allocates.
    assert!(<Option<Gc<Item>> as Trace>::INLINE);
    assert!(<(i64, Gc<Item>, [Option<Gc<Item>>; 3]) as Trace>::INLINE);
    assert!(<Cell<Option<Gc<Item>>> as Trace>::INLINE);
    // Typed: the `Gc`s are out of line, or a `RefCell` the word scan cannot read safely.
    assert!(!<Vec<Gc<Item>> as Trace>::INLINE);
    assert!(!<Box<[Gc<Item>]> as Trace>::INLINE);
    assert!(!<hashbrown::HashMap<i64, Gc<Item>> as Trace>::INLINE);
    assert!(!<std::collections::HashMap<Gc<Item>, i64> as Trace>::INLINE);
    assert!(!<RefCell<Option<Gc<Item>>> as Trace>::INLINE);
    // Without `Gc`s, containers are inline (a `Vec<u8>` field does not make a type typed,
    // though its drop glue does).
    assert!(<Vec<u8> as Trace>::INLINE && <RefCell<Vec<u8>> as Trace>::NO_GC);
    assert!(<hashbrown::HashMap<i64, String> as Trace>::NO_GC);
};

/// A `hashbrown` map in a typed object keeps its keys' and values' objects alive, through
/// many collections and rehashes; replaced values are freed and dropped.
#[test]
fn a_hashbrown_map_keeps_its_values() {
    // SAFETY: nothing of earlier tests on this thread is used.
    unsafe { collect(&Tracer::new()) };
    let root = Gc::new(Map {
        m: RefCell::new(hashbrown::HashMap::new()),
    });
    let d0 = DROPS.with(|d| d.get());
    let item = |v| Gc::new(Item { v, _c: Counted });
    for round in 0..20i64 {
        for k in 0..200 {
            let extra = (k % 2 == 0).then(|| item(-k));
            root.m
                .borrow_mut()
                .insert(k, (item(k * 1000 + round), extra));
        }
        collect_from(root);
        let m = root.m.borrow();
        assert_eq!(m.len(), 200);
        for (k, (a, b)) in m.iter() {
            assert_eq!(a.v, k * 1000 + round);
            assert_eq!(b.map(|b| b.v), (k % 2 == 0).then_some(-k));
        }
        // The map object and its 300 items.
        assert_eq!(stats().live_objects, 301, "round {round}");
    }
    // Every replaced item was dropped, once: 19 rounds of 300.
    assert_eq!(DROPS.with(|d| d.get()) - d0, 19 * 300);
}

/// Out-of-line memory reported with `note_external_bytes` asks for a collection like the
/// heap's own allocations do, and only while collection is enabled.
#[test]
fn external_bytes_count_toward_a_collection() {
    super::set_collection_threshold(1 << 20);
    // Collection off: reported bytes ask for nothing.
    super::note_external_bytes(4 << 20);
    assert!(!super::collection_wanted());
    // SAFETY: this test allocates no object and collects nothing.
    unsafe { super::enable_collection() };
    let mut asked_at = None;
    for k in 1..=64 {
        super::note_external_bytes(64 << 10);
        if super::collection_wanted() {
            asked_at = Some(k);
            break;
        }
    }
    super::disable_collection();
    super::set_collection_threshold(0);
    // 1 MiB (the threshold) in 64 KiB steps, give or take what the heap handed out before.
    let k = asked_at.expect("no collection asked for after 4 MiB of external bytes");
    assert!(k <= 16, "asked only after {k} steps");
}
