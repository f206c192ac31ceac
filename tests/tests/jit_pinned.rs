//! Pinned greens: when every reference green is a `&T` parameter the portal never rebinds, the
//! driver checks what its traces folded from the greens once per portal call, not at every
//! entry into compiled code. The same interpreter written with `mut code` is not pinned and
//! checks at every entry. Both agree with the interpreter.

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    /// `r[a] = n`
    Set(u8, i64),
    /// `r[a] += r[b]` (wrapping)
    Add(u8, u8),
    /// `r[a] -= 1`; back to `t` while it is not 0
    DecJnz(u8, u32),
    /// The result is `r[2]`.
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout)]
pub struct Regs {
    pub r: [i64; 4],
}

/// The same portal three times: `$($m)*` is empty (pinned) or `mut` (not pinned), and the
/// program's type `&Code` or `&'static Code` (static greens).
macro_rules! portal {
    ($name:ident, $($m:tt)*) => {
        portal!(@ty [&Code], $name, $($m)*);
    };
    (@ty [$($ty:tt)*], $name:ident, $($m:tt)*) => {
        #[jit::interpreter(greens(pc, code), reds(regs))]
        pub fn $name($($m)* code: $($ty)*, regs: &mut Regs) -> i64 {
            let mut pc: usize = 0;
            loop {
                jit_merge_point!();
                match code.ops[pc] {
                    Op::Set(a, n) => regs.r[a as usize] = n,
                    Op::Add(a, b) => {
                        regs.r[a as usize] = regs.r[a as usize].wrapping_add(regs.r[b as usize])
                    }
                    Op::DecJnz(a, t) => {
                        regs.r[a as usize] -= 1;
                        if regs.r[a as usize] != 0 {
                            pc = t as usize;
                            can_enter_jit!();
                            continue;
                        }
                    }
                    Op::Halt => return regs.r[2],
                }
                pc += 1;
            }
        }
    };
}

portal!(pinned_run,);
portal!(unpinned_run, mut);
portal!(@ty [&'static Code], static_run,);

/// An outer loop of `outer` turns around an inner loop of 20: the inner loop's exit guard
/// fails once per outer turn and, without bridges, the interpreter enters the compiled outer
/// loop again each time.
fn program(outer: i64) -> Code {
    use Op::*;
    Code {
        ops: vec![
            Set(0, outer),
            Set(1, 20),
            Add(2, 1),
            DecJnz(1, 2),
            DecJnz(0, 1),
            Halt,
        ],
    }
}

const PARAMS: &str = "on,threshold=5,trace_eagerness=1000000";

fn expected(outer: i64) -> i64 {
    outer * (20 * 21 / 2)
}

#[test]
fn the_portal_macro_tells_pinned_greens() {
    assert!(pinned_run::with_driver(|d| d.greens_pinned()));
    assert!(!unpinned_run::with_driver(|d| d.greens_pinned()));
    // `&'static` greens: their objects are never freed (see `JitDriver::with_static_greens`).
    assert!(static_run::with_driver(|d| d.greens_static()));
    assert!(!pinned_run::with_driver(|d| d.greens_static()));
}

#[test]
fn static_greens_run_as_the_interpreter_does() {
    static_run::with_driver(|d| d.set_params(PARAMS).unwrap());
    let code: &'static Code = Box::leak(Box::new(program(300)));
    assert_eq!(static_run(code, &mut Regs { r: [0; 4] }), expected(300));
    let s = static_run::with_driver(|d| d.stats());
    assert!(s.entries >= 250, "{}", s.summary());
}

#[test]
fn pinned_greens_are_checked_once_per_portal_call() {
    pinned_run::with_driver(|d| d.set_params(PARAMS).unwrap());
    let code = program(300);
    assert_eq!(pinned_run(&code, &mut Regs { r: [0; 4] }), expected(300));
    let s = pinned_run::with_driver(|d| d.stats());
    assert!(s.entries >= 250, "{}", s.summary());
    // The traces were recorded in this call: their facts are not checked again in it.
    assert_eq!(s.fact_checks, 0, "{}", s.summary());
    // A second call checks each trace once (another program could live at `code`'s address
    // now).
    assert_eq!(pinned_run(&code, &mut Regs { r: [0; 4] }), expected(300));
    let s = pinned_run::with_driver(|d| d.stats());
    assert!(s.entries >= 500, "{}", s.summary());
    assert!(
        (1..=s.traces.len()).contains(&s.fact_checks),
        "{}",
        s.summary()
    );
}

#[test]
fn greens_that_are_not_pinned_are_checked_at_every_entry() {
    unpinned_run::with_driver(|d| d.set_params(PARAMS).unwrap());
    let code = program(300);
    assert_eq!(unpinned_run(&code, &mut Regs { r: [0; 4] }), expected(300));
    let s = unpinned_run::with_driver(|d| d.stats());
    assert!(s.entries >= 250, "{}", s.summary());
    assert!(s.fact_checks >= s.entries, "{}", s.summary());
}
