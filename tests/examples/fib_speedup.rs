//! Recursive fib on a register VM whose guest calls continue in the dispatch loop (the VM of
//! `tests/tests/jit_frames.rs`, with a deeper frame stack and a call instruction that is a
//! loop header, as RPython interpreters mark function entries): JIT on vs off, measured side by
//! side in one run: `cargo run --release -p meta-jit-tests --example fib_speedup [n]`.

use std::time::Instant;

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = r[b] + r[c]` (wrapping)
    Add(u8, u8, u8),
    /// `r[a] = r[b] + imm` (wrapping)
    AddI(u8, u8, i64),
    /// jump to `t` if `r[a] < imm`
    BrLt(u8, i64, u32),
    /// Calls the function at `t` with `r[arg]` as its `r0`; its result goes to `r[dst]`.
    Invoke { t: u32, arg: u8, dst: u8 },
    /// Returns `r[a]` to the caller, or stops with it in the outermost frame.
    Leave(u8),
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// A caller's return point.
#[derive(Clone, Copy, Debug, PartialEq, Default, JitLayout)]
#[repr(C)]
pub struct Saved {
    pub pc: u32,
    pub dst: u8,
}

/// Frames of the guest stack.
pub const DEPTH: usize = 64;
/// Registers per frame.
pub const WINDOW: usize = 4;

#[derive(JitLayout)]
pub struct Machine {
    #[jit(virtualizable)]
    pub regs: [i64; DEPTH * WINDOW],
    #[jit(virtualizable)]
    pub stack: [Saved; DEPTH],
    #[jit(virtualizable)]
    pub depth: u64,
}

#[jit::interpreter(greens(pc, code), reds(m))]
pub fn run(code: &Code, m: &mut Machine) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        let base = (m.depth as usize % DEPTH) * WINDOW;
        match code.ops[pc] {
            Ins::Add(a, b, c) => {
                m.regs[base + a as usize % WINDOW] = m.regs[base + b as usize % WINDOW]
                    .wrapping_add(m.regs[base + c as usize % WINDOW])
            }
            Ins::AddI(a, b, imm) => {
                m.regs[base + a as usize % WINDOW] =
                    m.regs[base + b as usize % WINDOW].wrapping_add(imm)
            }
            Ins::BrLt(a, imm, t) => {
                if m.regs[base + a as usize % WINDOW] < imm {
                    pc = t as usize;
                    continue;
                }
            }
            Ins::Invoke { t, arg, dst } => {
                let d = m.depth as usize;
                if d + 1 < DEPTH {
                    let v = m.regs[base + arg as usize % WINDOW];
                    m.stack[d] = Saved {
                        pc: pc as u32 + 1,
                        dst,
                    };
                    m.depth = (d + 1) as u64;
                    m.regs[(base + WINDOW) % (DEPTH * WINDOW)] = v;
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
                panic!("guest stack overflow");
            }
            Ins::Leave(a) => {
                let v = m.regs[base + a as usize % WINDOW];
                let d = m.depth as usize;
                if d == 0 {
                    return v;
                }
                let s = m.stack[(d - 1) % DEPTH];
                m.depth = (d - 1) as u64;
                m.regs[(base + DEPTH * WINDOW - WINDOW) % (DEPTH * WINDOW)
                    + s.dst as usize % WINDOW] = v;
                pc = s.pc as usize;
                continue;
            }
        }
        pc += 1;
    }
}

/// fib(r0): the function at pc 1, called from pc 0.
fn program() -> Code {
    Code {
        ops: vec![
            // main: r1 = fib(r0); return r1
            Ins::Invoke {
                t: 3,
                arg: 0,
                dst: 1,
            },
            Ins::Leave(1),
            Ins::Leave(1),
            // fib (pc 3)
            Ins::BrLt(0, 2, 10),
            Ins::AddI(1, 0, -1),
            Ins::Invoke {
                t: 3,
                arg: 1,
                dst: 2,
            },
            Ins::AddI(1, 0, -2),
            Ins::Invoke {
                t: 3,
                arg: 1,
                dst: 3,
            },
            Ins::Add(2, 2, 3),
            Ins::Leave(2),
            // pc 10
            Ins::Leave(0),
        ],
    }
}

/// The result, the best time of 3 runs in seconds, and the driver's summary.
fn time(params: &str, n: i64) -> (i64, f64, String) {
    let code = program();
    let mut best = f64::MAX;
    let mut result = 0;
    for _ in 0..3 {
        run::with_driver(|d| {
            d.reset();
            d.set_params(params).unwrap();
        });
        let mut m = Box::new(Machine {
            regs: [0; DEPTH * WINDOW],
            stack: [Saved::default(); DEPTH],
            depth: 0,
        });
        m.regs[0] = n;
        let t = Instant::now();
        result = run(&code, &mut m);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (result, best, run::with_driver(|d| d.stats().summary()))
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .map_or(30, |a| a.parse().expect("a number"));
    let (off, t_off, _) = time("off", n);
    let (on, t_on, summary) = time("on", n);
    assert_eq!(on, off, "the JIT changed the result");
    println!("fib({n}) = {on}");
    println!(
        "JIT off {:.1} ms, JIT on {:.1} ms: {:.2}x faster",
        t_off * 1e3,
        t_on * 1e3,
        t_off / t_on
    );
    println!("JIT on: {summary}");
}
