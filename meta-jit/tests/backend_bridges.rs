//! Bridges: a guard of a compiled loop fails, a bridge is compiled from the guard's live
//! values and attached, and from then on the guard's exit jumps straight into the bridge,
//! which jumps back into the loop, all without leaving machine code. The reference: the
//! interpreter running the loop, then the bridge on the failed guard's saved values, then the
//! loop again on the bridge's jump arguments, and so on.

use meta_jit::backend::{Backend, CompileOptions, TraceId};
use meta_jit::interp::{self, Outcome};
use meta_jit::ir::parse::{parse_with, Env};
use meta_jit::ir::{Trace, Value};

extern "C" fn bump(p: *mut i64, by: i64) {
    // SAFETY: the tests pass the address of a live i64.
    unsafe { *p += by }
}

fn env() -> Env {
    Env::new().func("bump", bump as *const () as usize)
}

const LOOP: &str = "
descr d_bump = call(args=pi, ret=n)
[i0, i1, f2, p3]
i4 = int_add(i0, 1)
i5 = int_and(i4, 7)
i6 = int_is_zero(i5)
guard_false(i6) [i4, i1, f2, p3]
i7 = int_add(i1, i4)
f8 = float_add(f2, 0.5)
i9 = int_lt(i4, 100)
guard_true(i9) [i4, i7, f8]
jump(i4, i7, f8, p3)
";

/// The bridge of the first guard: every 8th iteration it subtracts instead, halves the float,
/// counts itself through a call, and goes back into the loop (target 0).
const BRIDGE: &str = "
descr d_bump = call(args=pi, ret=n)
descr loop = target(0)
[i0, i1, f2, p3]
call_n(ConstFn(bump), p3, 1, descr=d_bump)
i4 = int_sub(i1, 1000)
f5 = float_mul(f2, 0.5)
i6 = int_gt(i0, 1000)
guard_false(i6) [i0, i4]
jump(i0, i4, f5, p3, descr=loop)
";

fn parse(text: &str) -> Trace {
    parse_with(text, &env()).unwrap()
}

/// Runs the loop in the interpreter, following the bridges like the compiled code does:
/// `bridges` maps (trace, guard op) to the bridge trace; a jump to target `n` runs `traces[n]`.
fn interpret(
    traces: &[(&Trace, Option<(usize, usize)>)],
    start: usize,
    inputs: Vec<Value>,
) -> (usize, Outcome) {
    let (mut at, mut inputs) = (start, inputs);
    loop {
        let out = interp::run(traces[at].0, &inputs).unwrap();
        match &out {
            Outcome::GuardFailed { op, saved, .. } => {
                let bridge = traces
                    .iter()
                    .position(|(_, parent)| *parent == Some((at, *op)));
                match bridge {
                    Some(b) => {
                        at = b;
                        inputs = saved.clone();
                    }
                    None => return (at, out),
                }
            }
            Outcome::Jump { target, args } => {
                at = *target as usize;
                inputs = args.clone();
            }
            _ => return (at, out),
        }
    }
}

/// A backend with `lp` compiled and named as target 0, the target of the bridges' jumps.
fn compile_loop(lp: &Trace) -> (Backend, TraceId) {
    let mut b = Backend::new();
    let l = b.compile(lp, &CompileOptions::default()).unwrap();
    b.define_target(0, l);
    (b, l)
}

#[test]
fn a_bridge_is_taken_without_leaving_machine_code() {
    let (lp, br) = (parse(LOOP), parse(BRIDGE));
    let (mut b, l) = compile_loop(&lp);
    let opts = CompileOptions::default();
    let mut count = 0i64;
    let ins = vec![
        Value::Int(0),
        Value::Int(0),
        Value::Float(1.0),
        Value::Ref(&mut count as *mut i64 as usize),
    ];
    // Without a bridge, the first guard fails at the 8th iteration.
    let first = b.run(l, &ins).unwrap();
    assert_eq!(first.trace, l);
    assert_eq!(first.outcome, interp::run(&lp, &ins).unwrap());
    let Outcome::GuardFailed { op, saved, .. } = &first.outcome else {
        panic!("{first:?}")
    };
    assert_eq!((*op, saved[0]), (7, Value::Int(8)));
    // Attach the bridge to that guard.
    let bridge = b.compile_bridge(l, *op, &br, &opts).unwrap();
    assert_eq!(bridge, TraceId(1));
    // One run now goes through the bridge 12 times (at 8, 16, ..., 96) and ends at the
    // loop's other guard, as the interpreter following the same bridges says.
    let end = b.run(l, &ins).unwrap();
    let traces = [(&lp, None), (&br, Some((0, 7)))];
    let (at, want) = interpret(&traces, 0, ins.clone());
    assert_eq!((end.trace, &end.outcome), (TraceId(at as u32), &want));
    assert!(
        matches!(end.outcome, Outcome::GuardFailed { op: 11, .. }),
        "{end:?}"
    );
    // The interpreter run bumped the counter 12 times too.
    assert_eq!(count, 24, "the bridge ran 12 times in each of the two runs");
    // Freeing the bridge detaches it: the guard exits again.
    assert_eq!(b.free(bridge), vec![bridge]);
    let again = b.run(l, &ins).unwrap();
    assert_eq!(again, first);
}

#[test]
fn a_bridge_can_fail_and_have_its_own_bridge() {
    let lp = parse(LOOP);
    // A bridge whose guard fails once the counter passes 40, and a bridge for that guard
    // that finishes.
    let br = parse(&BRIDGE.replace("int_gt(i0, 1000)", "int_gt(i0, 40)"));
    let br2 = parse("[i0, i1]\ni2 = int_mul(i1, 3)\nfinish(i0, i2)");
    let (mut b, l) = compile_loop(&lp);
    let opts = CompileOptions::default();
    let mut count = 0i64;
    let ins = vec![
        Value::Int(0),
        Value::Int(5),
        Value::Float(-2.0),
        Value::Ref(&mut count as *mut i64 as usize),
    ];
    let bridge = b.compile_bridge(l, 7, &br, &opts).unwrap();
    let end = b.run(l, &ins).unwrap();
    let traces = [(&lp, None), (&br, Some((0, 7)))];
    let (at, want) = interpret(&traces, 0, ins.clone());
    assert_eq!((end.trace, &end.outcome), (TraceId(at as u32), &want));
    assert_eq!(end.trace, bridge, "the bridge's own guard failed");
    let Outcome::GuardFailed { op, .. } = end.outcome else {
        panic!()
    };
    let bridge2 = b.compile_bridge(bridge, op, &br2, &opts).unwrap();
    let end = b.run(l, &ins).unwrap();
    let traces = [(&lp, None), (&br, Some((0, 7))), (&br2, Some((1, op)))];
    let (at, want) = interpret(&traces, 0, ins.clone());
    assert_eq!((end.trace, &end.outcome), (TraceId(at as u32), &want));
    assert_eq!(end.trace, bridge2);
    assert!(matches!(end.outcome, Outcome::Finish(_)));
    // Freeing the loop frees the bridges hanging off it and jumping into it.
    let mut freed = b.free(l);
    freed.sort();
    assert_eq!(freed, vec![l, bridge, bridge2]);
}

#[test]
fn a_bridge_must_take_the_guards_values() {
    let lp = parse(LOOP);
    let mut b = Backend::new();
    let l = b.compile(&lp, &CompileOptions::default()).unwrap();
    let wrong = parse("[i0, i1]\nfinish(i0)");
    let e = b
        .compile_bridge(l, 7, &wrong, &CompileOptions::default())
        .unwrap_err();
    assert!(e.0.contains("the bridge takes"), "{e}");
    let e = b
        .compile_bridge(l, 6, &wrong, &CompileOptions::default())
        .unwrap_err();
    assert!(e.0.contains("no guard at op 6"), "{e}");
}

/// A guard with more live values than registers keeps some in spill slots; its bridge takes
/// them there, in the frame they share, and spills values of its own around them. The bridge
/// keeps all its inputs and 20 new values live to the end.
#[test]
fn a_bridge_takes_the_values_its_guard_kept_in_spill_slots() {
    let n = 20;
    let names: Vec<String> = (0..n).map(|k| format!("i{k}")).collect();
    let list = names.join(", ");
    let lp = parse(&format!(
        "[{list}]\ni{n} = int_ge(i0, 0)\nguard_true(i{n}) [{list}]\nfinish(i0)\n"
    ));
    let mut br = format!("[{list}]\n");
    let mut out = names.clone();
    for k in 0..n {
        br += &format!("i{} = int_mul(i{k}, {})\n", n + k, 3 + k);
        out.push(format!("i{}", n + k));
    }
    br += &format!("finish({})\n", out.join(", "));
    let br = parse(&br);
    let mut b = Backend::new();
    let opts = CompileOptions::default();
    let l = b.compile(&lp, &opts).unwrap();
    assert!(b.info(l).unwrap().spill_slots > 0, "the guard spills");
    let ins: Vec<Value> = (0..n).map(|k| Value::Int(k as i64 * 11 - 1)).collect();
    let Outcome::GuardFailed { op, saved, .. } = b.run(l, &ins).unwrap().outcome else {
        panic!("the guard fails on a negative i0")
    };
    let bridge = b.compile_bridge(l, op, &br, &opts).unwrap();
    assert!(b.info(bridge).unwrap().spill_slots > b.info(l).unwrap().spill_slots);
    let end = b.run(l, &ins).unwrap();
    assert_eq!(end.trace, bridge);
    assert_eq!(end.outcome, interp::run(&br, &saved).unwrap());
}

/// The bridge's `jump` into the loop puts its arguments in the registers the loop's placed
/// entry takes them in: nothing goes through memory, and the jump is a direct `jmp rel32`
/// (the loop's code is within 2 GiB: the backend's arena), padded with a `nop` that never
/// runs.
#[test]
fn a_bridge_jumps_into_the_loop_with_its_values_in_registers() {
    let (lp, br) = (parse(LOOP), parse(BRIDGE));
    let (mut b, l) = compile_loop(&lp);
    let opts = CompileOptions::default();
    let bridge = b.compile_bridge(l, 7, &br, &opts).unwrap();
    let jump = b.op_code(bridge, br.ops.len() - 1);
    let code: Vec<&String> = jump.iter().filter(|i| !i.starts_with("nop")).collect();
    assert!(code.iter().all(|ins| !ins.contains('[')), "{jump:#?}");
    let last = code.last().unwrap();
    assert!(
        last.starts_with("jmp ") && !last.contains("r11"),
        "{jump:#?}"
    );
    assert!(!code.iter().any(|i| i.contains("r11")), "{jump:#?}");
}

#[test]
fn a_guards_stub_reaches_its_bridge_in_one_indirect_jump() {
    // The stub's first two instructions load the address of the guard's bridge word and jump
    // through it; while no bridge is attached the word points right after that jump, at the
    // code that saves the values and leaves. (It was five, with a test and a branch on 0.)
    let lp = parse(LOOP);
    let (b, l) = compile_loop(&lp);
    let listing = b.disassemble(l, &lp);
    let stub: Vec<&str> = listing
        .lines()
        .skip_while(|s| !s.starts_with("; exit 0:"))
        .skip(1)
        .take(3)
        .map(|s| s.trim())
        .collect();
    assert!(
        stub[0].contains("mov ") && stub[0].contains("r11"),
        "{listing}"
    );
    assert!(stub[1].ends_with("jmp     qword ptr [r11]"), "{listing}");
    assert!(
        !stub[2].contains("test") && !stub[2].starts_with("je"),
        "{listing}"
    );
}
