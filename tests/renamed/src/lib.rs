//! An interpreter whose crate reaches meta-jit as `jit` (a renamed dependency), not as
//! `meta_jit`: every hint macro takes `crate = jit`, so the code it generates names `jit::...`.
//! This crate compiling is half the test; the tests below run the interpreter with the JIT.

use jit::hints::*;

/// The program: `ops[pc]` is 0 (add `n` to the sum), 1 (decrement `n`) or anything else (loop
/// while `n > 0`, else stop).
#[derive(JitLayout)]
#[jit(crate = jit)]
pub struct Code {
    /// The ops.
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

/// One op.
#[derive(Clone, Copy, PartialEq, Eq, Debug, JitLayout)]
#[jit(scalar, crate = jit)]
#[repr(u8)]
pub enum Op {
    /// `acc += step(n)`.
    Add,
    /// `n -= 1`.
    Dec,
    /// Loop while `n > 0`.
    Loop,
}

/// A counter the interpreter updates through a method.
#[derive(JitLayout)]
#[jit(crate = jit)]
pub struct Counter {
    /// How many `Add`s ran.
    pub adds: i64,
}

#[methods(crate = jit)]
impl Counter {
    #[look_inside(crate = jit)]
    fn bump(&mut self) {
        self.adds += 1;
    }
}

/// What an `Add` adds.
#[elidable(crate = jit)]
fn step(n: i64) -> i64 {
    n * 2
}

/// Where the interpreter is, for the JIT log.
fn here(pc: usize, code: &Code) -> String {
    format!("pc {pc} {:?}", code.ops[pc])
}

/// The portal.
#[interpreter(greens(pc, code), reds(acc, n, counter), location = here, crate = jit)]
pub fn run(code: &Code, mut acc: i64, mut n: i64, counter: &mut Counter) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Op::Add => {
                acc += step(n);
                counter.bump();
            }
            Op::Dec => n -= 1,
            Op::Loop => {
                if n > 0 {
                    pc = 0;
                    can_enter_jit!();
                    continue;
                }
                return acc;
            }
        }
        pc += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_renamed_crate_jits() {
        run::with_driver(|d| d.set_params("threshold=5").unwrap());
        let code = Code {
            ops: vec![Op::Add, Op::Dec, Op::Loop],
        };
        let mut counter = Counter { adds: 0 };
        assert_eq!(run(&code, 0, 1000, &mut counter), 1000 * 1001);
        assert_eq!(counter.adds, 1000);
        let stats = run::with_driver(|d| d.stats());
        assert_eq!(stats.loops(), 1, "{}", stats.summary());
        assert!(stats.entries >= 1);
        // The jitcode agrees with the native function.
        let mut counter = Counter { adds: 0 };
        assert_eq!(run::run_jitcode(&code, 0, 10, &mut counter), 110);
    }
}
