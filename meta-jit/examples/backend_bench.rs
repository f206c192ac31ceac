//! Backend figures, measured side by side in one run:
//!
//! - compile throughput: microseconds per IR op for `Backend::compile` alone, and for the
//!   optimizer plus the backend, over interpreter-like traces of several sizes;
//! - speed of a compiled loop against the same loop in the reference interpreter.
//!
//! Run with `cargo run --release -p meta-jit --example backend_bench`.

use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::interp::{self, Outcome};
use meta_jit::ir::parse::{parse_with, Env};
use meta_jit::ir::{Trace, Value};
use meta_jit::opt::{optimize, Options};
use std::hint::black_box;
use std::time::{Duration, Instant};

extern "C" fn helper(a: i64, b: i64) -> i64 {
    a.wrapping_mul(31) ^ b
}

fn env() -> Env {
    Env::new().func("helper", helper as *const () as usize)
}

/// An interpreter-like trace: `blocks` copies of a block that loads from a frame and a stack
/// array, checks a tag, adds with an overflow check, compares, stores back, does some float
/// work and now and then calls a helper; a loop back to the start.
fn interpreter_like(blocks: usize) -> String {
    let mut s = String::from(
        "descr top = field(offset=0, size=8, kind=i)
         descr tag = field(offset=8, size=1, kind=i)
         descr acc = field(offset=16, size=8, kind=f)
         descr stack = array(base=8, item=8, kind=i, signed)
         descr h = call(args=ii, ret=i)
         [p0, p1, i2, f3]\n",
    );
    let (mut prev, mut prevf) = ("i2".to_string(), "f3".to_string());
    for k in 0..blocks {
        let v = |n: &str| format!("i{n}_{k}");
        s += &format!("{} = getfield_i(p0, descr=top)\n", v("top"));
        s += &format!("{} = getfield_i(p0, descr=tag)\n", v("tag"));
        s += &format!("guard_value({}, 3) [p0, p1, {prev}, {prevf}]\n", v("tag"));
        s += &format!(
            "{} = getarrayitem_i(p1, {}, descr=stack)\n",
            v("x"),
            v("top")
        );
        s += &format!("{} = int_add_ovf({}, {prev})\n", v("s"), v("x"));
        s += &format!("guard_no_overflow() [p0, p1, {prev}, {}]\n", v("x"));
        s += &format!("{} = int_lt({}, 1000000000)\n", v("c"), v("s"));
        s += &format!("guard_true({}) [p0, {}, {prevf}]\n", v("c"), v("s"));
        s += &format!("setarrayitem(p1, {}, {}, descr=stack)\n", v("top"), v("s"));
        s += &format!("f{k}a = cast_int_to_float({})\n", v("s"));
        s += &format!("f{k}b = float_mul(f{k}a, {prevf})\n");
        s += &format!("f{k}c = float_add(f{k}b, 0.5)\n");
        s += &format!("setfield(p0, f{k}c, descr=acc)\n");
        let next = if k % 4 == 3 {
            s += &format!(
                "{} = call_i(ConstFn(helper), {}, {prev}, descr=h)\n",
                v("h"),
                v("s")
            );
            v("h")
        } else {
            s += &format!("{} = int_and({}, 255)\n", v("m"), v("s"));
            v("m")
        };
        prev = next;
        prevf = format!("f{k}c");
    }
    s += &format!("jump(p0, p1, {prev}, {prevf})\n");
    s
}

fn time<R>(mut f: impl FnMut() -> R) -> (Duration, R) {
    // Repeat until at least 50 ms have passed; report the time of one call.
    let start = Instant::now();
    let mut n = 0u32;
    let mut r = f();
    n += 1;
    while start.elapsed() < Duration::from_millis(50) {
        r = f();
        n += 1;
    }
    (start.elapsed() / n, r)
}

fn compile_throughput() {
    println!("compile throughput (µs per IR op of the trace as recorded)");
    println!(
        "{:>8} {:>8} {:>12} {:>12} {:>14} {:>10}",
        "blocks", "ops", "backend", "opt+backend", "ops after opt", "code/op"
    );
    let opts = CompileOptions::default();
    for blocks in [5, 20, 100, 400] {
        let t = parse_with(&interpreter_like(blocks), &env()).unwrap();
        let n = t.ops.len();
        let (emit, bytes) = time(|| {
            let mut b = Backend::new();
            let id = b.compile(black_box(&t), &opts).unwrap();
            b.info(id).unwrap().code_bytes
        });
        let (both, after) = time(|| {
            let o = optimize(black_box(&t), &Options::all());
            let mut b = Backend::new();
            b.compile(&o, &opts).unwrap();
            o.ops.len()
        });
        println!(
            "{blocks:>8} {n:>8} {:>12.3} {:>12.3} {after:>14} {:>9.1}B",
            emit.as_secs_f64() * 1e6 / n as f64,
            both.as_secs_f64() * 1e6 / n as f64,
            bytes as f64 / n as f64,
        );
    }
}

/// The same over the random traces of `meta_jit::testing` (calls, memory, guards, loops).
fn random_throughput() {
    let traces: Vec<Trace> = (0..500)
        .map(|seed| meta_jit::testing::Case::random(seed, 100).build().trace)
        .collect();
    let ops: usize = traces.iter().map(|t| t.ops.len()).sum();
    let opts = CompileOptions::default();
    let (emit, _) = time(|| {
        for t in &traces {
            let mut b = Backend::new();
            b.compile(black_box(t), &opts).unwrap();
        }
    });
    let (both, _) = time(|| {
        for t in &traces {
            let o = optimize(black_box(t), &Options::all());
            let mut b = Backend::new();
            b.compile(&o, &opts).unwrap();
        }
    });
    println!(
        "{:>8} {ops:>8} {:>12.3} {:>12.3}   (500 random traces of meta_jit::testing)",
        "random",
        emit.as_secs_f64() * 1e6 / ops as f64,
        both.as_secs_f64() * 1e6 / ops as f64,
    );
}

fn loop_speed() {
    println!("\ncompiled loop vs reference interpreter (same trace, same result)");
    let loops = [
        (
            "integer sum",
            "[i0, i1]
            i2 = int_add(i0, i1)
            i3 = int_mul(i1, 3)
            i4 = int_xor(i2, i3)
            i5 = int_add(i1, 1)
            i6 = int_lt(i5, 10000000)
            guard_true(i6) [i4, i5]
            jump(i4, i5)",
            vec![Value::Int(0), Value::Int(0)],
        ),
        (
            "float + memory",
            "descr a = array(base=0, item=8, kind=f)
            [p0, i1, f2]
            i3 = int_and(i1, 63)
            f4 = getarrayitem_f(p0, i3, descr=a)
            f5 = float_mul(f4, 1.0001)
            f6 = float_add(f2, f5)
            setarrayitem(p0, i3, f5, descr=a)
            i7 = int_add(i1, 1)
            i8 = int_lt(i7, 10000000)
            guard_true(i8) [f6, i7]
            jump(p0, i7, f6)",
            vec![],
        ),
        (
            "with a call",
            "descr h = call(args=ii, ret=i)
            [i0, i1]
            i2 = call_i(ConstFn(helper), i0, i1, descr=h)
            i3 = int_add(i1, 1)
            i4 = int_lt(i3, 10000000)
            guard_true(i4) [i2, i3]
            jump(i2, i3)",
            vec![Value::Int(1), Value::Int(0)],
        ),
    ];
    println!(
        "{:>16} {:>10} {:>14} {:>14} {:>8}",
        "loop", "iters", "interp ns/it", "compiled ns/it", "speedup"
    );
    let mut data = vec![1.0f64; 64];
    for (name, text, inputs) in loops {
        let t: Trace = parse_with(text, &env()).unwrap();
        let inputs = if inputs.is_empty() {
            vec![
                Value::Ref(data.as_mut_ptr() as usize),
                Value::Int(0),
                Value::Float(0.0),
            ]
        } else {
            inputs
        };
        let run = interp::Run {
            max_iterations: usize::MAX,
            ..interp::Run::default()
        };
        let mut b = Backend::new();
        let id = b.compile(&t, &CompileOptions::default()).unwrap();
        data.fill(1.0);
        let t0 = Instant::now();
        let want = run.run(&t, &inputs).unwrap();
        let ti = t0.elapsed();
        // The compiled loop is fast enough for the clock's noise to matter: best of 5.
        let mut tc = Duration::MAX;
        let mut got = None;
        for _ in 0..5 {
            data.fill(1.0);
            let t0 = Instant::now();
            let out = b.run(id, &inputs).unwrap().outcome;
            tc = tc.min(t0.elapsed());
            assert_eq!(
                want, out,
                "{name}: the compiled loop computed something else"
            );
            got = Some(out);
        }
        let got = got.unwrap();
        let iters = 10_000_000f64;
        assert!(matches!(got, Outcome::GuardFailed { .. }));
        println!(
            "{name:>16} {iters:>10} {:>14.2} {:>14.2} {:>7.0}x",
            ti.as_secs_f64() * 1e9 / iters,
            tc.as_secs_f64() * 1e9 / iters,
            ti.as_secs_f64() / tc.as_secs_f64()
        );
    }
}

fn main() {
    compile_throughput();
    random_throughput();
    loop_speed();
}
