//! Optimizer throughput: generates a fixed set of large random traces (deterministic seed,
//! thousands of ops each, the same generator as the property tests) and times
//! `opt::optimize` with every stage on over them.
//!
//! Run with `cargo run --release -p meta-jit --example opt_bench`. Prints the ops going in,
//! the ops coming out (and their ratio: what the optimizer removed), and the throughput in
//! ops in per microsecond, best of several rounds. Not a test: nothing here is asserted.

use meta_jit::opt::{optimize, Options};
use meta_jit::testing::{Case, Shape};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SEED: u64 = 0x6f70_745f_6265_6e63;
const TRACES: u64 = 48;
const STEPS: usize = 2500;
const ROUNDS: usize = 7;

fn main() {
    let t0 = Instant::now();
    let built: Vec<_> = (0..TRACES)
        .map(|k| Case::random(SEED.wrapping_add(k), STEPS).build())
        .collect();
    let count = |shape: Option<Shape>| {
        built
            .iter()
            .zip(0..TRACES)
            .filter(|(_, k)| {
                shape.is_none_or(|s| Case::random(SEED.wrapping_add(*k), 0).shape == s)
            })
            .map(|(b, _)| b.trace.ops.len() - b.trace.num_inputs())
            .sum::<usize>()
    };
    let ops_in = count(None);
    println!(
        "{TRACES} traces, {ops_in} ops ({} straight, {} loops; {:.0} ops per trace), generated in {:.2?}",
        count(Some(Shape::Straight)),
        ops_in - count(Some(Shape::Straight)),
        ops_in as f64 / TRACES as f64,
        t0.elapsed()
    );
    let opts = Options::all();
    let mut best = Duration::MAX;
    let mut ops_out = 0;
    for _ in 0..ROUNDS {
        ops_out = 0;
        let t = Instant::now();
        for b in &built {
            let o = optimize(black_box(&b.trace), &opts);
            ops_out += o.ops.len() - o.num_inputs();
            black_box(o);
        }
        best = best.min(t.elapsed());
    }
    println!(
        "optimize (all stages): {ops_in} ops in, {ops_out} ops out (out/in {:.3}), best of {ROUNDS}: {:.2?}, {:.1} ops in/us",
        ops_out as f64 / ops_in as f64,
        best,
        ops_in as f64 / best.as_secs_f64() / 1e6
    );
}
