//! A reference bound from a constant place reads constant memory: `match &code.lits[k] {
//! Lit::Whole(x) => *x, .. }` on an immutable array reached from the greens folds `*x` into a
//! constant, as a read of `code.lits[k]` itself would. The binding `x` is a variable holding the
//! payload's address; it used to forget that the place it points to is immutable, and the
//! compiled loop loaded every literal from memory at every iteration (Lua's constants of a
//! function prototype, read by `match &proto.consts[k]`, were such loads).
//!
//! Within one function only: a reference passed to another function is a parameter there, and
//! that function's jitcode, made once for every caller, cannot know the place is immutable
//! (immutability belongs to the array the item was reached through, not to the item's type).

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Lit {
    Whole(i64),
    Frac(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Step {
    /// `acc += lits[k]` (a fraction truncated).
    AddLit(u32),
    /// `acc *= lits[k]` through a named reference (`let l = &lits[k]`).
    MulLit(u32),
    /// `i += 1`; back to `to` while `i < n`.
    LoopLt(i64, u32),
    Halt,
}

#[derive(JitLayout)]
pub struct Listing {
    #[jit(immutable, immutable_items)]
    pub steps: Vec<Step>,
    #[jit(immutable, immutable_items)]
    pub lits: Vec<Lit>,
}

#[jit::interpreter(greens(pc, code), reds(i, acc))]
pub fn run(code: &Listing, mut i: i64, mut acc: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.steps[pc] {
            Step::AddLit(k) => match &code.lits[k as usize] {
                Lit::Whole(x) => acc = acc.wrapping_add(*x),
                Lit::Frac(f) => acc = acc.wrapping_add(*f as i64),
            },
            Step::MulLit(k) => {
                let l = &code.lits[k as usize];
                let w = match l {
                    Lit::Whole(x) => *x,
                    Lit::Frac(f) => *f as i64,
                };
                acc = acc.wrapping_mul(w) & 0xffff_ffff;
            }
            Step::LoopLt(n, to) => {
                i += 1;
                if i < n {
                    pc = to as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Step::Halt => return acc,
        }
        pc += 1;
    }
}

fn go(mode: &str) -> i64 {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,keep_optimized=1").unwrap();
        if mode != "jitcode" {
            d.set_params(mode).unwrap();
        }
    });
    let code = Listing {
        steps: vec![
            Step::AddLit(0),
            Step::MulLit(1),
            Step::AddLit(2),
            Step::MulLit(2),
            Step::LoopLt(500, 0),
            Step::Halt,
        ],
        lits: vec![Lit::Whole(7), Lit::Frac(3.75), Lit::Whole(-2)],
    };
    if mode == "jitcode" {
        run::run_jitcode(&code, 0, 1)
    } else {
        run(&code, 0, 1)
    }
}

#[test]
fn literals_read_through_bound_references_fold() {
    let off = go("off");
    assert_eq!(go("on"), off);
    let s = run::with_driver(|d| d.stats());
    assert!(s.loops() >= 1, "{}", s.summary());
    // Both reds stay in registers and every literal is a constant: the loop reads no memory.
    let lp = s.traces[0].optimized().to_string();
    assert!(!lp.contains("getfield"), "{lp}");
    assert!(!lp.contains("getarrayitem"), "{lp}");
    assert_eq!(go("jitcode"), off);
}
