//! Recursive fib on a VM whose every guest call runs the portal again (each guest frame a
//! native frame of the portal), JIT off against on, measured side by side in one run:
//! `cargo run --release -p meta-jit-tests --example entry_speedup [n] [runs]`. With the JIT on
//! (`function_entry=1`), fib's function-entry trace calls its own compiled code for both
//! recursive calls (`call_assembler`).

use std::time::Instant;

#[path = "../tests/entryvm/mod.rs"]
mod entryvm;

use entryvm::run;

/// The result, the best time of `runs` runs in seconds, and the driver's summary.
fn time(params: &str, prog: &entryvm::Prog, n: i64, runs: usize) -> (i64, f64, String) {
    let mut best = f64::MAX;
    let mut result = 0;
    for _ in 0..runs {
        run::with_driver(|d| {
            d.reset();
            d.set_params(params).unwrap();
        });
        let t = Instant::now();
        result = run(prog, 0, n);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (result, best, run::with_driver(|d| d.stats().summary()))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().map_or(30, |a| a.parse().expect("a number"));
    let runs: usize = args.next().map_or(5, |a| a.parse().expect("a number"));
    let prog = entryvm::fib();
    let (off, t_off, _) = time("off", &prog, n, runs);
    let (on, t_on, summary) = time("on,function_entry=1", &prog, n, runs);
    assert_eq!(on, off, "the JIT changed the result");
    println!("fib({n}) = {on}, each guest call a native call of the portal (best of {runs}):");
    println!(
        "JIT off {:.1} ms, JIT on {:.1} ms: {:.2}x faster",
        t_off * 1e3,
        t_on * 1e3,
        t_off / t_on
    );
    println!("JIT on: {summary}");
}
