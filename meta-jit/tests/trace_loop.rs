//! The tracer on a small register interpreter: one iteration of a guest loop is recorded, the
//! trace (unoptimized, optimized, compiled) runs the rest of the loop, and the failing guard's
//! resume data plus the blackhole interpreter bring the interpreter to its next merge point,
//! with the same state a native run reaches.

use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::blackhole::{self, Landed};
use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::interp::{self, Outcome};
use meta_jit::ir::{self, Trace};
use meta_jit::jitcode::Value;
use meta_jit::opt::{optimize, Options};
use meta_jit::resume;
use meta_jit::trace::{Close, Codes, GreenLife, Limits, Traced, Tracer};

#[derive(Clone, Copy, Debug, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    Dec(u8),
    AddTo(u8, u8),
    JumpIfPos(u8, u32),
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Regs {
    pub r: [i64; 4],
}

#[jit::interpreter(greens(pc, code), reds(regs))]
pub fn run(code: &Code, regs: &mut Regs) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Dec(r) => regs.r[r as usize] -= 1,
            Ins::AddTo(d, s) => regs.r[d as usize] += regs.r[s as usize],
            Ins::JumpIfPos(r, t) => {
                if regs.r[r as usize] > 0 {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return regs.r[0],
        }
        pc += 1;
    }
}

fn program() -> Code {
    Code {
        ops: vec![
            Ins::AddTo(0, 1),
            Ins::Dec(1),
            Ins::JumpIfPos(1, 0),
            Ins::Halt,
        ],
    }
}

fn record(code: &Code, regs: &mut Regs, codes: &mut Codes) -> Trace {
    let greens = [Value::Int(0), Value::Ref(code as *const Code as usize)];
    let reds = [Value::Ref(regs as *mut Regs as usize)];
    let start = greens.to_vec();
    let tracer = Tracer::at_merge_point(
        codes,
        run::jitcode(),
        &greens,
        &reds,
        Limits {
            trace_limit: 1000,
            check_hints: false,
        },
        0,
        GreenLife::Pinned,
    );
    // SAFETY: the greens and reds are those of `run` at its merge point, with live objects.
    let traced = unsafe {
        tracer.run(&mut |g, _header| {
            if g == start.as_slice() {
                Close::Loop
            } else {
                Close::Continue
            }
        })
    };
    match traced {
        Traced::Closed {
            trace,
            close,
            greens,
            ..
        } => {
            assert_eq!(close, Close::Loop);
            assert_eq!(greens, start);
            trace
        }
        Traced::Aborted { reason, .. } => panic!("aborted: {reason}"),
        Traced::Cut { .. } => panic!("cut short without `Tracer::cutting`"),
    }
}

/// Deoptimizes from a guard failure of `t` and lands at the next merge point.
fn deopt(codes: &Codes, t: &Trace, op: usize, saved: &[ir::Value]) -> Landed {
    let r = t.ops[op].resume.as_ref().unwrap();
    let frames = resume::frames(codes, t, r, saved);
    // SAFETY: the frames are rebuilt from a state the trace left the interpreter in.
    unsafe { blackhole::run(frames) }
}

#[test]
fn one_iteration_is_recorded_and_finishes_the_loop_like_native() {
    let code = program();
    let mut native = Regs { r: [0, 100, 0, 0] };
    assert_eq!(run(&code, &mut native), 5050);

    for variant in ["trace", "optimized", "compiled"] {
        let mut codes = Codes::default();
        let mut regs = Regs { r: [0, 100, 0, 0] };
        let t = record(&code, &mut regs, &mut codes);
        // Tracing ran one iteration for real.
        assert_eq!(regs.r[..2], [100, 99], "{t}");
        let t = match variant {
            "trace" => t,
            _ => optimize(&t, &Options::all()),
        };
        let inputs = [ir::Value::Ref(&mut regs as *mut Regs as usize)];
        let outcome = if variant == "compiled" {
            let mut b = Backend::new();
            let id = b.compile(&t, &CompileOptions::default()).unwrap();
            b.run(id, &inputs).unwrap().outcome
        } else {
            interp::run(&t, &inputs).unwrap()
        };
        let Outcome::GuardFailed { op, saved, .. } = outcome else {
            panic!("{variant}: {outcome:?}\n{t}")
        };
        let landed = deopt(&codes, &t, op, &saved);
        assert_eq!(
            landed,
            Landed::MergePoint {
                greens: vec![Value::Int(3), Value::Ref(&code as *const Code as usize)],
                reds: vec![Value::Ref(&mut regs as *mut Regs as usize)],
            },
            "{variant}\n{t}"
        );
        assert_eq!(regs, native, "{variant}\n{t}");
    }
}

#[test]
fn the_trace_is_specialized_to_the_program() {
    let code = program();
    let mut regs = Regs { r: [0, 100, 0, 0] };
    let mut codes = Codes::default();
    let t = optimize(&record(&code, &mut regs, &mut codes), &Options::all());
    let text = t.to_string();
    // The loop is peeled: preamble, label, loop body.
    let body = text.split("label(").nth(1).expect("a peeled loop");
    // The dispatch on the opcode, the operands and the bounds checks of the constant program
    // fold away; what is left are the register accesses, the arithmetic and the loop test,
    // and with overflow checks (a debug build) a guard on each of the two additions.
    let checks = overflow_checks();
    assert!(!text.contains("guard_value"), "{text}");
    assert_eq!(
        body.matches("guard_").count(),
        if checks { 3 } else { 1 },
        "{text}"
    );
    assert_eq!(
        text.contains("int_add_ovf") && text.contains("int_sub_ovf"),
        checks,
        "{text}"
    );
    assert_eq!(text.contains("_ovf"), checks, "{text}");
}

/// Whether this crate is built with overflow checks (a debug build), which its traces follow.
fn overflow_checks() -> bool {
    std::panic::catch_unwind(|| std::hint::black_box(i64::MAX) + std::hint::black_box(1)).is_err()
}

/// `[i0] p1 = new(Regs); p1.r0 = i0; p1.r1 = 5; guard_true(i0 > 10); finish(i0)`, the guard
/// resuming at the portal's merge point with `pc = 0`, `code` and `regs = p1`. Optimized, the
/// allocation is gone: `Regs` exists only in the guard's resume data, described by its fields.
fn virtual_regs_trace(code: &Code, codes: &mut Codes) -> Trace {
    use meta_jit::ir::{DescrKind, FieldDescr, FrameInfo, Op, Opcode, Resume, SizeDescr, Type};
    let portal = run::jitcode();
    assert_eq!(codes.index(portal), 0);
    let mp = meta_jit::trace::merge_point_pc(portal);

    let mut t = Trace::new();
    let i0 = t.input(Type::Int);
    let size = t.descr(
        "Regs",
        DescrKind::Size(SizeDescr {
            size: std::mem::size_of::<Regs>() as u32,
            align: 8,
        }),
    );
    let field = |t: &mut Trace, k: u32| {
        t.descr(
            &format!("r{k}"),
            DescrKind::Field(FieldDescr {
                offset: 8 * k,
                size: 8,
                signed: true,
                kind: Type::Int,
                immutable: false,
                quasi_immutable: false,
                vable: false,
                length: false,
                alias: None,
            }),
        )
    };
    let (r0, r1) = (field(&mut t, 0), field(&mut t, 1));
    let p1 = t.push(Op::new(Opcode::New, &[]).with_descr(size));
    t.push(Op::new(Opcode::Setfield, &[p1, i0]).with_descr(r0));
    let five = t.int(5);
    t.push(Op::new(Opcode::Setfield, &[p1, five]).with_descr(r1));
    let ten = t.int(10);
    let c = t.emit(Opcode::IntGt, &[i0, ten]);
    // The portal's frame at its merge point: pc = 0, `code`, and the virtual `Regs` as `regs`.
    let live = portal.live_at(mp).unwrap();
    let values = live
        .iter()
        .map(|r| match portal.name_of(r) {
            Some("pc") => t.int(0),
            Some("code") => t.ptr(code as *const Code as usize),
            Some("regs") => p1,
            other => panic!("unexpected live register {other:?}"),
        })
        .collect::<Vec<_>>();
    let resume = Resume {
        id: 0,
        frames: vec![FrameInfo {
            code: 0,
            pc: mp as u32,
            len: values.len() as u32,
        }],
        values,
        virtuals: vec![],
        stores: vec![],
    };
    t.push(Op::new(Opcode::GuardTrue, &[c]).with_resume(resume));
    t.emit(Opcode::Finish, &[i0]);
    let opt = optimize(&t, &Options::all());
    assert_eq!(
        opt.ops.iter().filter(|o| o.opcode == Opcode::New).count(),
        0,
        "{opt}"
    );
    let guard = opt
        .ops
        .iter()
        .position(|o| o.opcode == Opcode::GuardTrue)
        .unwrap();
    assert_eq!(
        opt.ops[guard].resume.as_ref().unwrap().virtuals.len(),
        1,
        "{opt}"
    );
    opt
}

/// A guard whose resume data holds a virtual object: when the guard fails, resume allocates
/// and fills it and the blackhole interpreter lands with it as the red.
#[test]
fn a_guard_failing_on_a_virtual_object_rebuilds_it() {
    let code = program();
    let mut codes = Codes::default();
    let opt = virtual_regs_trace(&code, &mut codes);
    let Outcome::GuardFailed { op, saved, .. } = interp::run(&opt, &[ir::Value::Int(3)]).unwrap()
    else {
        panic!("the guard fails for 3")
    };
    let Landed::MergePoint { greens, reds } = deopt(&codes, &opt, op, &saved) else {
        panic!("lands at the merge point")
    };
    assert_eq!(greens[0], Value::Int(0));
    // SAFETY: the red is the `Regs` resume allocated and filled from the virtual's fields.
    let regs = unsafe { &*(reds[0].addr() as *const Regs) };
    assert_eq!(regs.r, [3, 5, 0, 0]);
}

/// A bridge from that guard: its trace starts by allocating the `Regs` and filling it from the
/// guard's saved values, then traces the interpreter on it (two guest instructions, to pc 2).
/// Compiled and attached, the guard's exit runs it: it allocates its own `Regs` and ends with
/// the state the interpreter reaches.
#[test]
fn a_bridge_from_a_guard_with_a_virtual_object_allocates_it() {
    use meta_jit::trace::Fingerprint;
    let code = program();
    let mut codes = Codes::default();
    let opt = virtual_regs_trace(&code, &mut codes);
    let mut b = Backend::new();
    let id = b.compile(&opt, &CompileOptions::default()).unwrap();
    let Outcome::GuardFailed { op, saved, .. } = b.run(id, &[ir::Value::Int(3)]).unwrap().outcome
    else {
        panic!("the guard fails for 3")
    };
    let r = opt.ops[op].resume.as_ref().unwrap();
    let (start, frames) = resume::bridge_frames(&codes, &opt, r, &saved);
    let tracer = Tracer::with_frames(
        &mut codes,
        run::jitcode(),
        start,
        frames,
        Limits {
            trace_limit: 1000,
            check_hints: false,
        },
        100,
        Fingerprint::default(),
    );
    // SAFETY: the frames hold the interpreter's state at the guard, the virtual `Regs`
    // allocated for real.
    let traced = unsafe {
        tracer.run(&mut |g, _header| {
            if g[0] == Value::Int(2) {
                Close::Finish
            } else {
                Close::Continue
            }
        })
    };
    let Traced::Closed { trace, reds, .. } = traced else {
        panic!("the bridge closes")
    };
    let text = trace.to_string();
    assert!(text.contains("= new(descr=Regs)"), "{text}");
    // The fields of the virtual, then the two registers the instructions write.
    assert_eq!(text.matches("setfield(").count(), 2, "{text}");
    assert_eq!(text.matches("setarrayitem(").count(), 2, "{text}");
    // The tracer ran the two instructions on the allocated object: r0 += r1, r1 -= 1.
    // SAFETY: the red is the `Regs` bridge_frames allocated.
    assert_eq!(unsafe { &*(reds[0].addr() as *const Regs) }.r, [8, 4, 0, 0]);

    let bridge = optimize(&trace, &Options::all());
    let bid = b
        .compile_bridge(id, op, &bridge, &CompileOptions::default())
        .unwrap();
    for run in ["interpreted", "compiled"] {
        let end = match run {
            "interpreted" => interp::run(&bridge, &saved).unwrap(),
            _ => {
                let ended = b.run(id, &[ir::Value::Int(3)]).unwrap();
                assert_eq!(ended.trace, bid, "the guard's exit enters the bridge");
                ended.outcome
            }
        };
        let Outcome::Finish(values) = end else {
            panic!("{run}: {end:?}\n{bridge}")
        };
        let code_ref = ir::Value::Ref(&code as *const Code as usize);
        assert_eq!(values[..2], [ir::Value::Int(2), code_ref], "{run}");
        assert_ne!(
            values[2],
            meta_jit::trace::to_ir(reds[0]),
            "{run}: a new allocation"
        );
        // SAFETY: the bridge allocated and filled this `Regs`.
        let regs = unsafe { &*(values[2].addr() as *const Regs) };
        assert_eq!(regs.r, [8, 4, 0, 0], "{run}\n{bridge}");
    }
}

/// A guard with pending stores (what `opt::vable` leaves for a virtualizable frame): compiled
/// code fails it without doing them; resume does them into the real `Regs` before the
/// blackhole interpreter runs, and a bridge traced from the guard starts with them.
#[test]
fn a_guard_with_pending_stores_writes_them_back_on_resume_and_in_its_bridge() {
    use meta_jit::ir::{parse::parse, Op, Opcode, PendingStore};
    use meta_jit::trace::Fingerprint;
    let code = program();
    let mut codes = Codes::default();
    let portal = run::jitcode();
    assert_eq!(codes.index(portal), 0);
    let mp = meta_jit::trace::merge_point_pc(portal) as u32;
    // `[p0, i1]`: r0 = i1 and r1 = 5 are pending at the guard, which fails for i1 <= 10.
    let mut t = parse(
        "descr r0 = field(offset=0, size=8, kind=i, signed, vable)
descr r1 = field(offset=8, size=8, kind=i, signed, vable)
[p0, i1]
i2 = int_gt(i1, 10)
finish(i1)",
    )
    .unwrap();
    let (p0, i1) = (ir::OpRef::op(0), ir::OpRef::op(1));
    let live = portal.live_at(mp as usize).unwrap();
    let values: Vec<_> = live
        .iter()
        .map(|r| match portal.name_of(r) {
            Some("pc") => t.int(0),
            Some("code") => t.ptr(&code as *const Code as usize),
            Some("regs") => p0,
            other => panic!("unexpected live register {other:?}"),
        })
        .collect();
    let five = t.int(5);
    let (d0, d1) = (ir::DescrId(0), ir::DescrId(1));
    let resume = ir::Resume {
        id: 0,
        frames: vec![ir::FrameInfo {
            code: 0,
            pc: mp,
            len: values.len() as u32,
        }],
        values,
        virtuals: vec![],
        stores: vec![
            PendingStore {
                descr: d0,
                base: p0,
                index: None,
                value: i1,
            },
            PendingStore {
                descr: d1,
                base: p0,
                index: None,
                value: five,
            },
        ],
    };
    let guard = Op::new(Opcode::GuardTrue, &[ir::OpRef::op(2)]).with_resume(resume);
    t.ops.insert(3, guard);
    assert_eq!(ir::verify::verify(&t), Ok(()), "{t}");

    let mut b = Backend::new();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    let mut regs = Regs { r: [0, 0, 0, 0] };
    let p = ir::Value::Ref(&mut regs as *mut Regs as usize);
    let Outcome::GuardFailed { op, saved, .. } =
        b.run(id, &[p, ir::Value::Int(3)]).unwrap().outcome
    else {
        panic!("the guard fails for 3")
    };
    // Compiled code left the stores to resume.
    assert_eq!(regs.r, [0, 0, 0, 0]);
    let Landed::MergePoint { reds, .. } = deopt(&codes, &t, op, &saved) else {
        panic!("lands at the merge point")
    };
    assert_eq!(reds[0], meta_jit::trace::from_ir(p));
    // The interpreter resumes at the merge point, on the written-back frame.
    assert_eq!(regs.r, [3, 5, 0, 0]);

    // A bridge from the guard: the stores are its first ops, on its inputs.
    regs.r = [0, 0, 0, 0];
    let r = t.ops[op].resume.as_ref().unwrap();
    let (start, frames) = resume::bridge_frames(&codes, &t, r, &saved);
    assert_eq!(regs.r[..2], [3, 5], "done in memory for the tracer");
    let text = start.to_string();
    assert!(
        text.contains("setfield(p0, i1, descr=r0)\nsetfield(p0, 5, descr=r1)"),
        "{text}"
    );
    let tracer = Tracer::with_frames(
        &mut codes,
        run::jitcode(),
        start,
        frames,
        Limits {
            trace_limit: 1000,
            check_hints: false,
        },
        100,
        Fingerprint::default(),
    );
    // SAFETY: the frames hold the interpreter's state at the guard, on the real `Regs`.
    let traced = unsafe { tracer.run(&mut |_, _| Close::Finish) };
    assert!(matches!(traced, Traced::Closed { .. }), "{traced:?}");
}
