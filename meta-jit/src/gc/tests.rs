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

/// A typed node: its children are reachable only through its `Trace` (a `Vec`'s buffer).
struct GraphCell {
    v: i64,
    kids: RefCell<Vec<Gc<GraphCell>>>,
    leaf: Option<Gc<WideLeaf>>,
    _c: Counted,
}

// SAFETY: reports the children and the leaf; its `Drop` (`Counted`'s) reads no `Gc`.
unsafe impl Trace for GraphCell {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        self.kids.trace(t);
        self.leaf.trace(t);
    }
}

/// A typed object of another size class than `GraphCell`'s (so that a node's children and leaves
/// alternate between chunks).
struct WideLeaf {
    v: [i64; 12],
    _c: Counted,
}

// SAFETY: holds no `Gc`.
unsafe impl Trace for WideLeaf {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

fn node(v: i64, kids: Vec<Gc<GraphCell>>) -> Gc<GraphCell> {
    Gc::new(GraphCell {
        v,
        kids: RefCell::new(kids),
        leaf: (v % 3 == 0).then(|| {
            Gc::new(WideLeaf {
                v: [v; 12],
                _c: Counted,
            })
        }),
        _c: Counted,
    })
}

/// The mark's paths (the prefetch queue between the work list and the scan, the cached chunk
/// look-up, the work list kept from one collection to the next) keep every object a wide and
/// a deep graph of typed objects reaches, whose children are in several chunks and classes,
/// and free each of the others once: a root with 3000 children (many waiting in the queue at
/// once) and a chain of 3000 (one at a time), halved each round.
#[test]
fn wide_and_deep_typed_graphs_survive_and_the_rest_is_dropped_once() {
    // SAFETY: nothing of earlier tests on this thread is used.
    unsafe { collect(&Tracer::new()) };
    let objects = |v: i64| if v % 3 == 0 { 2 } else { 1 };
    let mut chain = node(0, vec![]);
    for v in 1..3000 {
        chain = node(v, vec![chain]);
    }
    let root = node(-1, (0..3000).map(|v| node(10_000 + v, vec![])).collect());
    root.kids.borrow_mut().push(chain);
    let d0 = DROPS.with(|d| d.get());
    let mut freed = 0usize;
    for round in 0..4 {
        let mut t = Tracer::new();
        t.root(&root);
        // SAFETY: only `root` and what it reaches are used afterwards.
        unsafe { collect(&t) };
        assert_eq!(DROPS.with(|d| d.get()) - d0, freed, "round {round}");
        let kids = root.kids.borrow();
        let mut live = 1 + kids.iter().map(|k| objects(k.v)).sum::<usize>();
        for k in kids.iter() {
            assert!(k.v == 2999 || k.v >= 10_000, "round {round}: child {}", k.v);
            assert_eq!(k.leaf.map(|l| l.v), (k.v % 3 == 0).then_some([k.v; 12]));
        }
        // The chain is intact, down to its end.
        let mut n = *kids.last().expect("the chain");
        live -= objects(n.v);
        for v in (0..3000).rev() {
            assert_eq!(n.v, v, "round {round}");
            assert_eq!(n.leaf.map(|l| l.v[11]), (v % 3 == 0).then_some(v));
            live += objects(v);
            let next = n.kids.borrow().first().copied();
            match next {
                Some(next) => n = next,
                None => assert_eq!(v, 0),
            }
        }
        assert_eq!(stats().live_objects, live, "round {round}");
        drop(kids);
        // Unlink every second child of the root (the chain stays, last).
        let mut kids = root.kids.borrow_mut();
        let chain = kids.pop().expect("the chain");
        let (keep, gone): (Vec<_>, Vec<_>) = kids.iter().enumerate().partition(|(i, _)| i % 2 == 0);
        freed += gone.iter().map(|(_, k)| objects(k.v)).sum::<usize>();
        *kids = keep.into_iter().map(|(_, k)| *k).collect();
        kids.push(chain);
    }
    // Without roots, everything goes, each object dropped once.
    let total = 1
        + (0..3000)
            .map(|v| objects(v) + objects(10_000 + v))
            .sum::<usize>();
    // SAFETY: nothing the heap holds is used afterwards.
    unsafe { collect(&Tracer::new()) };
    assert_eq!(DROPS.with(|d| d.get()) - d0, total);
    assert_eq!(stats().live_objects, 0);
}

/// A typed object of 56 bytes whose words are all set, with a drop counter.
struct Filled {
    words: [u64; 6],
    _c: Counted,
}

// SAFETY: holds no `Gc`; its `Drop` (the counter's) reads none.
unsafe impl Trace for Filled {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

/// Typed cells are handed out again without zeroing (`heap`'s "Zeroing"): the objects a
/// collection freed leave their bytes behind, and the new objects in those cells read as
/// written, are dropped exactly once by the next collection, and the cells never used
/// count no drop (their headers are 0).
#[test]
fn typed_cells_are_reused_without_zeroing_and_dropped_once() {
    DROPS.with(|d| d.set(0));
    let n = 2000;
    let old: Vec<usize> = (0..n)
        .map(|i| {
            let g = Gc::new(Filled {
                words: [!0 - i as u64; 6],
                _c: Counted,
            });
            g.as_ptr() as usize
        })
        .collect();
    // SAFETY: no `Gc` is used again: every object becomes garbage.
    unsafe { collect(&Tracer::new()) };
    assert_eq!(DROPS.with(|d| d.get()), n);
    let new: Vec<Gc<Filled>> = (0..n)
        .map(|i| {
            Gc::new(Filled {
                words: [i as u64; 6],
                _c: Counted,
            })
        })
        .collect();
    let reused = new
        .iter()
        .filter(|g| old.contains(&(g.as_ptr() as usize)))
        .count();
    assert!(reused > n / 2, "only {reused} cells were reused");
    for (i, g) in new.iter().enumerate() {
        assert_eq!(g.words, [i as u64; 6]);
    }
    // SAFETY: as above.
    unsafe { collect(&Tracer::new()) };
    assert_eq!(DROPS.with(|d| d.get()), 2 * n);
    // SAFETY: as above; nothing was allocated since, so nothing is dropped.
    unsafe { collect(&Tracer::new()) };
    assert_eq!(DROPS.with(|d| d.get()), 2 * n);
}
