//! Virtualizable frames, end to end: a small register VM whose frame (a `Vec<i64>` register
//! file and two counters) is declared `#[jit(virtualizable)]`. Its compiled loops keep the
//! frame in registers: a counting loop loads and stores nothing of the frame in its body; a
//! guard that fails in the middle of the loop resumes with exactly the frame the interpreter
//! has there; a residual call that reads the frame sees its current values, and one that
//! writes it is seen by the code after it. Generated programs for the VM run the same with
//! the JIT on, off, and on jitcode alone.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::testing::panic_message;
use meta_jit::warm::{Stats, TraceKind};
use quickcheck::{Arbitrary, Gen, TestResult};

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = imm`
    Li(u8, i64),
    /// `r[a] = r[b] + r[c]` (wrapping)
    Add(u8, u8, u8),
    /// `r[a] = r[b] + imm` (wrapping)
    AddI(u8, u8, i64),
    /// `r[a] = r[b] * r[c]` (wrapping)
    Mul(u8, u8, u8),
    /// `acc += r[a]` (wrapping)
    Acc(u8),
    /// `fixed[a % 4] += r[b]` (wrapping)
    Bank(u8, u8),
    /// `if r[a] < imm { r[c] += 1 } else { r[c] *= 3; snapshot(frame) }`
    Branch(u8, i64, u8),
    /// `r[a] = peek(frame)`: a residual call that reads the whole frame
    Peek(u8),
    /// `poke(frame, a, imm)`: a residual call that writes `r[a] = imm + acc`
    Poke(u8, i64),
    /// jump to `t` if `r[a] < r[b]` (a loop's back edge)
    Jlt(u8, u8, u32),
    /// `r[a] -= 1`, then jump to `t` if `r[a] != 0`
    DecJnz(u8, u32),
    /// Stop; the result is `acc`.
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// The interpreter's frame: compiled code keeps these fields, and the register file's items,
/// in registers.
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Frame {
    #[jit(virtualizable)]
    pub regs: Vec<i64>,
    /// A second register file, inside the frame.
    #[jit(virtualizable)]
    pub fixed: [i64; 4],
    #[jit(virtualizable)]
    pub acc: i64,
    /// How many instructions ran (written on every one).
    #[jit(virtualizable)]
    pub steps: i64,
}

impl Frame {
    fn new() -> Frame {
        Frame {
            regs: vec![0; 8],
            fixed: [0; 4],
            acc: 0,
            steps: 0,
        }
    }
}

thread_local! {
    /// The frames `snapshot` saw, and what `peek` returned.
    static SEEN: RefCell<(Vec<Frame>, Vec<i64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Records the whole frame (a residual call: compiled code writes the frame back first).
#[dont_look_inside]
pub fn snapshot(f: &Frame) {
    SEEN.with(|s| s.borrow_mut().0.push(f.clone()));
}

/// Reads every field of the frame.
#[dont_look_inside]
pub fn peek(f: &Frame) -> i64 {
    let v = f
        .regs
        .iter()
        .chain(&f.fixed)
        .fold(f.acc.wrapping_mul(31).wrapping_add(f.steps), |s, &r| {
            s.wrapping_mul(7).wrapping_add(r)
        });
    SEEN.with(|s| s.borrow_mut().1.push(v));
    v
}

/// Writes a register of the frame, from a field of it.
#[dont_look_inside]
pub fn poke(f: &mut Frame, a: u8, imm: i64) {
    f.regs[a as usize] = imm.wrapping_add(f.acc);
}

#[jit::interpreter(greens(pc, code), reds(frame))]
pub fn run(code: &Code, frame: &mut Frame) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        frame.steps = frame.steps.wrapping_add(1);
        match code.ops[pc] {
            Ins::Li(a, imm) => frame.regs[a as usize] = imm,
            Ins::Add(a, b, c) => {
                frame.regs[a as usize] = frame.regs[b as usize].wrapping_add(frame.regs[c as usize])
            }
            Ins::AddI(a, b, imm) => {
                frame.regs[a as usize] = frame.regs[b as usize].wrapping_add(imm)
            }
            Ins::Mul(a, b, c) => {
                frame.regs[a as usize] = frame.regs[b as usize].wrapping_mul(frame.regs[c as usize])
            }
            Ins::Acc(a) => frame.acc = frame.acc.wrapping_add(frame.regs[a as usize]),
            Ins::Bank(a, b) => {
                let i = (a % 4) as usize;
                frame.fixed[i] = frame.fixed[i].wrapping_add(frame.regs[b as usize])
            }
            Ins::Branch(a, imm, c) => {
                if frame.regs[a as usize] < imm {
                    frame.regs[c as usize] = frame.regs[c as usize].wrapping_add(1);
                } else {
                    frame.regs[c as usize] = frame.regs[c as usize].wrapping_mul(3);
                    snapshot(frame);
                }
            }
            Ins::Peek(a) => frame.regs[a as usize] = peek(frame),
            Ins::Poke(a, imm) => poke(frame, a, imm),
            Ins::Jlt(a, b, t) => {
                if frame.regs[a as usize] < frame.regs[b as usize] {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::DecJnz(a, t) => {
                frame.regs[a as usize] = frame.regs[a as usize].wrapping_sub(1);
                if frame.regs[a as usize] != 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return frame.acc,
        }
        pc += 1;
    }
}

/// How to run a program.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// The native interpreter alone.
    Off,
    /// With the JIT, these parameters.
    On(&'static str),
    /// The interpreter's jitcode, run by the framework (no tracing).
    Jitcode,
}

/// What a run ended with: the result, the frame, the frames `snapshot` saw and what `peek`
/// returned (or the panic).
type Ended = Result<(i64, Frame, Vec<Frame>, Vec<i64>), String>;

fn go(mode: Mode, ops: &[Ins]) -> Ended {
    let code = Code { ops: ops.to_vec() };
    let mut frame = Frame::new();
    SEEN.with(|s| *s.borrow_mut() = (Vec::new(), Vec::new()));
    let r = catch_unwind(AssertUnwindSafe(|| match mode {
        Mode::Off => {
            run::with_driver(|d| d.set_params("off").unwrap());
            run(&code, &mut frame)
        }
        Mode::On(params) => {
            run::with_driver(|d| {
                d.reset();
                d.set_params("on,keep_optimized=1").unwrap();
                d.set_params(params).unwrap();
            });
            run(&code, &mut frame)
        }
        Mode::Jitcode => run::run_jitcode(&code, &mut frame),
    }))
    .map_err(|e| panic_message(&*e))?;
    let (snaps, peeks) = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    Ok((r, frame, snaps, peeks))
}

fn stats() -> Stats {
    run::with_driver(|d| d.with_stats(|s| s.clone()))
}

/// The body of the only loop (after its label), as opcode names.
fn loop_body(s: &Stats) -> (Vec<&'static str>, String) {
    let loops: Vec<_> = s
        .traces
        .iter()
        .filter(|t| t.kind == TraceKind::Loop)
        .collect();
    assert_eq!(loops.len(), 1, "one loop expected");
    let t = &loops[0].optimized();
    let at = t
        .ops
        .iter()
        .position(|op| op.opcode.name() == "label")
        .expect("a peeled loop");
    let names = t.ops[at + 1..].iter().map(|op| op.opcode.name()).collect();
    (names, t.to_string())
}

fn memory_ops(names: &[&str]) -> usize {
    names
        .iter()
        .filter(|n| n.starts_with("get") || n.starts_with("set"))
        .count()
}

const PARAMS: &str = "threshold=3,trace_eagerness=2";

/// JIT on, off and jitcode-only end the same; returns the JIT-on run.
fn agree(ops: &[Ins]) -> Ended {
    let off = go(Mode::Off, ops);
    let jitcode = go(Mode::Jitcode, ops);
    let on = go(Mode::On(PARAMS), ops);
    assert_eq!(on, off, "JIT on vs off on {ops:?}");
    assert_eq!(jitcode, off, "jitcode vs native on {ops:?}");
    on
}

/// `r0 = 0; r1 = 1000; do { r0 += 1; acc += r0 } while r0 < r1`.
const COUNT: &[Ins] = &[
    Ins::Li(0, 0),
    Ins::Li(1, 1000),
    Ins::AddI(0, 0, 1),
    Ins::Acc(0),
    Ins::Jlt(0, 1, 2),
    Ins::Halt,
];

#[test]
fn a_loop_over_an_array_inside_the_frame_has_no_frame_loads_or_stores() {
    // The same, with `fixed[1] += r0` and `fixed[2] += r1` each turn: an array field of the
    // frame (its items are at fixed offsets from the frame, not behind a `Vec`'s pointer).
    let ops = &[
        Ins::Li(0, 0),
        Ins::Li(1, 1000),
        Ins::AddI(0, 0, 1),
        Ins::Bank(1, 0),
        Ins::Bank(2, 1),
        Ins::Jlt(0, 1, 2),
        Ins::Halt,
    ];
    let (_, frame, _, _) = agree(ops).unwrap();
    assert_eq!(frame.fixed, [0, 500_500, 1_000_000, 0]);
    let (names, text) = loop_body(&stats());
    assert_eq!(memory_ops(&names), 0, "{text}");
}

#[test]
fn a_counting_loop_has_no_frame_loads_or_stores() {
    let (r, frame, _, _) = agree(COUNT).unwrap();
    assert_eq!(
        (r, frame.regs[0], frame.steps),
        (500_500, 1000, 3 + 3 * 1000)
    );
    let s = stats();
    let (names, text) = loop_body(&s);
    // Three instructions per turn write `steps`, `r0` and `acc`: none of it reaches memory
    // until the loop exits. What is left: the adds, the compare and its guard, the jump.
    assert_eq!(memory_ops(&names), 0, "{text}");
    assert_eq!(
        names.iter().filter(|n| n.starts_with("guard")).count(),
        1,
        "{text}"
    );
    assert!(names.len() <= 8, "{} ops:\n{text}", names.len());
    // The guard writes the frame back if it fails, and the loop says what it keeps in
    // registers across its back edge: r0, `acc` and `steps`.
    let guard = text
        .lines()
        .rev()
        .find(|l| l.starts_with("guard_true"))
        .unwrap();
    assert_eq!(guard.matches("(p0)=").count(), 2, "{text}");
    assert_eq!(guard.matches(", 0)=").count(), 1, "{text}");
    let jump = text.lines().rev().find(|l| l.starts_with("jump(")).unwrap();
    assert!(jump.contains(") <"), "{text}");
    // Without the stage, the heap stage alone keeps the loads out of the loop, but each
    // field written stays stored once per turn.
    let without = "threshold=3,trace_eagerness=2,\
                   enable_opts=fold:bounds:pure:exact:guards:heap:virtuals:dce:unroll:counted";
    assert_eq!(go(Mode::On(without), COUNT), go(Mode::Off, COUNT));
    let (names, text) = loop_body(&stats());
    let stores = names.iter().filter(|n| n.starts_with("set")).count();
    assert_eq!((stores, memory_ops(&names)), (3, 3), "{text}");
}

#[test]
fn a_guard_failing_in_the_loop_resumes_with_the_interpreters_frame() {
    // From r0 = 600 on, `Branch` takes its other path: the loop's guard fails there, every
    // turn (then a bridge runs it); `snapshot`, on that path, records the frame the
    // interpreter (or the bridge) has at that point. They must be the frames the
    // interpreter alone has.
    let ops = &[
        Ins::Li(0, 0),
        Ins::Li(1, 700),
        Ins::Li(2, 5),
        Ins::AddI(0, 0, 1),
        Ins::Acc(2),
        Ins::Branch(0, 600, 3),
        Ins::Add(2, 2, 0),
        Ins::Jlt(0, 1, 3),
        Ins::Halt,
    ];
    let (_, _, snaps, _) = agree(ops).unwrap();
    assert_eq!(snaps.len(), 101);
    assert_eq!(snaps[0].regs[0], 600);
    let s = stats();
    assert!(s.guard_failures > 0, "no guard failed");
    // After a few failures the failing path got a bridge: it starts with the guard's pending
    // stores, and its own call of `snapshot` writes the frame back first.
    assert!(s.bridges() > 0, "no bridge");
    // The loop body itself stores nothing into the frame.
    let (names, text) = loop_body(&s);
    assert_eq!(memory_ops(&names), 0, "{text}");
}

#[test]
fn a_residual_call_sees_the_current_frame_and_its_writes_are_seen() {
    // `peek` reads every register and both counters in each turn; `poke` writes r4 from
    // `acc`, and the loop then reads r4.
    let ops = &[
        Ins::Li(0, 0),
        Ins::Li(1, 300),
        Ins::AddI(0, 0, 1),
        Ins::Acc(0),
        Ins::Peek(5),
        Ins::Poke(4, 7),
        Ins::Add(6, 4, 0),
        Ins::Acc(6),
        Ins::Jlt(0, 1, 2),
        Ins::Halt,
    ];
    let (_, frame, _, peeks) = agree(ops).unwrap();
    assert_eq!(peeks.len(), 300);
    assert_eq!(frame.steps, 2 + 7 * 300 + 1);
    // The loop calls both functions; around them it writes the frame back (before) and
    // reads what the call may have changed (after), but nothing else of the frame.
    let (names, text) = loop_body(&stats());
    assert_eq!(
        names.iter().filter(|n| n.starts_with("call")).count(),
        2,
        "{text}"
    );
    for (k, n) in names.iter().enumerate() {
        if n.starts_with("call") {
            assert!(
                names[k - 1].starts_with("set"),
                "no write-back before a call:\n{text}"
            );
            assert!(
                names[k + 1].starts_with("get"),
                "no read after a call:\n{text}"
            );
        }
    }
}

#[derive(Clone, Debug)]
struct Program(Vec<Ins>);

impl Arbitrary for Program {
    fn arbitrary(g: &mut Gen) -> Program {
        let reg = |g: &mut Gen| u8::arbitrary(g) % 7;
        let n = i64::from(u8::arbitrary(g) % 60) + 1;
        let mut ops = vec![Ins::Li(7, n), Ins::Li(1, 3), Ins::Li(2, -5)];
        let body = usize::arbitrary(g) % 8 + 1;
        for _ in 0..body {
            let (a, b, c) = (reg(g), reg(g), reg(g));
            let imm = i64::from(i8::arbitrary(g));
            ops.push(match u8::arbitrary(g) % 10 {
                0 => Ins::Li(a, imm),
                1 => Ins::Add(a, b, c),
                2 => Ins::AddI(a, b, imm),
                3 => Ins::Mul(a, b, c),
                4 => Ins::Acc(a),
                5 => Ins::Branch(a, imm, c),
                6 => Ins::Peek(a),
                7 => Ins::Poke(a, imm),
                8 => Ins::Bank(a, b),
                _ => Ins::Branch(a, imm.abs() % 20, c),
            });
        }
        ops.push(Ins::DecJnz(7, 3));
        ops.push(Ins::Halt);
        Program(ops)
    }
}

#[test]
fn jit_on_off_and_jitcode_agree_on_generated_programs() {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static LOOPS: AtomicUsize = AtomicUsize::new(0);
    static FAILURES: AtomicUsize = AtomicUsize::new(0);
    fn prop(p: Program) -> TestResult {
        let off = go(Mode::Off, &p.0);
        let jitcode = go(Mode::Jitcode, &p.0);
        let on = go(Mode::On("threshold=2,trace_eagerness=2"), &p.0);
        let s = stats();
        LOOPS.fetch_add(s.loops(), Relaxed);
        FAILURES.fetch_add(s.guard_failures, Relaxed);
        if on == off && jitcode == off {
            TestResult::passed()
        } else {
            TestResult::error(format!(
                "{:?}\noff: {off:?}\non:  {on:?}\njitcode: {jitcode:?}",
                p.0
            ))
        }
    }
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    meta_jit::testing::prop_runner(0x7661_626c, 0, 1000)
        .quickcheck(prop as fn(Program) -> TestResult);
    std::panic::set_hook(prev);
    let (l, f) = (LOOPS.load(Relaxed), FAILURES.load(Relaxed));
    println!("loops: {l}, guard failures: {f}");
    assert!(l > 200 && f > 100, "loops: {l}, guard failures: {f}");
}
