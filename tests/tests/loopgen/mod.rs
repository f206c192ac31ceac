//! Random loop bodies for the tests of one construct (tuples, sums in memory): a body of
//! instructions the test picks, a turn count and a memory size, and the property that a run
//! agrees with the JIT off, on and on jitcode alone.

use std::fmt::Debug;

use quickcheck::{Arbitrary, Gen, TestResult};

/// An instruction a test's VM runs in a loop body.
pub trait Pick: Clone + Debug + 'static {
    /// A random instruction.
    fn pick(g: &mut Gen) -> Self;
}

/// A random loop body, its turn count and the size of the memory it works on.
#[derive(Clone, Debug)]
pub struct Program<I> {
    pub body: Vec<I>,
    pub n: i64,
    pub len: usize,
}

impl<I: Pick> Arbitrary for Program<I> {
    fn arbitrary(g: &mut Gen) -> Program<I> {
        let size = 1 + usize::arbitrary(g) % 8;
        Program {
            body: (0..size).map(|_| I::pick(g)).collect(),
            n: 20 + i64::from(u16::arbitrary(g) % 400),
            len: 1 + usize::arbitrary(g) % 6,
        }
    }
}

/// A small constant operand: 1 to 9.
pub fn small(g: &mut Gen) -> i64 {
    1 + i64::from(u8::arbitrary(g) % 9)
}

/// The verdict on `p`: `go` (given the mode `"off"`, `"on"` or `"jitcode"`) gives the same
/// result in the three modes.
pub fn agree<I: Debug, T: PartialEq + Debug>(p: &Program<I>, go: impl Fn(&str) -> T) -> TestResult {
    let off = go("off");
    let on = go("on");
    let jc = go("jitcode");
    meta_jit::testing::verdict(if on != off {
        Err(format!("{p:?}: JIT on {on:?}, off {off:?}"))
    } else if jc != off {
        Err(format!("{p:?}: jitcode {jc:?}, off {off:?}"))
    } else {
        Ok(())
    })
}
