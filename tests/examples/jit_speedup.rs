//! JIT on vs off on one hot guest loop (the book's example interpreter), measured side by side
//! in one run: `cargo run --release -p meta-jit-tests --example jit_speedup [n]`.

use std::time::Instant;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    AddIfBelow(i64),
    Dec,
    JumpIfNonZero(u32),
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout)]
pub struct State {
    pub acc: i64,
    pub n: i64,
}

#[jit::interpreter(greens(pc, code), reds(s))]
pub fn run(code: &Code, s: &mut State) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Op::AddIfBelow(limit) => {
                if s.n < limit {
                    s.acc = s.acc.wrapping_add(s.n);
                } else {
                    s.acc += 1;
                }
            }
            Op::Dec => s.n -= 1,
            Op::JumpIfNonZero(target) => {
                if s.n != 0 {
                    pc = target as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Halt => return s.acc,
        }
        pc += 1;
    }
}

fn time(params: &str, n: i64) -> (i64, f64) {
    run::with_driver(|d| {
        d.reset();
        d.set_params(params).unwrap()
    });
    let code = Code {
        ops: vec![
            Op::AddIfBelow(n / 2),
            Op::Dec,
            Op::JumpIfNonZero(0),
            Op::Halt,
        ],
    };
    let mut s = State { acc: 0, n };
    let t = Instant::now();
    let r = run(&code, &mut s);
    (r, t.elapsed().as_secs_f64())
}

fn main() {
    let n: i64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000_000);
    // A second argument adds JIT parameters, e.g. `enable_opts=all`.
    let on_params = format!("on,{}", std::env::args().nth(2).unwrap_or_default());
    let mut ratios = Vec::new();
    for _ in 0..5 {
        let (a, off) = time("off", n);
        let (b, on) = time(&on_params, n);
        assert_eq!(a, b);
        ratios.push(off / on);
        println!(
            "off {:.1} ms, on {:.1} ms, speedup {:.2}x",
            off * 1e3,
            on * 1e3,
            off / on
        );
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let s = run::with_driver(|d| d.stats());
    println!("median speedup {:.2}x; {}", ratios[2], s.summary());
}
