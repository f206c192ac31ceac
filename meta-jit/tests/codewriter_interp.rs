//! A small stack-machine interpreter with hints, run natively and in the jitcode-only mode on
//! generated programs: payload enums, nested patterns, methods, `Vec`/array/slice indexing,
//! field writes, and calls of every policy.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::testing::panic_message;
use quickcheck::{Arbitrary, Gen, TestResult};

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(u8)]
pub enum Operand {
    Imm(i64),
    Var(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    Push(Operand),
    Add,
    Sub,
    Mul,
    Dup,
    Swap,
    Pop,
    Store(u8),
    JumpIfZero { target: u32 },
    Jump { target: u32 },
    Square,
    Hash,
    Count,
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout)]
pub struct Frame {
    pub stack: [i64; 8],
    pub sp: usize,
    pub vars: [i64; 4],
    pub steps: u32,
}

#[jit::methods]
impl Frame {
    #[look_inside]
    fn push(&mut self, v: i64) {
        self.stack[self.sp] = v;
        self.sp += 1;
    }
    #[look_inside]
    fn pop(&mut self) -> i64 {
        self.sp -= 1;
        self.stack[self.sp]
    }
    #[dont_look_inside]
    fn depth(&self) -> usize {
        self.sp
    }
}

#[elidable]
fn square(x: i64) -> i64 {
    x.wrapping_mul(x)
}

#[elidable]
fn hash_helper(x: i64) -> i64 {
    (x ^ 0x5555).wrapping_mul(7) & 0xffff
}

#[look_inside]
fn hash(x: i64) -> i64 {
    let r = hash_helper(x);
    record_known_result!(r, hash_helper, x);
    r
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

#[dont_look_inside]
fn count_call(v: i64) -> i64 {
    CALLS.fetch_add(1, Ordering::Relaxed);
    v + 1
}

#[look_inside]
fn operand(frame: &Frame, o: &Operand) -> i64 {
    match o {
        Operand::Imm(v) => *v,
        Operand::Var(i) => frame.vars[*i as usize & 3],
    }
}

#[jit::interpreter(greens(pc, code), reds(frame))]
pub fn run(code: &Code, frame: &mut Frame) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        frame.steps += 1;
        if frame.steps > 500 {
            return -7;
        }
        match code.ops[pc] {
            Op::Push(Operand::Imm(v)) => frame.push(v),
            Op::Push(Operand::Var(i)) => {
                let v = frame.vars[i as usize % 4];
                frame.push(v)
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
            Op::Dup => {
                let a = frame.pop();
                frame.push(a);
                frame.push(a);
            }
            Op::Swap => {
                let b = frame.pop();
                let a = frame.pop();
                frame.push(b);
                frame.push(a);
            }
            Op::Pop => {
                frame.pop();
            }
            Op::Store(i) => {
                let v = frame.pop();
                frame.vars[(i % 4) as usize] = v;
            }
            Op::JumpIfZero { target } => {
                let v = frame.pop();
                if v == 0 {
                    pc = target as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Jump { target } => {
                pc = promote!(target) as usize;
                can_enter_jit!();
                continue;
            }
            Op::Square => {
                let a = frame.pop();
                frame.push(square(a));
            }
            Op::Hash => {
                let a = frame.pop();
                let h = hash(a);
                frame.push(h);
            }
            Op::Count => {
                let a = frame.pop();
                let d = frame.depth() as i64;
                frame.push(count_call(a) + d);
            }
            Op::Halt => {
                if frame.depth() == 0 {
                    return 0;
                }
                return frame.pop();
            }
        }
        pc += 1;
    }
}

/// Sums the stack through a slice (exercises `&[T]` parameters and `len`).
#[unroll_safe]
fn sum_slice(xs: &[i64], n: usize) -> i64 {
    let mut s = 0i64;
    let mut i = 0;
    while i < xs.len() && i < n {
        s = s.wrapping_add(xs[i]);
        i += 1;
    }
    s
}

#[look_inside]
fn first_operand(code: &Code) -> i64 {
    let op = &code.ops[0];
    match op {
        Op::Push(o) => operand_imm(o),
        _ => -1,
    }
}

#[look_inside]
fn operand_imm(o: &Operand) -> i64 {
    if let Operand::Imm(v) = o {
        *v
    } else {
        -2
    }
}

fn new_frame() -> Frame {
    Frame {
        stack: [0; 8],
        sp: 0,
        vars: [3, 5, 7, 11],
        steps: 0,
    }
}

#[derive(Clone, Debug)]
struct Program(Vec<Op>);

impl Arbitrary for Program {
    fn arbitrary(g: &mut Gen) -> Program {
        let n = usize::arbitrary(g) % 12 + 1;
        let mut ops = Vec::new();
        for _ in 0..n {
            let k = u8::arbitrary(g) % 14;
            let t = u32::arbitrary(g) % (n as u32 + 1);
            ops.push(match k {
                0 => Op::Push(Operand::Imm(i64::arbitrary(g) % 100)),
                1 => Op::Push(Operand::Var(u8::arbitrary(g))),
                2 => Op::Add,
                3 => Op::Sub,
                4 => Op::Mul,
                5 => Op::Dup,
                6 => Op::Swap,
                7 => Op::Pop,
                8 => Op::Store(u8::arbitrary(g)),
                9 => Op::JumpIfZero { target: t },
                10 => Op::Jump { target: t },
                11 => Op::Square,
                12 => Op::Hash,
                _ => Op::Count,
            });
        }
        ops.push(Op::Halt);
        Program(ops)
    }
}

fn outcome(
    f: impl FnOnce() -> (i64, [i64; 8], usize, [i64; 4]),
) -> Result<(i64, [i64; 8], usize, [i64; 4]), String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|e| panic_message(&*e))
}

#[test]
fn interpreter_jitcode_agrees_with_native_on_generated_programs() {
    static LOOPS: AtomicUsize = AtomicUsize::new(0);
    static ABORTED: AtomicUsize = AtomicUsize::new(0);
    fn p(prog: Program) -> TestResult {
        let code = Code {
            ops: prog.0.clone(),
        };
        // Each program is a new `Code`, maybe at the address of a freed one, and the driver
        // keeps what it compiled for the programs before: it must notice.
        let counts = |s: &meta_jit::warm::Stats| (s.loops(), s.aborts.len());
        let before = run::with_driver(|d| {
            d.set_params("threshold=3,trace_eagerness=2").unwrap();
            d.with_stats(counts)
        });
        let native = outcome(|| {
            let mut f = new_frame();
            let r = run(&code, &mut f);
            (r, f.stack, f.sp, f.vars)
        });
        let jit = outcome(|| {
            let mut f = new_frame();
            let r = run::run_jitcode(&code, &mut f);
            (r, f.stack, f.sp, f.vars)
        });
        let after = run::with_driver(|d| d.with_stats(counts));
        LOOPS.fetch_add(after.0 - before.0, Ordering::Relaxed);
        ABORTED.fetch_add(after.1 - before.1, Ordering::Relaxed);
        if native == jit {
            TestResult::passed()
        } else {
            TestResult::error(format!("{:?}: native {native:?}, jitcode {jit:?}", prog.0))
        }
    }
    meta_jit::testing::prop_runner(0x6369, 0, 1000).quickcheck(p as fn(Program) -> TestResult);
    // The native runs went through the JIT (the same program with the JIT on and the jitcode
    // runner must agree): loops were compiled, and some traces aborted. (These programs
    // compile no bridges: 17 loops and 17 aborts from the fixed seed.)
    let (l, a) = (
        LOOPS.load(Ordering::Relaxed),
        ABORTED.load(Ordering::Relaxed),
    );
    println!("compiled loops: {l}, aborts: {a}");
    assert!(l >= 10, "compiled loops: {l}");
    assert!(a >= 1, "aborts: {a}");
}

#[test]
fn a_counting_loop() {
    // vars[0] counts down from 3 (vars[0] = 3 initially): while v0 != 0 { v1 = v1 * 2; v0 -= 1 }
    let ops = vec![
        Op::Push(Operand::Var(0)),
        Op::JumpIfZero { target: 14 },
        Op::Push(Operand::Var(1)),
        Op::Push(Operand::Imm(2)),
        Op::Mul,
        Op::Store(1),
        Op::Push(Operand::Var(0)),
        Op::Push(Operand::Imm(1)),
        Op::Sub,
        Op::Store(0),
        Op::Push(Operand::Imm(0)),
        Op::Count,
        Op::Pop,
        Op::Jump { target: 0 },
        Op::Push(Operand::Var(1)),
        Op::Halt,
    ];
    let code = Code { ops };
    let mut f1 = new_frame();
    let before = CALLS.load(Ordering::Relaxed);
    let native = run(&code, &mut f1);
    let mut f2 = new_frame();
    let jit = run::run_jitcode(&code, &mut f2);
    assert_eq!(native, 40);
    assert_eq!(jit, native);
    assert_eq!(f1.vars, f2.vars);
    assert!(
        CALLS.load(Ordering::Relaxed) - before >= 6,
        "the residual call ran in both modes"
    );
}

#[test]
fn slices_and_references() {
    let xs = [1i64, -2, 30, 400, 5];
    for n in 0..7 {
        assert_eq!(sum_slice(&xs, n), sum_slice::run_jitcode(&xs, n));
    }
    let code = Code {
        ops: vec![Op::Push(Operand::Imm(42)), Op::Halt],
    };
    assert_eq!(first_operand::run_jitcode(&code), 42);
    let code = Code {
        ops: vec![Op::Push(Operand::Var(1)), Op::Halt],
    };
    assert_eq!(first_operand::run_jitcode(&code), first_operand(&code));
    let frame = new_frame();
    assert_eq!(operand::run_jitcode(&frame, &Operand::Var(2)), 7);
    assert_eq!(
        operand(&frame, &Operand::Imm(-4)),
        operand::run_jitcode(&frame, &Operand::Imm(-4))
    );
}

#[test]
fn calls_of_each_kind_appear_in_the_jitcode() {
    let text = run::jitcode().to_string();
    assert!(text.contains("jit_merge_point greens[%i"), "{text}");
    assert!(text.contains("can_enter_jit"), "{text}");
    assert!(text.contains("inline_call Frame::push"), "{text}");
    assert!(text.contains("inline_call hash("), "{text}");
    assert!(text.contains("call.Elidable square("), "{text}");
    assert!(text.contains("call.Residual count_call("), "{text}");
    assert!(text.contains("call.Residual Frame::depth("), "{text}");
    assert!(text.contains("switch "), "{text}");
    assert!(text.contains("promote "), "{text}");
    let h = hash::jitcode().to_string();
    assert!(h.contains("record_known_result"), "{h}");
    // Descriptors carry what the tracer needs.
    use meta_jit::jitcode::{Effect, Kind, Op as J};
    let mut saw_immutable_ops = false;
    for op in &run::jitcode().ops {
        if let J::GetField { descr, .. } = op {
            // `code.ops` is `#[jit(immutable)]`: the load of the Vec's data pointer says so.
            saw_immutable_ops |= descr.name == "Vec.ptr" && descr.immutable;
        }
        if let J::Call { descr, args, .. } = op {
            assert!(descr.shim != 0);
            assert_eq!(descr.arg_kinds.len(), args.len());
            if descr.name == "square" {
                assert_eq!(descr.effect, Effect::Elidable);
                assert_eq!(descr.arg_kinds, vec![Kind::Int]);
                assert_eq!(descr.result_kind, Some(Kind::Int));
            }
            if descr.name == "Frame::depth" {
                assert_eq!(descr.effect, Effect::Residual);
                assert_eq!(descr.arg_kinds, vec![Kind::Ref]);
            }
        }
    }
    assert!(saw_immutable_ops);
    // The items of `code.ops` are immutable too: the tag loads of the dispatch say so, and so do
    // the payload loads; the frame's stack is not.
    let items: Vec<_> = run::jitcode()
        .ops
        .iter()
        .filter_map(|op| match op {
            J::GetArrayItem { descr, .. } => Some((descr.item.name.clone(), descr.item.immutable)),
            _ => None,
        })
        .collect();
    assert!(
        items.iter().any(|(n, imm)| n == "Op.tag" && *imm),
        "{items:?}"
    );
    assert!(
        items.iter().any(|(n, imm)| n == "payload" && *imm),
        "{items:?}"
    );
    assert!(
        items.iter().all(|(n, imm)| !n.contains("i64") || !*imm),
        "{items:?}"
    );
}
