//! Tests of `call_assembler`'s machine code (see `x64::call`): the direct call of another
//! trace's code with a deadframe on the stack, the return read from it, another exit handed
//! to the target's exit function with the exit code and the deadframe, and the helper when
//! the target has no code. The target blocks and functions here stand in for the runtime's.

use super::{Backend, CompileOptions, Ended, Outcome, ASSEMBLER_FRAME_WORDS, RETURN_FLAG};
use std::cell::Cell;

use crate::ir::parse::{parse_with, Env};
use crate::ir::print::print;
use crate::ir::Value;

/// The helper when the target has no code: `1_000_000 + target word 3 + a`.
extern "C" fn helper(target: usize, a: i64) -> i64 {
    // SAFETY: the tests pass the address of a live `[Cell<usize>; 4]`.
    let block = unsafe { &*(target as *const [Cell<usize>; 4]) };
    1_000_000 + block[3].get() as i64 + a
}

/// The exit function: `2_000_000 + deadframe word 1` (the callee's guard saved its input
/// there), checking that the code is not a return.
extern "C" fn exit(_target: usize, code: u64, frame: *const u64) -> i64 {
    assert_eq!(code & RETURN_FLAG, 0);
    // SAFETY: the compiled code passes its stack deadframe.
    let f = unsafe { std::slice::from_raw_parts(frame, ASSEMBLER_FRAME_WORDS) };
    2_000_000 + f[1] as i64
}

/// Compiles the callee `3 * a` (returning, with a guard `a < 10`) and a caller that calls
/// it through `call_assembler_i` and adds 1; returns the backend, the caller (compiled and
/// as text) and the target block, whose word 2 the machine code counts up.
type Block = Box<[Cell<usize>; 4]>;
fn setup(with_code: bool) -> (Backend, super::TraceId, crate::ir::Trace, Block) {
    let mut b = Backend::new();
    let callee = parse_with(
        "[i0]
        i1 = int_lt(i0, 10)
        guard_true(i1) [i0]
        i2 = int_mul(i0, 3)
        finish(i2)",
        &Env::new(),
    )
    .unwrap();
    let returns = CompileOptions {
        returns: true,
        ..CompileOptions::default()
    };
    let cid = b.compile(&callee, &returns).unwrap();
    let code = if with_code {
        b.code_addr(cid).unwrap()
    } else {
        0
    };
    let block = Box::new([code, exit as *const () as usize, 0, 7].map(Cell::new));
    let env = Env::new().func("helper", helper as *const () as usize);
    let caller = parse_with(
        &format!(
            "descr e = call(args=ii, ret=i)
            [i0, i1]
            i2 = call_assembler_i(ConstFn(helper), {}, i0, descr=e)
            i3 = int_add(i2, i1)
            i4 = int_add(i3, 1)
            finish(i4, i1)",
            &*block as *const [Cell<usize>; 4] as usize
        ),
        &env,
    )
    .unwrap();
    let id = b.compile(&caller, &CompileOptions::default()).unwrap();
    (b, id, caller, block)
}

fn finish(e: Ended) -> Vec<Value> {
    match e.outcome {
        Outcome::Finish(v) => v,
        o => panic!("{o:?}"),
    }
}

#[test]
fn a_direct_call_returns_the_callees_result_and_keeps_the_callers_values() {
    let (b, id, _, block) = setup(true);
    for a in 0..10 {
        let out = finish(b.run(id, &[Value::Int(a), Value::Int(100)]).unwrap());
        assert_eq!(out, vec![Value::Int(3 * a + 101), Value::Int(100)]);
    }
    assert_eq!(block[2].get(), 10, "every call went the direct way");
}

#[test]
fn another_exit_of_the_callee_goes_to_the_exit_function_with_its_deadframe() {
    let (b, id, _, block) = setup(true);
    let out = finish(b.run(id, &[Value::Int(12), Value::Int(5)]).unwrap());
    assert_eq!(out, vec![Value::Int(2_000_012 + 6), Value::Int(5)]);
    assert_eq!(block[2].get(), 1);
}

#[test]
fn without_code_the_helper_makes_the_call() {
    let (b, id, caller, block) = setup(false);
    let inputs = [Value::Int(4), Value::Int(0)];
    let out = finish(b.run(id, &inputs).unwrap());
    assert_eq!(out, vec![Value::Int(1_000_007 + 4 + 1), Value::Int(0)]);
    assert_eq!(block[2].get(), 0);
    // The reference interpreter calls the helper too, and the text form round-trips.
    let interp = crate::interp::run(&caller, &inputs).unwrap();
    assert_eq!(interp, Outcome::Finish(out));
    let text = print(&caller);
    assert!(text.contains("= call_assembler_i(ConstFn(helper), "), "{text}");
    let env = Env::new().func("helper", helper as *const () as usize);
    assert_eq!(print(&parse_with(&text, &env).unwrap()), text);
}
