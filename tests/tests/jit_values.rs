//! Enums stored by value, end to end: a register VM whose register file is a `Vec` of a
//! `#[repr(C, u8)]` enum and whose instructions write whole values (`regs[a] = Value::Int(x)`,
//! `regs[a] = regs[b]`, `regs[a] = Value::Nil`) runs the same with the JIT on and off, and its
//! counting loop keeps no store of a tag the heap cache already knows, nor any residual call
//! (before issue 16's part 6 such writes went through a `#[dont_look_inside]` helper).

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::warm::{Stats, TraceKind};

/// A register.
#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Value {
    Int(i64),
    Dbl(f64),
    Nil,
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Insn {
    /// `r[a] = Int(imm)`
    Li(u8, i64),
    /// `r[a] = Dbl(imm)`
    LiF(u8, f64),
    /// `r[a] = r[b] + r[c]`: ints wrap; a float operand makes a float; `Nil` makes `Nil`
    Add(u8, u8, u8),
    /// `r[a] = r[b]`
    Mov(u8, u8),
    /// `r[a] = Nil`
    Wipe(u8),
    /// jump to `t` if `r[a] < r[b]` (ints)
    Jlt(u8, u8, u32),
    /// stop; the result is `r[0]`'s int, or -1
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Insn>,
}

#[derive(JitLayout, Debug, PartialEq)]
pub struct Vm {
    pub regs: Vec<Value>,
}

#[jit::interpreter(greens(pc, code), reds(vm))]
pub fn run(code: &Code, vm: &mut Vm) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Insn::Li(a, imm) => vm.regs[a as usize] = Value::Int(imm),
            Insn::LiF(a, imm) => vm.regs[a as usize] = Value::Dbl(imm),
            Insn::Add(a, b, c) => {
                vm.regs[a as usize] = match (vm.regs[b as usize], vm.regs[c as usize]) {
                    (Value::Int(x), Value::Int(y)) => Value::Int(x.wrapping_add(y)),
                    (Value::Dbl(x), Value::Dbl(y)) => Value::Dbl(x + y),
                    (Value::Int(x), Value::Dbl(y)) => Value::Dbl(x as f64 + y),
                    (Value::Dbl(x), Value::Int(y)) => Value::Dbl(x + y as f64),
                    _ => Value::Nil,
                };
            }
            Insn::Mov(a, b) => vm.regs[a as usize] = vm.regs[b as usize],
            Insn::Wipe(a) => vm.regs[a as usize] = Value::Nil,
            Insn::Jlt(a, b, t) => {
                if let (Value::Int(x), Value::Int(y)) = (vm.regs[a as usize], vm.regs[b as usize]) {
                    if x < y {
                        pc = t as usize;
                        can_enter_jit!();
                        continue;
                    }
                }
            }
            Insn::Halt => {
                return match vm.regs[0] {
                    Value::Int(x) => x,
                    _ => -1,
                };
            }
        }
        pc += 1;
    }
}

const PARAMS: &str = "on,threshold=3,trace_eagerness=2,keep_optimized=1";

/// Runs `ops` with the JIT off, then on, checks that both end in the same state, and returns
/// what the driver did.
fn go(ops: &[Insn], regs: usize) -> Stats {
    let code = Code { ops: ops.to_vec() };
    let fresh = || Vm {
        regs: vec![Value::Nil; regs],
    };
    let mut vm_off = fresh();
    run::with_driver(|d| {
        d.reset();
        d.set_params("off").unwrap();
    });
    let off = run(&code, &mut vm_off);
    let mut vm_on = fresh();
    run::with_driver(|d| {
        d.reset();
        d.set_params(PARAMS).unwrap();
    });
    let on = run(&code, &mut vm_on);
    assert_eq!((on, &vm_on), (off, &vm_off));
    run::with_driver(|d| d.with_stats(|s| s.clone()))
}

/// The only loop's optimized body (after its label), one op per line.
fn body(s: &Stats) -> String {
    let loops: Vec<_> = s
        .traces
        .iter()
        .filter(|t| t.kind == TraceKind::Loop)
        .collect();
    assert_eq!(loops.len(), 1, "one loop expected");
    let text = loops[0].optimized().to_string();
    let at = text.find("label(").expect("a peeled loop has a label");
    text[at..].lines().skip(1).collect::<Vec<_>>().join("\n")
}

fn count(body: &str, what: &str) -> usize {
    body.lines().filter(|l| l.contains(what)).count()
}

/// `r0 = 0; r1 = 1000; r2 = 1; r3 = 0.5; r4 = 0.25; do { r0 += r2; r3 += r4; r5 = r0;
/// r6 = Nil } while r0 < r1`.
const LOOP: &[Insn] = &[
    Insn::Li(0, 0),
    Insn::Li(1, 1000),
    Insn::Li(2, 1),
    Insn::LiF(3, 0.5),
    Insn::LiF(4, 0.25),
    Insn::Add(0, 0, 2),
    Insn::Add(3, 3, 4),
    Insn::Mov(5, 0),
    Insn::Wipe(6),
    Insn::Jlt(0, 1, 5),
    Insn::Halt,
];

#[test]
fn whole_values_stored_by_traced_code() {
    let b = body(&go(LOOP, 8));
    // No residual call writes a register: every write is traced.
    assert_eq!(count(&b, "call"), 0, "{b}");
    // The heap cache knows every register's tag in the loop: the tags checked by `match` are
    // the ones the previous iteration stored, and a store of the tag a register already holds
    // is dropped (`r6 = Nil` stores nothing at all after the first iteration).
    assert_eq!(count(&b, "Value_tag"), 0, "{b}");
    assert_eq!(count(&b, "getfield"), 0, "{b}");
    // One payload store per register written with a number: `r0`, `r3` and the copy `r5`.
    assert_eq!(count(&b, "setfield"), 3, "{b}");
    // The loop's own condition.
    assert_eq!(count(&b, "guard_"), 1, "{b}");
}

/// A loop in which `r3` turns from an int into a float half way (`r3 = 0.5` runs once
/// `r0 >= 500`): a guard on `r3`'s tag fails in the compiled loop, and the run must end as
/// the interpreter's does.
const FLIP: &[Insn] = &[
    Insn::Li(0, 0),
    Insn::Li(1, 1000),
    Insn::Li(2, 1),
    Insn::Li(7, 500),
    Insn::Li(3, 0),
    Insn::Add(0, 0, 2),
    Insn::Jlt(0, 7, 8),
    Insn::LiF(3, 0.5),
    Insn::Add(3, 3, 2),
    Insn::Mov(5, 3),
    Insn::Add(6, 6, 2),
    Insn::Jlt(0, 1, 5),
    Insn::Halt,
];

#[test]
fn a_register_changing_type_deoptimizes_correctly() {
    let s = go(FLIP, 8);
    assert!(
        s.traces.iter().any(|t| t.kind == TraceKind::Loop),
        "the loop was compiled"
    );
    assert!(s.guard_failures > 0, "a guard of the loop failed: {s:?}");
}
