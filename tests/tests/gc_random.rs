//! The collector on random object graphs: build objects of three size classes with random
//! edges (cycles included, through `Cell`s), typed objects that keep their edges in a `Vec` or
//! a `Box<[T]>` and count their drops, and large objects (over 256 bytes, plain and typed);
//! keep a random subset as roots, collect, and check that every object the roots reach is
//! intact, that the collector kept exactly those (`gc::stats().live_objects`), that it dropped
//! exactly the typed objects it freed, once each, and that the cells it freed are handed out
//! again without touching a live object. Each round of a case allocates over the last round's
//! garbage.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use meta_jit::gc::{self, Gc, Tracer};
use meta_jit::hints::{JitLayout, Trace};

thread_local! {
    /// The ids of the typed objects dropped.
    static DROPPED: RefCell<Vec<i64>> = const { RefCell::new(Vec::new()) };
}

/// Records its id when dropped.
#[derive(Debug)]
struct Counted(i64);

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

/// Typed, small: the edges in a `Vec`.
#[derive(Debug, Trace)]
struct Bag {
    id: i64,
    items: Vec<Option<Gc<Node>>>,
    counted: Counted,
}

/// Typed, large: the edges in a `Box<[T]>`.
#[derive(Debug, Trace)]
struct Huge {
    id: i64,
    pad: [i64; 40],
    items: Box<[Option<Gc<Node>>]>,
    counted: Counted,
}

/// Plain, large (328 bytes, no header).
#[derive(Debug, Trace)]
struct Vast {
    id: i64,
    items: [Option<Gc<Node>>; 40],
}
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// 32 bytes.
#[derive(Debug, JitLayout, Trace)]
pub struct Node {
    pub id: i64,
    pub a: Option<Gc<Node>>,
    pub b: Option<Gc<Node>>,
    pub back: Cell<Option<Gc<Node>>>,
}

/// 8 bytes.
#[derive(Debug, Trace)]
struct Leaf {
    id: i64,
}

/// 176 bytes.
#[derive(Debug, Trace)]
struct Wide {
    id: i64,
    items: [Option<Gc<Node>>; 20],
    leaf: Gc<Leaf>,
}

/// One object of the model: its id, its kind and the ids of what it points to.
#[derive(Clone, Debug)]
enum Obj {
    Node(Gc<Node>, Option<usize>, Option<usize>, Option<usize>),
    Leaf(Gc<Leaf>),
    Wide(Gc<Wide>, Vec<Option<usize>>, usize),
    Bag(Gc<Bag>, Vec<Option<usize>>),
    Huge(Gc<Huge>, Vec<Option<usize>>),
    Vast(Gc<Vast>, Vec<Option<usize>>),
    /// Freed by a collection: never named again.
    Dead,
}

/// A round: `n` new objects with edges chosen by `picks`, then a root set chosen by `keep`.
#[derive(Clone, Debug)]
struct Round {
    n: u8,
    picks: Vec<u16>,
    keep: Vec<u16>,
}

impl Arbitrary for Round {
    fn arbitrary(g: &mut Gen) -> Round {
        Round {
            n: u8::arbitrary(g),
            picks: Vec::arbitrary(g),
            keep: Vec::arbitrary(g),
        }
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = Round>> {
        let r = self.clone();
        Box::new(
            (self.n, self.picks.clone(), self.keep.clone())
                .shrink()
                .map(move |(n, picks, keep)| Round { n, picks, keep })
                .filter(move |x| x.n <= r.n),
        )
    }
}

/// The ids reachable from `roots` in the model.
fn reachable(objs: &[Obj], roots: &[usize]) -> HashSet<usize> {
    let mut seen = HashSet::new();
    let mut work: Vec<usize> = roots.to_vec();
    while let Some(i) = work.pop() {
        if !seen.insert(i) {
            continue;
        }
        match &objs[i] {
            Obj::Node(_, a, b, c) => work.extend([a, b, c].into_iter().flatten()),
            Obj::Leaf(_) | Obj::Dead => {}
            Obj::Wide(_, items, leaf) => {
                work.extend(items.iter().flatten());
                work.push(*leaf);
            }
            Obj::Bag(_, items) | Obj::Huge(_, items) | Obj::Vast(_, items) => {
                work.extend(items.iter().flatten())
            }
        }
    }
    seen
}

/// Checks object `i` against the model (its id and the ids of its edges).
fn intact(objs: &[Obj], i: usize) -> Result<(), String> {
    let id_of = |g: Option<Gc<Node>>| g.map(|g| g.id as usize);
    match &objs[i] {
        Obj::Node(g, a, b, c) => {
            let got = (g.id as usize, id_of(g.a), id_of(g.b), id_of(g.back.get()));
            if got != (i, *a, *b, *c) {
                return Err(format!("node {i}: {got:?}, want {:?}", (i, a, b, c)));
            }
        }
        Obj::Leaf(g) => {
            if g.id as usize != i {
                return Err(format!("leaf {i}: id {}", g.id));
            }
        }
        Obj::Dead => return Err(format!("{i} is reachable and dead")),
        Obj::Bag(g, items) => {
            let got: Vec<Option<usize>> = g.items.iter().map(|x| id_of(*x)).collect();
            if g.id as usize != i || &got != items || g.counted.0 != i as i64 {
                return Err(format!("bag {i}: {} {got:?}", g.id));
            }
        }
        Obj::Huge(g, items) => {
            let got: Vec<Option<usize>> = g.items.iter().map(|x| id_of(*x)).collect();
            if g.id as usize != i || &got != items || g.pad != [i as i64; 40] {
                return Err(format!("huge {i}: {} {got:?}", g.id));
            }
        }
        Obj::Vast(g, items) => {
            let got: Vec<Option<usize>> = g.items.iter().map(|x| id_of(*x)).collect();
            if g.id as usize != i || &got != items {
                return Err(format!("vast {i}: {} {got:?}", g.id));
            }
        }
        Obj::Wide(g, items, leaf) => {
            let got: Vec<Option<usize>> = g.items.iter().map(|x| id_of(*x)).collect();
            if g.id as usize != i || &got != items || g.leaf.id as usize != *leaf {
                return Err(format!("wide {i}: {} {got:?} {}", g.id, g.leaf.id));
            }
        }
    }
    Ok(())
}

/// Runs the rounds; `Err` says what went wrong.
fn run(rounds: &[Round]) -> Result<(), String> {
    // Everything of earlier cases on this thread is garbage: no roots.
    // SAFETY: no object of earlier cases is used again.
    unsafe { gc::collect(&Tracer::new()) };
    DROPPED.with(|d| d.borrow_mut().clear());
    // The ids of the typed objects freed so far (each must be dropped once).
    let mut freed_typed: Vec<i64> = Vec::new();
    let mut objs: Vec<Obj> = Vec::new();
    let mut roots: Vec<usize> = Vec::new();
    for r in rounds {
        let mut picks = r.picks.iter().copied().cycle();
        let mut pick = |objs: &[Obj]| -> Option<usize> {
            let p = picks.next()? as usize;
            // Edges go to live (rooted) objects or to objects of this round: never to an
            // object the model knows is garbage (the program cannot reach it either).
            let live: Vec<usize> = (0..objs.len())
                .filter(|&i| matches!(objs[i], Obj::Node(..)) && i >= objs.len().saturating_sub(64))
                .chain(
                    roots
                        .iter()
                        .copied()
                        .filter(|&i| matches!(objs[i], Obj::Node(..))),
                )
                .collect();
            (!p.is_multiple_of(3) && !live.is_empty()).then(|| live[p % live.len()])
        };
        let node_at = |objs: &[Obj], i: Option<usize>| -> Option<Gc<Node>> {
            i.and_then(|i| match &objs[i] {
                Obj::Node(g, ..) => Some(*g),
                _ => None,
            })
        };
        for _ in 0..r.n {
            let i = objs.len();
            let (mut a, mut b) = (pick(&objs), pick(&objs));
            a = a.filter(|&x| node_at(&objs, Some(x)).is_some());
            b = b.filter(|&x| node_at(&objs, Some(x)).is_some());
            let kind = r
                .picks
                .get(i % r.picks.len().max(1))
                .map_or(2, |&p| (p >> 3) % 8);
            if kind == 0 {
                objs.push(Obj::Leaf(Gc::new(Leaf { id: i as i64 })));
            } else if kind == 1 {
                let leaf = Gc::new(Leaf { id: i as i64 + 1 });
                let items: Vec<Option<usize>> =
                    (0..20).map(|k| if k % 2 == 0 { a } else { b }).collect();
                let mut arr = [None; 20];
                for (k, it) in items.iter().enumerate() {
                    arr[k] = node_at(&objs, *it);
                }
                let w = Gc::new(Wide {
                    id: i as i64,
                    items: arr,
                    leaf,
                });
                objs.push(Obj::Wide(w, items, i + 1));
                objs.push(Obj::Leaf(leaf));
            } else if (2..=4).contains(&kind) {
                let n = [3, 12, 40][kind as usize - 2];
                let items: Vec<Option<usize>> = (0..n)
                    .map(|k| [a, b, None][k % 3].filter(|&x| node_at(&objs, Some(x)).is_some()))
                    .collect();
                let gcs: Vec<Option<Gc<Node>>> = items.iter().map(|&x| node_at(&objs, x)).collect();
                let id = i as i64;
                objs.push(match kind {
                    2 => Obj::Bag(
                        Gc::new(Bag {
                            id,
                            items: gcs,
                            counted: Counted(id),
                        }),
                        items,
                    ),
                    3 => Obj::Huge(
                        Gc::new(Huge {
                            id,
                            pad: [id; 40],
                            items: gcs.into_boxed_slice(),
                            counted: Counted(id),
                        }),
                        items,
                    ),
                    _ => {
                        let mut arr = [None; 40];
                        arr.copy_from_slice(&gcs);
                        Obj::Vast(Gc::new(Vast { id, items: arr }), items)
                    }
                });
            } else {
                let g = Gc::new(Node {
                    id: i as i64,
                    a: node_at(&objs, a),
                    b: node_at(&objs, b),
                    back: Cell::new(None),
                });
                objs.push(Obj::Node(g, a, b, None));
                // A back edge from an earlier node to this one: cycles.
                if let Some(e) = pick(&objs) {
                    if let Obj::Node(eg, _, _, c) = &mut objs[e] {
                        eg.back.set(Some(g));
                        *c = Some(i);
                    }
                }
            }
        }
        // The new roots: a random subset of the old roots and the new objects.
        let mut next: Vec<usize> = Vec::new();
        let cands: Vec<usize> = roots
            .iter()
            .copied()
            .chain(
                (objs.len().saturating_sub(64)..objs.len())
                    .filter(|&i| !matches!(objs[i], Obj::Dead)),
            )
            .collect();
        for (k, &p) in r.keep.iter().enumerate() {
            if cands.is_empty() {
                break;
            }
            let i = cands[(p as usize + k) % cands.len()];
            if !next.contains(&i) {
                next.push(i);
            }
        }
        roots = next;
        let live = reachable(&objs, &roots);
        let mut t = Tracer::new();
        for &i in &roots {
            match &objs[i] {
                Obj::Node(g, ..) => t.root(g),
                Obj::Leaf(g) => t.root(g),
                Obj::Wide(g, ..) => t.root(g),
                Obj::Bag(g, _) => t.root(g),
                Obj::Huge(g, _) => t.root(g),
                Obj::Vast(g, _) => t.root(g),
                Obj::Dead => unreachable!("roots are live"),
            }
        }
        // SAFETY: the program (this test) uses only objects the roots reach from here on.
        unsafe { gc::collect(&t) };
        let s = gc::stats();
        if s.live_objects != live.len() {
            return Err(format!(
                "{} objects kept, {} reachable",
                s.live_objects,
                live.len()
            ));
        }
        for &i in &live {
            intact(&objs, i)?;
        }
        // A freed object keeps its index (ids stay unique) but is never named again.
        for (i, o) in objs.iter_mut().enumerate() {
            if !live.contains(&i) {
                if matches!(o, Obj::Bag(..) | Obj::Huge(..)) {
                    freed_typed.push(i as i64);
                }
                *o = Obj::Dead;
            }
        }
        // Exactly the typed objects freed were dropped, each once (garbage of the reuse loops
        // below has negative ids).
        let mut dropped: Vec<i64> = DROPPED.with(|d| d.borrow().clone());
        dropped.retain(|&x| x >= 0);
        dropped.sort_unstable();
        freed_typed.sort_unstable();
        if dropped != freed_typed {
            return Err(format!("dropped {dropped:?}, freed {freed_typed:?}"));
        }
        // Reuse the freed cells (garbage at once), then check the live objects again.
        for k in 0..r.n as i64 * 4 {
            let _ = Gc::new(Leaf { id: -k });
            let _ = Gc::new(Node {
                id: -k,
                a: None,
                b: None,
                back: Cell::new(None),
            });
            if k % 8 == 0 {
                let _ = Gc::new(Bag {
                    id: -k,
                    items: vec![None; 3],
                    counted: Counted(-1 - k),
                });
                let _ = Gc::new(Huge {
                    id: -k,
                    pad: [-k; 40],
                    items: Box::new([None]),
                    counted: Counted(-1 - k),
                });
            }
        }
        for &i in &live {
            intact(&objs, i)?;
        }
    }
    Ok(())
}

#[test]
fn random_graphs_keep_what_is_reachable_and_free_the_rest() {
    fn prop(rounds: Vec<Round>) -> bool {
        match run(&rounds) {
            Ok(()) => true,
            Err(e) => {
                eprintln!("{e}");
                false
            }
        }
    }
    let n = if std::env::var_os("METAJIT_LONG").is_some() {
        2000
    } else {
        200
    };
    QuickCheck::new()
        .tests(n)
        .quickcheck(prop as fn(Vec<Round>) -> bool);
}

/// Memory freed by collections is reused: a loop that keeps one small list alive and drops
/// everything else stays within a few chunks however long it runs.
#[test]
fn freed_cells_are_reused() {
    let before = meta_jit::alloc::reserved_bytes();
    let mut keep: Option<Gc<Node>> = None;
    for round in 0..200 {
        for k in 0..10_000 {
            let g = Gc::new(Node {
                id: k,
                a: if k % 100 == 0 { keep } else { None },
                b: None,
                back: Cell::new(None),
            });
            if k % 100 == 0 {
                keep = Some(g);
            }
        }
        // The chain `keep` -> .a -> .a ... of 100 nodes per round: cut it to the last 100.
        let mut t = Tracer::new();
        t.root(&keep);
        // SAFETY: only `keep` is used afterwards.
        unsafe { gc::collect(&t) };
        assert!(
            gc::stats().live_objects >= 100.min(round * 100),
            "round {round}"
        );
    }
    let mut n = 0;
    let mut at = keep;
    while let Some(g) = at {
        n += 1;
        at = g.a;
    }
    assert_eq!(n, 200 * 100);
    assert_eq!(gc::stats().live_objects, n);
    // 200 rounds of 10,000 32-byte nodes (64 MB) in a heap of at most a few chunks over the
    // live 640 KB.
    let grown = meta_jit::alloc::reserved_bytes() - before;
    assert!(grown < 4 << 20, "{grown} bytes");
}

/// The roots of compiled code suspended in its allocation slow path are found on its stack and
/// in its registers: a loop (compiled from trace text, not optimized) keeps an object it
/// allocated before its label only in a register or spill slot, allocates one object per
/// iteration (collecting whenever it takes a new region) and reads the first object back every
/// iteration. Were the object freed, its cell would be handed out again, zeroed, and the guard
/// on its field would fail.
#[test]
fn compiled_code_keeps_the_objects_in_its_registers() {
    use meta_jit::backend::{Backend, CompileOptions};
    use meta_jit::interp::Outcome;
    use meta_jit::ir::{parse::parse, Value};
    let t = parse(
        "descr v = field(offset=0, size=8, kind=i, signed)
        descr Num = size(size=8, align=8)
        [i0]
        p1 = new(descr=Num)
        setfield(p1, 42, descr=v)
        p2 = new(descr=Num)
        setfield(p2, 43, descr=v)
        label(p1, p2, i0)
        p3 = new(descr=Num)
        setfield(p3, i0, descr=v)
        i4 = getfield_i(p1, descr=v)
        i5 = getfield_i(p2, descr=v)
        i6 = int_add(i4, i5)
        i7 = int_eq(i6, 85)
        guard_true(i7) [i0, i4, i5]
        i8 = int_add(i0, 1)
        i9 = int_lt(i8, 300000)
        guard_true(i9) [i8]
        jump(p1, p2, i8)",
    )
    .unwrap();
    let mut b = Backend::new();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    let c0 = gc::stats().in_compiled_code;
    // A portal call (the collector's condition), with no roots of its own.
    let call = meta_jit::warm::portal_entered(&meta_jit::warm::Vals::default());
    gc::set_collection_threshold(8);
    // SAFETY: no `Gc` of this test is used after the run; the run's own objects are what the
    // test checks.
    unsafe { gc::enable_collection() };
    // SAFETY: the run's own objects are all it uses; no green or red leads to `Gc`s.
    let end = unsafe {
        gc::with_portal_roots(&|_: &mut Tracer| {}, Some(&[]), || {
            b.run(id, &[Value::Int(0)])
        })
    };
    gc::disable_collection();
    gc::set_collection_threshold(0);
    drop(call);
    let end = end.unwrap();
    match end.outcome {
        Outcome::GuardFailed { saved, .. } => assert_eq!(saved, vec![Value::Int(300_000)]),
        o => panic!("{o:?}"),
    }
    assert!(gc::stats().in_compiled_code - c0 >= 5, "{:?}", gc::stats());
}
