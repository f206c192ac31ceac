//! What the hints cost the native interpreter: the same small bytecode interpreter, compiled once
//! with meta-jit's hints and once with the hints compiled out, run on the same guest program.
//!
//! Deterministic figures (instruction counts, needs valgrind):
//!
//! `cargo run --release -p meta-jit --example hint_overhead -- --callgrind [iterations]`
//!
//! runs this executable under `valgrind --tool=callgrind` once per variant and size and prints
//! the instructions one iteration of the guest loop costs: the plain interpreter, the hinted one
//! with the JIT off (as `METAJIT_PARAMS=off` or `set_params("off")` turn it off), and the
//! hinted one with the JIT on but the loop never hot. See the `callgrind` module below.
//!
//! Times (noisy):
//!
//! `cargo run --release -p meta-jit --example hint_overhead [iterations] [rounds]`
//!
//! runs both copies side by side in one process and prints the ratio of their times. The two
//! `run` functions differ only in the portal's entry (a call that counts portal calls) and
//! around `can_enter_jit!` (a thread-local flag test, and the reds it may assign; the pinned
//! green `code` is never assigned), so what the ratio measures beyond that is mostly where the
//! linker placed each copy: that placement effect alone can be 10-20% on a small hot loop. Each
//! side is therefore compiled twice (two modules), the ratio of two copies of the same code is
//! printed as the noise floor, and the ratio is given both for the mean of the two placements
//! and for the best one. Building with
//! `RUSTFLAGS="-C llvm-args=-align-all-functions=6 -C llvm-args=-align-all-nofallthru-blocks=5"`
//! removes most of the placement effect.
//!
//! The interpreter source is written once, in `interpreter!`, which receives the attributes to
//! put on its functions: meta-jit's policy attributes for the hinted copy, a neutral
//! `#[allow(dead_code)]` for the plain one. The hint macros (`jit_merge_point!`, `promote!`,
//! `record_known_result!`, ...) resolve to meta-jit's in the hinted module and to local no-op
//! macros in the plain one.

use std::hint::black_box;
use std::time::Instant;

macro_rules! interpreter {
    (
        portal: #[$portal:meta], look: #[$look:meta], elidable: #[$elid:meta],
        residual: #[$resid:meta], methods: #[$methods:meta], layout: #[$layout:meta]
    ) => {
        #[derive(Clone, Copy, Debug)]
        #[$layout]
        #[repr(C, u8)]
        pub enum Op {
            Push(i64),
            Load(u8),
            Store(u8),
            Add,
            Sub,
            Mul,
            Mod,
            Lt,
            JumpIfFalse(u32),
            Jump(u32),
            Hash,
            Halt,
        }

        #[$layout]
        pub struct Code {
            pub ops: Vec<Op>,
        }

        #[$layout]
        pub struct Frame {
            pub stack: [i64; 16],
            pub sp: usize,
            pub vars: [i64; 8],
        }

        #[$methods]
        impl Frame {
            #[$look]
            fn push(&mut self, v: i64) {
                self.stack[self.sp] = v;
                self.sp += 1;
            }
            #[$look]
            fn pop(&mut self) -> i64 {
                self.sp -= 1;
                self.stack[self.sp]
            }
        }

        #[$elid]
        fn mix_helper(x: i64) -> i64 {
            (x ^ (x >> 7)).wrapping_mul(0x9e37)
        }

        #[$look]
        fn mix(x: i64) -> i64 {
            let r = mix_helper(x);
            record_known_result!(r, mix_helper, x);
            r
        }

        #[$resid]
        fn report(_x: i64) {}

        #[$portal]
        pub fn run(code: &Code, frame: &mut Frame) -> i64 {
            let mut pc: usize = 0;
            loop {
                jit_merge_point!();
                match code.ops[pc] {
                    Op::Push(v) => frame.push(v),
                    Op::Load(i) => {
                        let v = frame.vars[i as usize];
                        frame.push(v);
                    }
                    Op::Store(i) => {
                        let v = frame.pop();
                        frame.vars[i as usize] = v;
                    }
                    Op::Add => {
                        let b = frame.pop();
                        let a = frame.pop();
                        frame.push(a.wrapping_add(b));
                    }
                    Op::Sub => {
                        let b = frame.pop();
                        let a = frame.pop();
                        frame.push(a.wrapping_sub(b));
                    }
                    Op::Mul => {
                        let b = frame.pop();
                        let a = frame.pop();
                        frame.push(a.wrapping_mul(b));
                    }
                    Op::Mod => {
                        let b = frame.pop();
                        let a = frame.pop();
                        frame.push(a % b);
                    }
                    Op::Lt => {
                        let b = frame.pop();
                        let a = frame.pop();
                        frame.push((a < b) as i64);
                    }
                    Op::JumpIfFalse(t) => {
                        let c = frame.pop();
                        if c == 0 {
                            pc = t as usize;
                            can_enter_jit!();
                            continue;
                        }
                    }
                    Op::Jump(t) => {
                        pc = promote!(t) as usize;
                        can_enter_jit!();
                        continue;
                    }
                    Op::Hash => {
                        let a = frame.pop();
                        frame.push(mix(a));
                    }
                    Op::Halt => {
                        let r = frame.pop();
                        report(r);
                        return r;
                    }
                }
                pc += 1;
            }
        }
    };
}

macro_rules! hinted_copy {
    ($name:ident) => {
        mod $name {
            use meta_jit::hints as jit;
            use meta_jit::hints::*;
            interpreter! {
                portal: #[jit::interpreter(greens(pc, code), reds(frame))],
                look: #[jit::look_inside],
                elidable: #[jit::elidable],
                residual: #[jit::dont_look_inside],
                methods: #[jit::methods],
                layout: #[derive(jit::JitLayout)]
            }
        }
    };
}

/// The hint macros compiled out.
mod noop {
    macro_rules! jit_merge_point {
        () => {
            ()
        };
    }
    macro_rules! can_enter_jit {
        () => {
            ()
        };
    }
    macro_rules! promote {
        ($x:expr) => {
            $x
        };
    }
    macro_rules! record_known_result {
        ($($t:tt)*) => {
            ()
        };
    }
    pub(crate) use {can_enter_jit, jit_merge_point, promote, record_known_result};
}

macro_rules! plain_copy {
    ($name:ident) => {
        mod $name {
            use crate::noop::*;
            interpreter! {
                portal: #[allow(dead_code)],
                look: #[allow(dead_code)],
                elidable: #[allow(dead_code)],
                residual: #[allow(dead_code)],
                methods: #[allow(dead_code)],
                layout: #[allow(dead_code)]
            }
        }
    };
}

// Two copies of each: where the linker puts a hot loop moves its speed by several percent
// (alignment), so each side is the mean of two placements, and the ratio of the two copies of
// one side is printed as the noise floor.
hinted_copy!(hinted_a);
hinted_copy!(hinted_b);
plain_copy!(plain_a);
plain_copy!(plain_b);

/// `acc = 0; i = 0; while i < n { acc = acc + hash(i) % 1000 * 3 - i; i = i + 1 }; acc`
macro_rules! program {
    ($m:ident, $n:expr) => {{
        use $m::Op::*;
        vec![
            Push(0),
            Store(0), // acc
            Push(0),
            Store(1), // i
            Load(1),  // 4: loop head
            Push($n),
            Lt,
            JumpIfFalse(25),
            Load(0),
            Load(1),
            Hash,
            Push(1000),
            Mod,
            Push(3),
            Mul,
            Add,
            Load(1),
            Sub,
            Store(0),
            Load(1),
            Push(1),
            Add,
            Store(1),
            Jump(4),
            Halt,    // not reached
            Load(0), // 25
            Halt,
        ]
    }};
}

macro_rules! timer {
    ($name:ident, $m:ident) => {
        fn $name(n: i64) -> (f64, i64) {
            let code = $m::Code {
                ops: program!($m, n),
            };
            let mut frame = $m::Frame {
                stack: [0; 16],
                sp: 0,
                vars: [0; 8],
            };
            let t = Instant::now();
            let r = $m::run(black_box(&code), black_box(&mut frame));
            (t.elapsed().as_secs_f64(), r)
        }
    };
}
timer!(time_hinted_a, hinted_a);
timer!(time_hinted_b, hinted_b);
timer!(time_plain_a, plain_a);
timer!(time_plain_b, plain_b);

/// One timed run: seconds and the interpreter's result.
type Timer = fn(i64) -> (f64, i64);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--callgrind") => callgrind::report(&args[1..]),
        Some("--run") => callgrind::run_one(&args[1..]),
        _ => timing(&args),
    }
}

/// The timing mode: all four copies side by side, rotated, medians and ratios.
fn timing(args: &[String]) {
    let n: i64 = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000);
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(15);
    if cfg!(debug_assertions) {
        println!("note: debug build; run with --release for meaningful figures");
    }
    // What is measured is the interpreter with its hints, JIT off.
    hinted_a::run::with_driver(|d| d.set_params("off").unwrap());
    hinted_b::run::with_driver(|d| d.set_params("off").unwrap());
    let runners: [(&str, Timer); 4] = [
        ("hinted_a", time_hinted_a),
        ("hinted_b", time_hinted_b),
        ("plain_a", time_plain_a),
        ("plain_b", time_plain_b),
    ];
    // Warm up all copies, and check they compute the same thing.
    let expected = time_plain_a(n / 10).1;
    for (name, f) in runners {
        assert_eq!(f(n / 10).1, expected, "{name} disagrees");
    }
    let full = time_plain_a(n).1;
    let mut times: [Vec<f64>; 4] = Default::default();
    let mut ratios = Vec::new();
    for round in 0..rounds {
        // Rotate the order so drift in machine load hits every copy equally.
        let mut t = [0.0; 4];
        for k in 0..4 {
            let i = (k + round) % 4;
            let (secs, r) = runners[i].1(n);
            assert_eq!(r, full, "{} disagrees", runners[i].0);
            t[i] = secs;
            times[i].push(secs);
        }
        ratios.push((t[0] + t[1]) / (t[2] + t[3]));
    }
    let med: Vec<f64> = times.iter().map(|v| median(v.clone())).collect();
    let mr = median(ratios);
    println!("interpreter loop of {n} iterations (result {full}), {rounds} rounds");
    for (k, (name, _)) in runners.iter().enumerate() {
        println!("  {name:<9} median {:.1} ms", med[k] * 1e3);
    }
    println!("  noise floor (same code, other placement): hinted_a/hinted_b {:.4}, plain_a/plain_b {:.4}", med[0] / med[1], med[2] / med[3]);
    println!(
        "  ratio hinted/plain, mean of both placements: median {mr:.4} ({:+.2}%)",
        (mr - 1.0) * 100.0
    );
    let best = med[0].min(med[1]) / med[2].min(med[3]);
    println!(
        "  ratio hinted/plain, best placement of each:  {best:.4} ({:+.2}%)",
        (best - 1.0) * 100.0
    );
}

/// The deterministic mode: instruction counts under callgrind instead of times.
///
/// `--callgrind [n]` runs this same executable under `valgrind --tool=callgrind` once per
/// variant and size (`--run VARIANT SIZE`), reads the total instruction count (`Ir`) of each
/// run from callgrind's output file, and prints the instructions one iteration of the guest loop
/// costs: `(I(2n) - I(n)) / n`, which cancels everything that does not depend on the number of
/// iterations (process start-up, building the program, creating the JIT driver). Instruction
/// counts do not depend on where the linker placed the code, and they repeat exactly from run to
/// run, so a difference of a fraction of a percent is real. They are not times: an instruction
/// that misses the cache counts as one. The output files stay in the directory printed, for
/// `callgrind_annotate` (build with `CARGO_PROFILE_RELEASE_DEBUG=line-tables-only` to get
/// per-line figures).
mod callgrind {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The variants: the plain interpreter, the hinted one with the JIT turned off
    /// (`set_params("off")`, the same as `METAJIT_PARAMS=off`), and
    /// the hinted one with the JIT on but the loop never reaching the threshold (every
    /// `can_enter_jit!` counts).
    const VARIANTS: [(&str, &str); 3] = [
        ("plain", "plain (hints compiled out)"),
        ("hinted-off", "hinted, JIT off"),
        ("hinted-cold", "hinted, JIT on, loop cold"),
    ];

    /// `--run VARIANT N`: one run of one variant, its result on standard output.
    pub fn run_one(args: &[String]) {
        let (Some(variant), Some(n)) = (args.first(), args.get(1).and_then(|s| s.parse().ok()))
        else {
            panic!("usage: hint_overhead --run VARIANT ITERATIONS");
        };
        let r = match variant.as_str() {
            "plain" => super::time_plain_a(n).1,
            "hinted-off" => {
                super::hinted_a::run::with_driver(|d| d.set_params("off")).unwrap();
                super::time_hinted_a(n).1
            }
            "hinted-cold" => {
                super::hinted_a::run::with_driver(|d| d.set_params("threshold=4294967295"))
                    .unwrap();
                let r = super::time_hinted_a(n).1;
                let stats = super::hinted_a::run::with_driver(|d| d.stats());
                assert_eq!(stats.loops(), 0, "the loop was meant to stay cold");
                r
            }
            v => panic!("unknown variant `{v}`"),
        };
        println!("{r}");
    }

    /// Runs `variant` with `n` iterations under callgrind: the result it printed and its total
    /// instruction count.
    fn measure(dir: &Path, variant: &str, n: i64) -> Result<(String, u64), String> {
        let out = dir.join(format!("callgrind.{variant}.{n}"));
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let o = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(exe)
            .args(["--run", variant, &n.to_string()])
            .env_remove("METAJIT_PARAMS")
            .env_remove("METAJIT_LOG")
            .output()
            .map_err(|e| format!("cannot run valgrind ({e}); is it installed?"))?;
        if !o.status.success() {
            return Err(format!(
                "valgrind on `{variant}` failed: {}",
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        let total = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("summary:")
                    .or_else(|| l.strip_prefix("totals:"))
            })
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .ok_or_else(|| format!("{}: no instruction total", out.display()))?;
        Ok((String::from_utf8_lossy(&o.stdout).trim().to_string(), total))
    }

    /// `--callgrind [n]`: measures every variant at `n` and `2n` iterations and prints the
    /// instructions per iteration and the ratios to the plain interpreter.
    pub fn report(args: &[String]) {
        let n: i64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(200_000);
        if cfg!(debug_assertions) {
            println!("note: debug build; run with --release for meaningful figures");
        }
        let dir: PathBuf = std::env::temp_dir().join("hint_overhead");
        std::fs::create_dir_all(&dir).expect("cannot create the output directory");
        let mut per_iter = Vec::new();
        let mut result = None;
        for (variant, _) in VARIANTS {
            let mut counts = [0u64; 2];
            for (k, size) in [n, 2 * n].into_iter().enumerate() {
                let (r, total) = measure(&dir, variant, size).unwrap_or_else(|e| {
                    eprintln!("hint_overhead: {e}");
                    std::process::exit(1)
                });
                counts[k] = total;
                if k == 1 {
                    // Every variant must compute the same thing.
                    assert_eq!(*result.get_or_insert(r.clone()), r, "{variant} disagrees");
                }
            }
            per_iter.push((counts[1] - counts[0]) as f64 / n as f64);
        }
        println!(
            "instructions per iteration of the guest loop (callgrind Ir, (I(2n) - I(n)) / n, \
             n = {n}):"
        );
        for ((_, label), ins) in VARIANTS.iter().zip(&per_iter) {
            let ratio = ins / per_iter[0];
            println!(
                "  {label:<28} {ins:>9.2}   ratio {ratio:.4} ({:+.2}%)",
                (ratio - 1.0) * 100.0
            );
        }
        println!(
            "callgrind output: {}/callgrind.VARIANT.{} (callgrind_annotate FILE)",
            dir.display(),
            2 * n
        );
    }
}
