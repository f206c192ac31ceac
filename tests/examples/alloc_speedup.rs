//! JIT on vs off on a guest loop that allocates one small object per iteration (a boxed
//! counter and a boxed sum, `Gc::new` in traced code), measured side by side in one run:
//! `cargo run --release -p meta-jit-tests --example alloc_speedup [n] [gc]`.
//!
//! With the JIT the loop's boxes stay virtual (the compiled loop allocates nothing); without
//! it every iteration allocates two objects. With `gc` the collector is enabled (the portal's
//! greens and reds are the roots at its safe points) and frees them as the loop goes; without
//! it nothing is freed, so the peak RSS printed at the end grows with `n`.

use std::time::Instant;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(JitLayout, Trace)]
pub struct Num {
    pub v: i64,
}

#[derive(Clone, Copy, JitLayout, Trace)]
#[repr(C, u8)]
pub enum Op {
    /// `sum = Gc::new(sum + i)`
    Acc,
    /// `i = Gc::new(i + 1)`
    Inc,
    /// `out.last = sum` (the box escapes: compiled code must allocate it)
    Keep,
    /// back to 0 while `i < n`
    LoopLt(u32),
    Halt,
}

#[derive(JitLayout, Trace)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout, Trace)]
pub struct Out {
    pub last: Gc<Num>,
}

#[jit::interpreter(greens(pc, code), reds(i, sum, n, out))]
pub fn run(code: &Code, mut i: Gc<Num>, mut sum: Gc<Num>, n: i64, out: &mut Out) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Op::Acc => {
                sum = Gc::new(Num {
                    v: sum.v.wrapping_add(i.v),
                })
            }
            Op::Inc => i = Gc::new(Num { v: i.v + 1 }),
            Op::Keep => out.last = sum,
            Op::LoopLt(t) => {
                if i.v < n {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Halt => return sum.v,
        }
        pc += 1;
    }
}

fn time(params: &str, n: i64, keep: bool) -> (i64, f64) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap();
        d.set_params("keep_optimized=1").unwrap()
    });
    let mut ops = vec![Op::Acc, Op::Inc, Op::LoopLt(0), Op::Halt];
    if keep {
        ops.insert(1, Op::Keep);
    }
    let code = Code { ops };
    let mut out = Out {
        last: Gc::new(Num { v: 0 }),
    };
    let t = Instant::now();
    let r = run(
        &code,
        Gc::new(Num { v: 0 }),
        Gc::new(Num { v: 0 }),
        n,
        &mut out,
    );
    (r, t.elapsed().as_secs_f64())
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    if std::env::args().nth(2).as_deref() == Some("gc") {
        // SAFETY: `time` keeps no `Gc` but the portal's reds (`out` is a red, and `Out`
        // implements `Trace`) and reads the result before any other safe point.
        unsafe { meta_jit::gc::enable_collection() };
    }
    // The escaping variant first: its compiled loop allocates one object per iteration inline.
    for _ in 0..3 {
        let (a, off) = time("off", n, true);
        let (b, on) = time("on", n, true);
        assert_eq!(a, b);
        println!(
            "{n} iterations, the sum escapes: off {:.1} ms, on {:.1} ms ({:.2} ns/iteration), speedup {:.2}x",
            off * 1e3,
            on * 1e3,
            on * 1e9 / n as f64,
            off / on
        );
    }
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let (a, off) = time("off", n, false);
        let (b, on) = time("on", n, false);
        assert_eq!(a, b);
        ratios.push(off / on);
        println!(
            "{n} iterations, 2 objects each: off {:.1} ms, on {:.1} ms, speedup {:.2}x",
            off * 1e3,
            on * 1e3,
            off / on
        );
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let s = run::with_driver(|d| d.stats());
    let body = s.traces.first().map(|t| {
        let text = t.optimized().to_string();
        let at = text.find("label(").unwrap_or(0);
        text[at..].matches("new(").count()
    });
    let g = meta_jit::gc::stats();
    println!(
        "median speedup {:.2}x; `new` in the compiled loop body: {body:?}; peak RSS {} MB; heap {} MB; {} collections, longest pause {:?}; {}",
        ratios[1],
        peak_rss_kb() / 1024,
        meta_jit::alloc::reserved_bytes() >> 20,
        g.collections,
        g.max_pause,
        s.summary()
    );
}
