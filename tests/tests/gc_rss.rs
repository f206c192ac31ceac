//! The process's memory stays bounded while an interpreter allocates many short-lived objects
//! that own out-of-line buffers (a `Vec<u8>` and a `Box<[Gc<Num>]>`: typed objects, whose
//! `Drop` frees the buffers when the collector frees them), with the JIT off and on. Measured
//! as the resident set of the process (`/proc/self/status`, Linux), not the heap's own count,
//! so that a leaked buffer shows. One test in this file, so that no other test of the binary
//! runs beside it and moves the process's RSS.

use std::cell::Cell;

use meta_jit::gc::{self, Gc, Trace, Tracer};
use meta_jit::hints as jit;
use meta_jit::hints::*;

/// A boxed number (plain: compiled code allocates it inline).
#[derive(Debug, JitLayout, Trace)]
pub struct Num {
    pub v: i64,
}

thread_local! {
    static DROPS: Cell<u64> = const { Cell::new(0) };
    static MADE: Cell<u64> = const { Cell::new(0) };
    static BAD: Cell<u64> = const { Cell::new(0) };
}

/// Counts its drops.
pub struct Counted;

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

/// A typed object: its bytes and its kids are out of line.
#[derive(Trace)]
pub struct Blob {
    pub tag: i64,
    pub bytes: Vec<u8>,
    /// `[the counter box it was made with, a box of 2 * tag, the previous blob's first kid]`
    pub kids: Box<[Gc<Num>]>,
    pub counted: Counted,
}

fn blob_ok(b: &Blob) -> bool {
    let t = b.tag;
    b.bytes.len() == 100 + (t % 50) as usize
        && b.bytes.iter().all(|&x| x == t as u8)
        && b.kids.len() == 3
        && b.kids[0].v == t
        && b.kids[1].v == 2 * t
        && b.kids[2].v == t - 1
}

/// A new blob for `i`, after checking the previous one (which only the portal's red `cur`
/// reaches; its kids only through its `Box`).
#[dont_look_inside]
pub fn make_blob(i: Gc<Num>, cur: Gc<Blob>) -> Gc<Blob> {
    if cur.tag > 0 && !blob_ok(&cur) {
        BAD.with(|b| b.set(b.get() + 1));
    }
    MADE.with(|m| m.set(m.get() + 1));
    let t = i.v;
    Gc::new(Blob {
        tag: t,
        bytes: vec![t as u8; 100 + (t % 50) as usize],
        kids: vec![i, Gc::new(Num { v: 2 * t }), cur.kids[0]].into_boxed_slice(),
        counted: Counted,
    })
}

/// The blob's tag (traced code does not look into a typed object).
#[dont_look_inside]
pub fn tag_of(b: Gc<Blob>) -> i64 {
    b.tag
}

/// Every iteration: a blob made by a residual call, and a counter box that escapes into it
/// (so that the compiled loop allocates inline and collects in its slow path).
#[jit::interpreter(greens(pc), reds(i, cur, n))]
pub fn churn(mut i: Gc<Num>, mut cur: Gc<Blob>, n: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        i = Gc::new(Num { v: i.v + 1 });
        cur = make_blob(i, cur);
        if i.v < n {
            pc = 0;
            can_enter_jit!();
            continue;
        }
        return tag_of(cur) + pc as i64;
    }
}

/// `VmRSS` and `VmHWM` (peak) of the process, in KiB.
fn rss_kib() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").expect("Linux: /proc/self/status");
    let field = |name: &str| -> u64 {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/self/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn run(params: &str, n: i64) -> i64 {
    churn::with_driver(|d| {
        d.reset();
        d.set_params("threshold=3,trace_eagerness=2").unwrap();
        d.set_params(params).unwrap();
    });
    let first = Gc::new(Num { v: 0 });
    let cur = Gc::new(Blob {
        tag: 0,
        bytes: Vec::new(),
        kids: vec![first].into_boxed_slice(),
        counted: Counted,
    });
    // SAFETY: the portal's reds are the only `Gc`s used while it runs (`first` and the first
    // blob are moved into it, never used again here).
    unsafe { gc::enable_collection() };
    let r = churn(first, cur, n);
    gc::disable_collection();
    r
}

/// 1 million blobs of 150 to 200 bytes of buffers each with the JIT off, then 1 million with
/// the JIT on (`METAJIT_LONG=1`: 10 million each): about 200 MB of buffers and 100 MB of
/// objects each way, in a process whose RSS stays within 12 MB of where it started.
#[test]
fn typed_objects_with_buffers_keep_the_rss_bounded() {
    let n: i64 = if std::env::var_os("METAJIT_LONG").is_some() {
        10_000_000
    } else {
        1_000_000
    };
    gc::set_collection_threshold(256 << 10);
    // Warm up the allocator, the thread's heap and the JIT's own structures on a short run,
    // then measure from there.
    assert_eq!(run("on", 20_000), 20_000);
    // Resets the peak (`VmHWM`) to the current RSS (Linux 4.0 and later; if it fails, the peak
    // includes the warm-up, which is smaller than the bound anyway).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let (start, _) = rss_kib();
    let c0 = gc::stats().collections;
    let compiled0 = gc::stats().in_compiled_code;
    let mut peaks = Vec::new();
    for params in ["off", "on"] {
        assert_eq!(run(params, n), n, "{params}");
        let loops = churn::with_driver(|d| d.stats().loops());
        assert_eq!(
            loops,
            (params == "on") as usize,
            "JIT {params}: loops compiled"
        );
        let (now, peak) = rss_kib();
        peaks.push((params, now, peak));
    }
    let s = gc::stats();
    for (params, now, peak) in peaks {
        eprintln!("JIT {params}: RSS {now} KiB, peak {peak} KiB, start {start} KiB; {s:?}");
        assert!(
            peak <= start + 12 * 1024,
            "JIT {params}: peak RSS {peak} KiB, started at {start} KiB"
        );
        assert!(
            now <= start + 12 * 1024,
            "JIT {params}: RSS {now} KiB, started at {start} KiB"
        );
    }
    // Every blob the collector freed was dropped, exactly once: all were made, and at most
    // the few the last collection saw alive (or made since) are not dropped yet.
    let (made, drops) = (MADE.with(|m| m.get()), DROPS.with(|d| d.get()));
    assert!(drops <= made, "{drops} drops of {made} blobs");
    assert!(
        made - drops < 20_000,
        "{drops} drops of {made} blobs; {s:?}"
    );
    assert_eq!(BAD.with(|b| b.get()), 0, "blobs found broken");
    assert!(s.collections - c0 >= 20, "{s:?}");
    assert!(
        s.in_compiled_code > compiled0,
        "no collection in compiled code: {s:?}"
    );
}
