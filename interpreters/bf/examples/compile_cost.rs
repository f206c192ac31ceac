//! The JIT's compile cost against trace length: traces one loop of growing length (a loop
//! body of `>+` pairs, which records a load, an add, a store and a bounds check per pair) and
//! prints, per size, the recorded ops and the time spent tracing, optimizing and emitting
//! code, as microseconds per recorded op. A flat last column means every stage is linear.
//!
//! Then the case of many long loops at the default parameters: 20 hot loops each just under
//! the trace limit, run with the JIT off and on, side by side.
//!
//! `cargo run --release -p bf --example compile_cost -- [--runs N] [--pairs P]`
//!
//! `--pairs P` measures that one size only (for `perf stat`, which counts instructions and is
//! not disturbed by other work on the machine as times are).
//!
//! Each size runs `N` times (3 by default) in this process, the driver reset in between; the
//! table shows the run with the least total compile time.

use std::time::{Duration, Instant};

const USAGE: &str = "usage: compile_cost [--runs N] [--pairs P]";

fn main() {
    let mut runs = 3;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|n| n.parse().ok())) {
            ("--runs", Some(n)) if n > 0 => runs = n,
            ("--pairs", Some(n)) if n > 0 => only = Some(n),
            _ => {
                eprintln!("{USAGE}");
                std::process::exit(2);
            }
        }
    }
    println!("| pairs | recorded ops | tracing ms | optimizing ms | emitting ms | total µs/op |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let sizes = only.map_or(vec![10, 110, 1_110, 11_110], |p| vec![p]);
    for pairs in sizes {
        let src = format!("++++++++[{}{}-]", ">+".repeat(pairs), "<".repeat(pairs));
        let best = (0..runs)
            .map(|_| compile_once(&src))
            .min_by_key(|c| c.total())
            .expect("at least one run");
        let us_per_op = best.total().as_secs_f64() * 1e6 / best.ops as f64;
        println!(
            "| {pairs} | {} | {:.2} | {:.2} | {:.2} | {us_per_op:.2} |",
            best.ops,
            ms(best.tracing),
            ms(best.optimizing),
            ms(best.emitting),
        );
    }
    if only.is_none() {
        many_long_loops(runs);
    }
}

/// What one compilation cost.
struct Cost {
    ops: usize,
    tracing: Duration,
    optimizing: Duration,
    emitting: Duration,
}

impl Cost {
    fn total(&self) -> Duration {
        self.tracing + self.optimizing + self.emitting
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `src` with every loop traced on its second pass and no trace limit, and reads the
/// driver's statistics.
fn compile_once(src: &str) -> Cost {
    let program = bf::parse(src.as_bytes()).expect("a generated program parses");
    bf::interpret::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=1,trace_limit=4000000000,keep_recorded=1")
            .expect("valid parameters")
    });
    run(&program);
    bf::interpret::with_driver(|d| {
        d.with_stats(|s| Cost {
            ops: s
                .traces
                .iter()
                .filter_map(|t| t.recorded.as_ref())
                .map(|t| t.ops.len())
                .sum(),
            tracing: s.tracing,
            optimizing: s.optimizing,
            emitting: s.compiling,
        })
    })
}

fn run(program: &bf::Program) {
    let (mut input, mut output) = (std::io::empty(), std::io::sink());
    let mut io = bf::Io::new(&mut input, &mut output);
    bf::run(program, &mut bf::Tape::new(), &mut io).expect("the program runs");
}

/// 20 loops of 600 `>+` pairs (`bf::gen::long_loops`), so that each trace is just under the
/// default trace limit.
fn many_long_loops(runs: usize) {
    let pairs = 600;
    let src = bf::gen::long_loops(20, pairs);
    let program = bf::parse(src.as_bytes()).expect("a generated program parses");
    let time = |params: &str| {
        (0..runs)
            .map(|_| {
                bf::interpret::with_driver(|d| {
                    d.reset();
                    d.set_params(params).expect("valid parameters")
                });
                let start = Instant::now();
                run(&program);
                start.elapsed()
            })
            .min()
            .expect("at least one run")
    };
    let off = time("off");
    let on = time("on,threshold=1039,trace_limit=6000");
    let loops = bf::interpret::with_driver(|d| d.with_stats(|s| s.loops()));
    println!();
    println!("20 loops of {pairs} pairs, default parameters ({loops} loops compiled):");
    println!(
        "JIT off {:.1} ms, JIT on {:.1} ms: on/off = {:.2}",
        ms(off),
        ms(on),
        on.as_secs_f64() / off.as_secs_f64()
    );
}
