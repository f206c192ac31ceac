//! Recursive fib on a VM whose every guest frame is a heap object (`Gc::new(Frame { .. })`,
//! registers in `Cell`s, linked to the caller) and whose calls continue in the dispatch loop:
//! JIT off against on, with the collector freeing the frames, measured side by side in one run:
//! `cargo run --release -p meta-jit-tests --example heapfib_speedup [n] [runs]`.

use std::time::Instant;

#[path = "../tests/heapvm/mod.rs"]
mod heapvm;

use heapvm::{frame, run, Code, Ins};

/// fib(r0) at pc 2, called from pc 0.
fn program() -> Code {
    Code {
        ops: vec![
            Ins::Invoke {
                t: 2,
                arg: 0,
                dst: 1,
            },
            Ins::Leave(1),
            // fib (pc 2)
            Ins::Li(3, 2),
            Ins::Jlt(0, 3, 11),
            Ins::AddI(1, 0, -1),
            Ins::Invoke {
                t: 2,
                arg: 1,
                dst: 1,
            },
            Ins::AddI(2, 0, -2),
            Ins::Invoke {
                t: 2,
                arg: 2,
                dst: 2,
            },
            Ins::Add(1, 1, 2),
            Ins::Leave(1),
            Ins::Halt,
            // pc 11
            Ins::Leave(0),
        ],
    }
}

/// The result, the best time of `runs` runs in seconds, and the driver's summary.
fn time(params: &str, n: i64, runs: usize) -> (i64, f64, String) {
    let code = program();
    let mut best = f64::MAX;
    let mut result = 0;
    for _ in 0..runs {
        run::with_driver(|d| {
            d.reset();
            d.set_params(params).unwrap();
        });
        let t = Instant::now();
        result = run(&code, frame(n, 0, 0, None));
        best = best.min(t.elapsed().as_secs_f64());
    }
    (result, best, run::with_driver(|d| d.stats().summary()))
}

fn main() {
    // SAFETY: the only `Gc`s the program uses after a safe point are the portal's red `f` and
    // the frames it reaches (`Frame` implements `Trace`); the result is an integer.
    unsafe { meta_jit::gc::enable_collection() };
    let mut args = std::env::args().skip(1);
    let n = args.next().map_or(27, |a| a.parse().expect("a number"));
    let runs = args.next().map_or(5, |a| a.parse().expect("a number"));
    let (off, t_off, _) = time("off", n, runs);
    let (on, t_on, summary) = time("on", n, runs);
    assert_eq!(on, off, "the JIT changed the result");
    println!("fib({n}) = {on}");
    println!(
        "JIT off {:.1} ms, JIT on {:.1} ms: {:.2}x faster",
        t_off * 1e3,
        t_on * 1e3,
        t_off / t_on
    );
    println!("JIT on: {summary}");
    let g = meta_jit::gc::stats();
    println!(
        "collections: {} ({} in compiled code)",
        g.collections, g.in_compiled_code
    );
}
