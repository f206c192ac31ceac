//! The backend: compiling interpreter-like traces of growing length and random traces (the
//! backend alone, and the optimizer then the backend), in input ops per second; and a
//! compiled loop against the same trace in the reference interpreter, 10 million iterations
//! each (the two results are compared before anything is timed).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::interp::Run;
use meta_jit::opt::{optimize, Options};
use meta_jit_bench::{interpreter_like, loop_inputs, loops, random_traces};
use std::hint::black_box;

fn compile(c: &mut Criterion) {
    let opts = CompileOptions::default();
    let mut g = c.benchmark_group("compile interpreter-like");
    for blocks in [5, 100, 400] {
        let t = interpreter_like(blocks);
        g.throughput(Throughput::Elements(t.ops.len() as u64));
        g.bench_with_input(BenchmarkId::new("backend", blocks), &t, |b, t| {
            b.iter(|| {
                let mut be = Backend::new();
                black_box(be.compile(black_box(t), &opts).expect("compiles"))
            })
        });
        g.bench_with_input(
            BenchmarkId::new("optimizer + backend", blocks),
            &t,
            |b, t| {
                b.iter(|| {
                    let o = optimize(black_box(t), &Options::all());
                    let mut be = Backend::new();
                    black_box(be.compile(&o, &opts).expect("compiles"))
                })
            },
        );
    }
    g.finish();
    let traces = random_traces(200, 100);
    let ops: usize = traces.iter().map(|t| t.ops.len()).sum();
    let mut g = c.benchmark_group("compile random");
    g.throughput(Throughput::Elements(ops as u64));
    g.sample_size(20);
    g.bench_function("200 traces, backend", |b| {
        b.iter(|| {
            for t in &traces {
                let mut be = Backend::new();
                black_box(be.compile(black_box(t), &opts).expect("compiles"));
            }
        })
    });
    g.finish();
}

fn run_loops(c: &mut Criterion) {
    let mut g = c.benchmark_group("10M iterations");
    g.sample_size(10);
    let mut data = vec![1.0f64; 64];
    for (name, t, array) in loops() {
        let run = Run {
            max_iterations: usize::MAX,
            ..Run::default()
        };
        let mut be = Backend::new();
        let id = be
            .compile(&t, &CompileOptions::default())
            .expect("compiles");
        data.fill(1.0);
        let inputs = loop_inputs(array.then_some(&mut data[..]));
        let want = run.run(&t, &inputs).expect("runs");
        data.fill(1.0);
        let got = be.run(id, &inputs).expect("runs").outcome;
        assert_eq!(
            want, got,
            "{name}: the compiled loop computed something else"
        );
        g.bench_function(BenchmarkId::new("compiled", name), |b| {
            b.iter(|| black_box(be.run(id, black_box(&inputs)).expect("runs")))
        });
        g.bench_function(BenchmarkId::new("reference interpreter", name), |b| {
            b.iter(|| black_box(run.run(&t, black_box(&inputs)).expect("runs")))
        });
    }
    g.finish();
}

criterion_group!(benches, compile, run_loops);
criterion_main!(benches);
