//! Typed objects of the collector (objects that keep `Gc`s out of line, in a `Vec`, a
//! `Box<[T]>`, a `HashMap`, a `RefCell`, or that need `Drop`), large objects and the release
//! of empty chunks, through the explicit `gc::collect`: what the roots reach is never freed,
//! what they do not is dropped exactly once, a mutably borrowed `RefCell` abandons the
//! collection, and memory goes down after a peak.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use meta_jit::gc::{self, Gc, Tracer};
use meta_jit::hints::Trace;

thread_local! {
    /// The ids of the `Counted` values dropped, in order.
    static DROPPED: RefCell<Vec<i64>> = const { RefCell::new(Vec::new()) };
}

/// Records its id when dropped.
pub struct Counted(i64);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.with(|d| d.borrow_mut().push(self.0));
    }
}

// SAFETY: holds no `Gc`; its `Drop` reads none.
unsafe impl Trace for Counted {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

fn dropped() -> Vec<i64> {
    DROPPED.with(|d| d.borrow().clone())
}

/// A typed object: its kids are in a `Vec`.
#[derive(Trace)]
pub struct Tree {
    pub id: i64,
    pub kids: Vec<Gc<Tree>>,
    pub big: Option<Gc<BigTree>>,
    pub counted: Counted,
}

/// A large typed object (over 256 bytes).
#[derive(Trace)]
pub struct BigTree {
    pub id: i64,
    pub pad: [i64; 40],
    pub kids: Box<[Gc<Tree>]>,
    pub counted: Counted,
}

/// Collects with `roots` as the only roots.
fn collect_with(roots: &Tracer) {
    // SAFETY: each test uses only what its roots reach after a collection.
    unsafe { gc::collect(roots) };
}

/// Objects 0..400 (every 10th one a large `BigTree`), each the kid of an earlier one; some
/// roots; collecting drops exactly the unreachable ones, once, and keeps the rest intact;
/// collecting again drops nothing more; dropping the roots drops the rest, once.
#[test]
fn drop_runs_exactly_once_per_freed_object() {
    collect_with(&Tracer::new());
    DROPPED.with(|d| d.borrow_mut().clear());
    let mut trees: Vec<Gc<Tree>> = Vec::new();
    let mut bigs: Vec<Gc<BigTree>> = Vec::new();
    // parent[i]: the object whose kids hold i (or None: a top object).
    let mut parent: Vec<Option<usize>> = Vec::new();
    for i in 0..400i64 {
        let p = (i % 7 != 0).then(|| ((i * 31) % (i.max(1))) as usize);
        parent.push(p);
        if i % 10 == 9 {
            let b = Gc::new(BigTree {
                id: i,
                pad: [i; 40],
                kids: vec![trees[(i - 1) as usize]].into_boxed_slice(),
                counted: Counted(i),
            });
            bigs.push(b);
            // Stand-in so that `trees[i]` exists: a tree that holds the big one.
            trees.push(Gc::new(Tree {
                id: i,
                kids: Vec::new(),
                big: Some(b),
                counted: Counted(1000 + i),
            }));
        } else {
            trees.push(Gc::new(Tree {
                id: i,
                kids: Vec::new(),
                big: None,
                counted: Counted(i),
            }));
        }
    }
    // Link kids into their parents' `Vec`s through a fresh tree per parent (the Vec of a
    // `Gc` object cannot change): rebuild each parent with its kids.
    let mut kids: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, p) in parent.iter().enumerate() {
        if let Some(p) = p {
            if *p != i {
                kids.entry(*p).or_default().push(i);
            }
        }
    }
    let mut holders: Vec<(Gc<Tree>, Vec<usize>)> = Vec::new();
    for (&p, ks) in &kids {
        let h = Gc::new(Tree {
            id: 10_000 + p as i64,
            kids: ks.iter().map(|&k| trees[k]).collect(),
            big: None,
            counted: Counted(10_000 + p as i64),
        });
        holders.push((h, ks.clone()));
    }
    // Roots: every third holder.
    let roots: Vec<(Gc<Tree>, Vec<usize>)> = holders.iter().step_by(3).cloned().collect();
    let mut t = Tracer::new();
    for (h, _) in &roots {
        t.root(h);
    }
    // The model: the counted ids the roots reach.
    let mut live: HashSet<i64> = HashSet::new();
    for (h, ks) in &roots {
        live.insert(h.id);
        for &k in ks {
            let k = k as i64;
            if k % 10 == 9 {
                live.insert(1000 + k);
                live.insert(k); // the big one
                live.insert(k - 1); // its kid
            } else {
                live.insert(k);
            }
        }
    }
    let all: HashSet<i64> = (0..400)
        .flat_map(|i| {
            if i % 10 == 9 {
                vec![i, 1000 + i]
            } else {
                vec![i]
            }
        })
        .chain(holders.iter().map(|(h, _)| h.id))
        .collect();
    collect_with(&t);
    let d = dropped();
    let set: HashSet<i64> = d.iter().copied().collect();
    assert_eq!(set.len(), d.len(), "an object dropped twice: {d:?}");
    let want: HashSet<i64> = all.difference(&live).copied().collect();
    assert_eq!(set, want, "dropped objects against the unreachable ones");
    // The live ones are intact.
    for (h, ks) in &roots {
        let got: Vec<i64> = h.kids.iter().map(|k| k.id).collect();
        assert_eq!(got, ks.iter().map(|&k| k as i64).collect::<Vec<_>>());
        for k in &h.kids {
            if let Some(b) = k.big {
                assert_eq!((b.id, b.pad, b.kids[0].id), (k.id, [k.id; 40], k.id - 1));
                assert_eq!(b.counted.0, k.id);
            }
        }
    }
    // Garbage over the freed cells, then collect again: no old object dropped again.
    for i in 0..2000 {
        let _ = Gc::new(Tree {
            id: -i,
            kids: vec![],
            big: None,
            counted: Counted(-1 - i),
        });
    }
    collect_with(&t);
    let d = dropped();
    let old: Vec<i64> = d.iter().copied().filter(|&x| x >= 0).collect();
    assert_eq!(old.len(), want.len(), "an old object dropped again");
    assert_eq!(d.iter().filter(|&&x| x < 0).count(), 2000);
    // Without roots, the rest is dropped, once.
    drop(t);
    collect_with(&Tracer::new());
    let d = dropped();
    let set: HashSet<i64> = d.iter().copied().collect();
    assert_eq!(set.len(), d.len(), "an object dropped twice");
    assert_eq!(set, all.union(&(-2000..0).collect()).copied().collect());
    assert_eq!(gc::stats().live_objects, 0);
    assert_eq!(gc::stats().large_bytes, 0, "large objects freed");
}

/// A value of a small dynamic language, as an interpreter would write it.
#[derive(Clone, Copy, Trace)]
pub enum Val {
    Nil,
    Int(i64),
    Text(Gc<Text>),
    Tab(Gc<Table>),
}

/// An immutable string: its bytes out of line.
#[derive(Trace)]
pub struct Text {
    pub bytes: Box<[u8]>,
}

/// A table: an array part and a hash part, both mutable, both out of line.
#[derive(Trace)]
pub struct Table {
    pub arr: RefCell<Vec<Val>>,
    pub hash: RefCell<HashMap<i64, Val>>,
    pub meta: Cell<Option<Gc<Table>>>,
}

fn text(s: &str) -> Val {
    Val::Text(Gc::new(Text {
        bytes: s.as_bytes().into(),
    }))
}

fn table() -> Gc<Table> {
    Gc::new(Table {
        arr: RefCell::new(Vec::new()),
        hash: RefCell::new(HashMap::new()),
        meta: Cell::new(None),
    })
}

fn as_text(v: Val) -> String {
    match v {
        Val::Text(t) => String::from_utf8(t.bytes.to_vec()).unwrap(),
        _ => panic!("not a text"),
    }
}

/// Checks the table `root` against round `round`'s contents (see the test).
fn check(root: Gc<Table>, round: usize) {
    let arr = root.arr.borrow();
    assert_eq!(arr.len(), 64);
    for (i, v) in arr.iter().enumerate() {
        match (i % 3, *v) {
            (0, v) => assert_eq!(as_text(v), format!("a{i}.{}", round - round % 4)),
            (1, Val::Int(x)) => assert_eq!(x, i as i64 * 7),
            (2, Val::Tab(t)) => {
                let h = t.hash.borrow();
                assert_eq!(h.len(), 3);
                assert_eq!(as_text(h[&0]), format!("inner{i}"));
                assert!(matches!(h[&1], Val::Nil));
                match h[&2] {
                    Val::Tab(back) => assert!(Gc::ptr_eq(back, root)),
                    _ => panic!("no back edge"),
                }
                assert!(Gc::ptr_eq(t.meta.get().unwrap(), root));
            }
            (k, _) => panic!("slot {i} ({k}) holds the wrong kind"),
        }
    }
    let h = root.hash.borrow();
    assert_eq!(h.len(), 100);
    for k in 0..100i64 {
        assert_eq!(as_text(h[&k]), format!("h{k}.{round}"));
    }
}

/// A table whose array part holds texts, numbers and tables (which point back to it), and
/// whose hash part holds texts that change every round: after 40 rounds of garbage (tables,
/// texts, replaced entries) and a collection each, everything the root reaches is intact and
/// the collector kept exactly the reachable objects.
#[test]
fn objects_reachable_through_vecs_and_hash_maps_are_never_freed() {
    collect_with(&Tracer::new());
    let root = table();
    {
        let mut arr = root.arr.borrow_mut();
        for i in 0..64 {
            arr.push(match i % 3 {
                0 => text(&format!("a{i}.0")),
                1 => Val::Int(i as i64 * 7),
                _ => {
                    let t = table();
                    let mut h = t.hash.borrow_mut();
                    h.insert(0, text(&format!("inner{i}")));
                    h.insert(1, Val::Nil);
                    h.insert(2, Val::Tab(root));
                    drop(h);
                    t.meta.set(Some(root));
                    Val::Tab(t)
                }
            });
        }
    }
    for round in 0..40 {
        {
            let mut h = root.hash.borrow_mut();
            for k in 0..100i64 {
                h.insert(k, text(&format!("h{k}.{round}")));
            }
        }
        if round % 4 == 0 {
            let mut arr = root.arr.borrow_mut();
            for i in (0..64).step_by(3) {
                arr[i] = text(&format!("a{i}.{round}"));
            }
        }
        // Garbage: tables full of texts, nothing reaches them.
        for g in 0..50 {
            let t = table();
            t.arr
                .borrow_mut()
                .extend((0..20).map(|k| text(&format!("g{g}.{k}"))));
            t.hash.borrow_mut().insert(g, Val::Tab(root));
        }
        let mut t = Tracer::new();
        t.root(&root);
        collect_with(&t);
        check(root, round);
        // root + 22 texts + 21 inner tables (+ 21 inner texts) + 100 hash texts
        assert_eq!(
            gc::stats().live_objects,
            1 + 22 + 21 * 2 + 100,
            "round {round}"
        );
    }
    assert_eq!(gc::stats().abandoned, 0);
}

/// A collection while a `RefCell` holding `Gc`s is mutably borrowed cannot see its contents:
/// it is abandoned and frees nothing; the next one, after the borrow ends, frees the garbage.
#[test]
fn a_mutably_borrowed_refcell_abandons_the_collection() {
    collect_with(&Tracer::new());
    let root = table();
    root.arr.borrow_mut().push(text("kept"));
    for _ in 0..100 {
        let _ = text("garbage");
    }
    let s0 = gc::stats();
    let mut t = Tracer::new();
    t.root(&root);
    {
        let mut arr = root.arr.borrow_mut();
        collect_with(&t);
        arr.push(text("pushed during the borrow"));
    }
    let s1 = gc::stats();
    assert_eq!(s1.abandoned, s0.abandoned + 1);
    assert_eq!(
        s1.dropped, s0.dropped,
        "nothing freed while the cell was borrowed"
    );
    assert_eq!(as_text(root.arr.borrow()[0]), "kept");
    // The same with the borrow inside the heap, not at the root.
    let outer = table();
    outer.arr.borrow_mut().push(Val::Tab(root));
    let mut t = Tracer::new();
    t.root(&outer);
    {
        let _borrow = root.hash.borrow_mut();
        collect_with(&t);
    }
    assert_eq!(gc::stats().abandoned, s0.abandoned + 2);
    assert_eq!(gc::stats().dropped, s0.dropped);
    collect_with(&t);
    let s2 = gc::stats();
    assert_eq!(s2.abandoned, s0.abandoned + 2);
    assert!(s2.dropped >= s0.dropped + 100, "{s2:?}");
    assert_eq!(as_text(root.arr.borrow()[0]), "kept");
    assert_eq!(as_text(root.arr.borrow()[1]), "pushed during the borrow");
    assert_eq!(s2.live_objects, 4);
}

/// A plain object over 256 bytes (no header: scanned word by word).
#[derive(Trace)]
pub struct Wide {
    pub words: [i64; 60],
    pub to: Option<Gc<Wide>>,
}

/// Large objects, plain and typed, are freed when unreachable; the `Gc`s inside the reachable
/// ones keep their targets.
#[test]
fn large_objects_are_freed_when_unreachable() {
    collect_with(&Tracer::new());
    let base = gc::stats().large_bytes;
    assert_eq!(base, 0);
    let mut keep: Option<Gc<Wide>> = None;
    for i in 0..1000 {
        let w = Gc::new(Wide {
            words: [i; 60],
            to: if i % 100 == 0 { keep } else { None },
        });
        if i % 100 == 0 {
            keep = Some(w);
        }
        let _garbage = Gc::new(BigTree {
            id: i,
            pad: [0; 40],
            kids: Box::new([]),
            counted: Counted(100_000 + i),
        });
    }
    assert!(
        gc::stats().large_bytes >= 1000 * (488 + 344),
        "{:?}",
        gc::stats()
    );
    let mut t = Tracer::new();
    t.root(&keep);
    collect_with(&t);
    let s = gc::stats();
    assert_eq!(s.live_objects, 10);
    assert!(s.large_bytes < 10 * 600, "{s:?}");
    let mut at = keep;
    let mut want = 900;
    while let Some(w) = at {
        assert_eq!(w.words, [want; 60]);
        at = w.to;
        want -= 100;
    }
    assert_eq!(want, -100);
    let big_drops = dropped().iter().filter(|&&x| x >= 100_000).count();
    assert_eq!(big_drops, 1000);
}

/// A chain of small objects with a pointer inside.
#[derive(Trace)]
pub struct Link {
    pub v: i64,
    pub next: Option<Gc<Link>>,
}

/// After a peak of 64 MB of live objects, a collection that finds them unreachable returns
/// the empty chunks to the system (beyond what the next cycle needs), and the chunks it
/// spares serve another size class.
#[test]
fn empty_chunks_are_released_after_a_peak() {
    collect_with(&Tracer::new());
    let mut head: Option<Gc<Link>> = None;
    for v in 0..4_000_000 {
        head = Some(Gc::new(Link { v, next: head }));
    }
    let mut t = Tracer::new();
    t.root(&head);
    collect_with(&t);
    let peak = gc::stats();
    assert!(peak.chunk_bytes >= 60 << 20, "{peak:?}");
    assert_eq!(peak.live_objects, 4_000_000);
    drop(t);
    head = None;
    let _ = head;
    collect_with(&Tracer::new());
    let after = gc::stats();
    assert!(
        after.released_chunks >= peak.released_chunks + 200,
        "{after:?}"
    );
    // What is left: the spares for the next 4 MiB of allocation.
    assert!(after.chunk_bytes <= 6 << 20, "{after:?}");
    // Another size class (48-byte typed objects) takes the spares before new chunks.
    let spare = after.chunk_bytes;
    let mut t = Tracer::new();
    let keep: Vec<Gc<Tree>> = (0..10_000)
        .map(|i| {
            Gc::new(Tree {
                id: i,
                kids: vec![],
                big: None,
                counted: Counted(200_000 + i),
            })
        })
        .collect();
    t.root(&keep);
    assert!(
        gc::stats().chunk_bytes <= spare.max(1 << 20),
        "{:?}",
        gc::stats()
    );
    collect_with(&t);
    assert!(keep.iter().enumerate().all(|(i, g)| g.id == i as i64));
}
