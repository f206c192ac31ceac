//! A bridge that starts with its guard's pending stores into a virtualizable frame of enum
//! values. The bridge's trace declares the descriptors of those stores under the parent's
//! names; the recorder then names the descriptors it meets in its own order of first use, and
//! a name the parent gave another descriptor (the `f64` payload, `payload_8`, where the bridge
//! first reads the `i64` payload) must not be taken as this one. It was: the bridge used the
//! float's descriptor for an integer and did not compile (the backend's checks said `a
//! pending store needs a ref base and a value of its kind` here, `getfield_i: the field holds
//! Float` in Lua's mandelbrot with its stack virtualizable), and every failure of its guard
//! went back to the interpreter. Two descriptors of one name and kind but other flags (an
//! immutable field, another alias class) would have compiled, wrongly.

use std::panic::{catch_unwind, AssertUnwindSafe};

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::testing::panic_message;
use meta_jit::warm::TraceKind;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Val {
    I(i64),
    F(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = F(float(r[b]) + imm / 2)`
    FAddHalf(u8, u8, i64),
    /// `r[a] = I(int(r[b]) + imm)`
    IAdd(u8, u8, i64),
    /// skip the next instruction if `int(r[a]) % m == 0`
    SkipIfMultiple(u8, i64),
    /// jump to `t` if `int(r[a]) < imm` (a loop's back edge)
    Jlt(u8, i64, u32),
    /// Stop.
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// The frame: a register file of tagged values, kept in machine registers by compiled code.
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Frame {
    #[jit(virtualizable)]
    pub regs: Vec<Val>,
}

#[look_inside]
fn int(v: &Val) -> i64 {
    match *v {
        Val::I(x) => x,
        Val::F(_) => -1,
    }
}

#[look_inside]
fn float(v: &Val) -> f64 {
    match *v {
        Val::F(x) => x,
        Val::I(_) => 0.0,
    }
}

#[jit::interpreter(greens(pc, code), reds(frame))]
pub fn run(code: &Code, frame: &mut Frame) {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::FAddHalf(a, b, imm) => {
                let x = float(&frame.regs[b as usize]) + imm as f64 / 2.0;
                frame.regs[a as usize] = Val::F(x);
            }
            Ins::IAdd(a, b, imm) => {
                let x = int(&frame.regs[b as usize]).wrapping_add(imm);
                frame.regs[a as usize] = Val::I(x);
            }
            Ins::SkipIfMultiple(a, m) => {
                if int(&frame.regs[a as usize]) % m == 0 {
                    pc += 1;
                }
            }
            Ins::Jlt(a, imm, t) => {
                if int(&frame.regs[a as usize]) < imm {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return,
        }
        pc += 1;
    }
}

/// The loop: the float register first (the parent names the `f64` payload first), then the
/// counter; every fifth iteration skips an instruction (the guard the bridge grows from), and
/// the bridge first reads an integer.
const PROGRAM: &[Ins] = &[
    Ins::IAdd(0, 0, 0),
    Ins::FAddHalf(1, 1, 1),
    Ins::IAdd(0, 0, 1),
    Ins::SkipIfMultiple(0, 5),
    Ins::FAddHalf(1, 1, 3),
    Ins::IAdd(2, 0, 7),
    Ins::Jlt(0, 2000, 1),
    Ins::Halt,
];

fn go(params: Option<&str>) -> Result<Frame, String> {
    let code = Code {
        ops: PROGRAM.to_vec(),
    };
    let mut frame = Frame {
        regs: vec![Val::I(0), Val::F(0.0), Val::I(0)],
    };
    catch_unwind(AssertUnwindSafe(|| {
        run::with_driver(|d| {
            d.reset();
            match params {
                None => d.set_params("off").unwrap(),
                Some(p) => {
                    d.set_params("on").unwrap();
                    d.set_params(p).unwrap();
                }
            }
        });
        run(&code, &mut frame);
    }))
    .map_err(|e| panic_message(&*e))?;
    Ok(frame)
}

#[test]
fn a_bridge_after_pending_stores_of_another_payload_type_compiles() {
    let off = go(None);
    let on = go(Some("threshold=3,trace_eagerness=2"));
    assert_eq!(on, off);
    let s = run::with_driver(|d| d.with_stats(|s| s.clone()));
    assert!(s.aborts.is_empty(), "aborts: {:?}", s.aborts);
    let bridges = s
        .traces
        .iter()
        .filter(|t| t.kind == TraceKind::Bridge)
        .count();
    assert!(bridges >= 1, "no bridge: {:?}", s.traces.len());
    // Most failures of the guard run the bridge: far fewer than one per fifth iteration.
    assert!(
        s.guard_failures < 100,
        "{} guard failures",
        s.guard_failures
    );
}
