//! What the hints cost the native interpreter (JIT off): the same small bytecode interpreter,
//! compiled once with meta-jit's hints and once with the hints compiled out, run side by side in
//! one process; prints the ratio of their times.
//!
//! `cargo run --release -p meta-jit --example hint_overhead [iterations] [rounds]`
//!
//! The native code of the two `run` functions is the same instruction for instruction (the
//! policy attributes leave the function untouched and the hint macros expand to nothing in
//! release builds), so what the ratio measures beyond noise is where the linker placed each copy:
//! that placement effect alone can be 10-20% on a small hot loop. Each side is therefore compiled
//! twice (two modules), the ratio of two copies of the same code is printed as the noise floor,
//! and the ratio is given both for the mean of the two placements and for the best one. Building
//! with `RUSTFLAGS="-C llvm-args=-align-all-functions=6 -C llvm-args=-align-all-nofallthru-blocks=5"`
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
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000);
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
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
