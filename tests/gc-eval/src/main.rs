//! Allocation of `N` short-lived 8-byte objects (each one replaces the previous, which becomes
//! garbage), one mode per process so that the peak RSS is the mode's own:
//! - `nursery`: `meta_jit::gc::Gc::new` with the collector off (bump pointer, never freed);
//! - `collect`: the same with meta-jit's collector, collecting (the current object as the
//!   root) whenever the heap asks (`gc::collection_wanted`, tested every allocation, as a
//!   portal's safe point does);
//! - `pause`: `N` live 32-byte objects in a list, then the time of one collection;
//! - `pause-typed`: the same with typed objects (a header, traced through `Trace`: each holds
//!   its link in a `Box<[Gc]>` and 16 bytes in a `Vec<u8>`);
//! - `sweep-typed`: `N` unreachable typed objects (as in `pause-typed`), then the time of the
//!   collection that frees them (and runs their `Drop`);
//! - `collect-typed`: `collect` with a typed object (a `Vec<u8>` of 32 bytes) per step;
//! - `malloc`: `Box::new` then drop (the global allocator's free list);
//! - `malloc-typed`: `Box::new` of the `collect-typed` object then drop;
//! - `arena`: gc-arena's `Gc::new` inside `mutate_root`, collecting the debt every 4096
//!   allocations (`collect_debt`, incremental);
//! - `barrier-arena` / `barrier-cell`: `N` stores into one object, through gc-arena's write
//!   barrier (`Gc::write` + `RefLock`) or a plain `Cell`.

use std::cell::Cell;
use std::hint::black_box;
use std::time::Instant;

use gc_arena::lock::RefLock;
use gc_arena::{Arena, Collect, Gc, Rootable};

#[derive(Collect, meta_jit::hints::Trace)]
#[collect(require_static)]
struct Num {
    v: i64,
}

#[derive(Collect)]
#[collect(no_drop)]
struct Root<'gc> {
    cur: Gc<'gc, Num>,
    cell: Gc<'gc, RefLock<Num>>,
}

#[derive(meta_jit::hints::Trace)]
struct Node {
    v: i64,
    next: Option<meta_jit::gc::Gc<Node>>,
    pad: [i64; 2],
}

#[derive(meta_jit::hints::Trace)]
struct TNode {
    v: i64,
    next: Box<[meta_jit::gc::Gc<TNode>]>,
    bytes: Vec<u8>,
}

#[derive(meta_jit::hints::Trace)]
struct TNum {
    v: i64,
    bytes: Vec<u8>,
}

/// A list of `n` typed nodes (the head).
fn typed_list(n: i64) -> Option<meta_jit::gc::Gc<TNode>> {
    let mut head: Option<meta_jit::gc::Gc<TNode>> = None;
    for i in 0..n {
        head = Some(meta_jit::gc::Gc::new(TNode {
            v: i,
            next: head.into_iter().collect(),
            bytes: vec![i as u8; 16],
        }));
    }
    head
}

/// One collection with `head` as the root: its time, reported per object (live or freed).
fn timed_collection(head: Option<meta_jit::gc::Gc<TNode>>, what: &str) {
    use meta_jit::gc;
    let mut t = gc::Tracer::new();
    t.root(&head);
    let before = gc::stats();
    let c = Instant::now();
    // SAFETY: only `head` and what it reaches are used afterwards.
    unsafe { gc::collect(&t) };
    let dt = c.elapsed();
    let s = gc::stats();
    let n = if what == "live" {
        s.live_objects as u64
    } else {
        s.dropped - before.dropped
    };
    eprintln!(
        "{what} {n} typed objects (live heap {} MB): collection {:.2} ms ({:.1} ns per object)",
        s.live_bytes >> 20,
        dt.as_secs_f64() * 1e3,
        dt.as_secs_f64() * 1e9 / n as f64
    );
}

fn peak_rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0)
        / 1024
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "nursery".into());
    let n: i64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000_000);
    let t = Instant::now();
    let sum = match mode.as_str() {
        "nursery" => {
            let mut cur = meta_jit::gc::Gc::new(Num { v: 0 });
            for _ in 0..n {
                cur = black_box(meta_jit::gc::Gc::new(Num { v: cur.v + 1 }));
            }
            cur.v
        }
        "collect" => {
            use meta_jit::gc;
            // SAFETY: the loop's only object in use is `cur`, the root of every collection.
            unsafe { gc::enable_collection() };
            let mut cur = gc::Gc::new(Num { v: 0 });
            for _ in 0..n {
                cur = black_box(gc::Gc::new(Num { v: cur.v + 1 }));
                if gc::collection_wanted() {
                    let mut t = gc::Tracer::new();
                    t.root(&cur);
                    // SAFETY: as above.
                    unsafe { gc::collect(&t) };
                }
            }
            let s = gc::stats();
            eprintln!(
                "{} collections, {:?} in all, longest {:?}",
                s.collections, s.total_pause, s.max_pause
            );
            cur.v
        }
        "pause" => {
            use meta_jit::gc;
            let mut head: Option<gc::Gc<Node>> = None;
            for i in 0..n {
                head = Some(gc::Gc::new(Node {
                    v: i,
                    next: head,
                    pad: [0; 2],
                }));
            }
            let mut t = gc::Tracer::new();
            t.root(&head);
            let c = Instant::now();
            // SAFETY: only `head` and what it reaches are used afterwards.
            unsafe { gc::collect(&t) };
            let dt = c.elapsed();
            let s = gc::stats();
            eprintln!(
                "live heap {} objects, {} MB: collection {:.2} ms ({:.1} ns per live object)",
                s.live_objects,
                s.live_bytes >> 20,
                dt.as_secs_f64() * 1e3,
                dt.as_secs_f64() * 1e9 / s.live_objects as f64
            );
            head.map_or(0, |h| h.v)
        }
        "pause-typed" => {
            let head = typed_list(n);
            timed_collection(head, "live");
            head.map_or(0, |h| h.v + h.next[0].v)
        }
        "sweep-typed" => {
            let head = typed_list(n);
            let v = head.map_or(0, |h| h.v);
            timed_collection(None, "freed");
            v
        }
        "collect-typed" => {
            use meta_jit::gc;
            // SAFETY: the loop's only object in use is `cur`, the root of every collection.
            unsafe { gc::enable_collection() };
            let mut cur = gc::Gc::new(TNum {
                v: 0,
                bytes: vec![0; 32],
            });
            for _ in 0..n {
                cur = black_box(gc::Gc::new(TNum {
                    v: cur.v + 1,
                    bytes: vec![cur.bytes[0].wrapping_add(1); 32],
                }));
                if gc::collection_wanted() {
                    let mut t = gc::Tracer::new();
                    t.root(&cur);
                    // SAFETY: as above.
                    unsafe { gc::collect(&t) };
                }
            }
            let s = gc::stats();
            eprintln!(
                "{} collections, {:?} in all, longest {:?}, {} dropped",
                s.collections, s.total_pause, s.max_pause, s.dropped
            );
            cur.v
        }
        "malloc-typed" => {
            let mut cur = Box::new(TNum {
                v: 0,
                bytes: vec![0; 32],
            });
            for _ in 0..n {
                cur = black_box(Box::new(TNum {
                    v: cur.v + 1,
                    bytes: vec![cur.bytes[0].wrapping_add(1); 32],
                }));
            }
            cur.v
        }
        "malloc" => {
            let mut cur = Box::new(Num { v: 0 });
            for _ in 0..n {
                cur = black_box(Box::new(Num { v: cur.v + 1 }));
            }
            cur.v
        }
        "arena" => {
            let mut arena = Arena::<Rootable![Root<'_>]>::new(|mc| Root {
                cur: Gc::new(mc, Num { v: 0 }),
                cell: Gc::new(mc, RefLock::new(Num { v: 0 })),
            });
            let mut left = n;
            while left > 0 {
                let batch = left.min(4096);
                arena.mutate_root(|mc, root| {
                    for _ in 0..batch {
                        root.cur = black_box(Gc::new(mc, Num { v: root.cur.v + 1 }));
                    }
                });
                left -= batch;
                arena.collect_debt();
            }
            arena.mutate(|_, root| root.cur.v)
        }
        "barrier-arena" => {
            let arena = Arena::<Rootable![Root<'_>]>::new(|mc| Root {
                cur: Gc::new(mc, Num { v: 0 }),
                cell: Gc::new(mc, RefLock::new(Num { v: 0 })),
            });
            arena.mutate(|mc, root| {
                for i in 0..n {
                    let c = black_box(root.cell);
                    Gc::write(mc, c).unlock().borrow_mut().v += i;
                }
                root.cell.borrow().v
            })
        }
        "barrier-cell" => {
            let c = Box::new(Cell::new(0i64));
            for i in 0..n {
                let c = black_box(&c);
                c.set(c.get() + i);
            }
            c.get()
        }
        m => panic!("unknown mode {m}"),
    };
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{mode:>14}: {n} ops in {:.1} ms, {:.2} ns/op, peak RSS {} MB (result {sum})",
        dt * 1e3,
        dt * 1e9 / n as f64,
        peak_rss_mb()
    );
}
