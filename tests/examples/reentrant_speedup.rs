//! JIT on vs off when every guest call runs the portal again (a reentrant portal), measured
//! side by side in one run: `cargo run --release -p meta-jit-tests --example reentrant_speedup
//! [calls] [turns]`. Function 0 loops `calls` times and calls function 1 in every turn;
//! function 1 loops `turns` times. With the JIT on, function 0's loop is compiled code that
//! makes the call, and each call runs function 1's loop as compiled code too.

use std::time::Instant;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, JitLayout)]
#[repr(C, u8)]
pub enum Step {
    /// `acc = acc * 3 + k`
    Mix(i64),
    /// `acc += run(f, acc & 255)`, the portal run again for function `f`
    Sub(u8),
    /// `n -= 1`; back to `t` while `n` is not 0
    Back(u32),
    /// return `acc`
    Done,
}

#[derive(JitLayout)]
pub struct Program {
    #[jit(immutable, immutable_items)]
    pub funcs: Vec<Vec<Step>>,
    /// The turns of function 1's loop.
    pub turns: i64,
}

#[derive(JitLayout)]
pub struct Regs {
    pub acc: i64,
    pub n: i64,
}

/// A guest call: a native function that runs the portal again.
#[dont_look_inside]
pub fn call(prog: &Program, f: u64, arg: i64) -> i64 {
    let mut regs = Regs {
        acc: arg,
        n: prog.turns,
    };
    run(prog, f as usize, &mut regs)
}

#[jit::interpreter(greens(pc, f, prog), reds(regs))]
pub fn run(prog: &Program, f: usize, regs: &mut Regs) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match prog.funcs[f][pc] {
            Step::Mix(k) => regs.acc = regs.acc.wrapping_mul(3).wrapping_add(k),
            Step::Sub(g) => {
                let r = call(prog, g as u64, regs.acc & 255);
                regs.acc = regs.acc.wrapping_add(r);
            }
            Step::Back(t) => {
                regs.n -= 1;
                if regs.n != 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Step::Done => return regs.acc,
        }
        pc += 1;
    }
}

/// The result, the best time of 3 runs in seconds, and the driver's summary.
fn time(params: &str, prog: &Program, calls: i64) -> (i64, f64, String) {
    let mut best = f64::MAX;
    let mut result = 0;
    for _ in 0..3 {
        run::with_driver(|d| {
            d.reset();
            d.set_params(params).unwrap();
        });
        let t = Instant::now();
        result = run(prog, 0, &mut Regs { acc: 1, n: calls });
        best = best.min(t.elapsed().as_secs_f64());
    }
    (result, best, run::with_driver(|d| d.stats().summary()))
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<i64>().expect("a number"));
    let calls = args.next().unwrap_or(200_000);
    let turns = args.next().unwrap_or(20);
    let prog = Program {
        funcs: vec![
            vec![Step::Mix(5), Step::Sub(1), Step::Back(0), Step::Done],
            vec![Step::Mix(7), Step::Back(0), Step::Done],
        ],
        turns,
    };
    let (off, t_off, _) = time("off", &prog, calls);
    let (on, t_on, summary) = time("on", &prog, calls);
    assert_eq!(on, off, "the JIT changed the result");
    println!("{calls} calls of a {turns}-turn loop, each through the portal run again:");
    println!(
        "JIT off {:.1} ms, JIT on {:.1} ms: {:.2}x faster",
        t_off * 1e3,
        t_on * 1e3,
        t_off / t_on
    );
    println!("JIT on: {summary}");
}
