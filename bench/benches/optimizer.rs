//! The optimizer with every stage on, over random traces of `meta_jit::testing` (straight and
//! loop traces, about 2,500 steps each) and interpreter-like loops of growing length. The
//! throughput is in input ops per second.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use meta_jit::opt::{optimize, Options};
use meta_jit_bench::{interpreter_like, random_traces};
use std::hint::black_box;

fn random(c: &mut Criterion) {
    let traces = random_traces(48, 2500);
    let ops: usize = traces.iter().map(|t| t.ops.len() - t.num_inputs()).sum();
    let mut g = c.benchmark_group("optimize");
    g.throughput(Throughput::Elements(ops as u64));
    g.sample_size(20);
    g.bench_function("48 random traces", |b| {
        b.iter(|| {
            for t in &traces {
                black_box(optimize(black_box(t), &Options::all()));
            }
        })
    });
    g.finish();
}

fn peeled(c: &mut Criterion) {
    let mut g = c.benchmark_group("optimize interpreter-like loop");
    for blocks in [5, 100, 1000] {
        let t = interpreter_like(blocks);
        g.throughput(Throughput::Elements(t.ops.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(blocks), &t, |b, t| {
            b.iter(|| black_box(optimize(black_box(t), &Options::all())))
        });
    }
    g.finish();
}

criterion_group!(benches, random, peeled);
criterion_main!(benches);
