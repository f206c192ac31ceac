//! The traces the micro-benchmarks of `benches/` run on: interpreter-like traces written as
//! text, random traces of `meta_jit::testing`, and small loops for comparing compiled code
//! with the reference interpreter.
//!
//! `cargo bench -p meta-jit-bench` runs them with criterion, which reports each benchmark's
//! time with a confidence interval and, with `-- --save-baseline NAME` on one commit and
//! `-- --baseline NAME` on another, the change between the two commits and whether it is
//! significant. Deterministic figures (ops left in a trace, bytes of code) are asserted in
//! meta-jit's own tests, not here.
//!
//! Must not know: any interpreter.

use meta_jit::ir::parse::{parse_with, Env};
use meta_jit::ir::{Trace, Value};

extern "C" fn helper(a: i64, b: i64) -> i64 {
    a.wrapping_mul(31) ^ b
}

/// The functions the text traces call.
pub fn env() -> Env {
    Env::new().func("helper", helper as *const () as usize)
}

/// An interpreter-like trace: `blocks` copies of a block that loads from a frame and a stack
/// array, checks a tag, adds with an overflow check, compares, stores back, does some float
/// work and now and then calls a helper; a loop back to the start.
pub fn interpreter_like(blocks: usize) -> Trace {
    let mut s = String::from(
        "descr top = field(offset=0, size=8, kind=i)
         descr tag = field(offset=8, size=1, kind=i)
         descr acc = field(offset=16, size=8, kind=f)
         descr stack = array(base=8, item=8, kind=i, signed)
         descr h = call(args=ii, ret=i)
         [p0, p1, i2, f3]\n",
    );
    let (mut prev, mut prevf) = ("i2".to_string(), "f3".to_string());
    for k in 0..blocks {
        let v = |n: &str| format!("i{n}_{k}");
        s += &format!("{} = getfield_i(p0, descr=top)\n", v("top"));
        s += &format!("{} = getfield_i(p0, descr=tag)\n", v("tag"));
        s += &format!("guard_value({}, 3) [p0, p1, {prev}, {prevf}]\n", v("tag"));
        s += &format!(
            "{} = getarrayitem_i(p1, {}, descr=stack)\n",
            v("x"),
            v("top")
        );
        s += &format!("{} = int_add_ovf({}, {prev})\n", v("s"), v("x"));
        s += &format!("guard_no_overflow() [p0, p1, {prev}, {}]\n", v("x"));
        s += &format!("{} = int_lt({}, 1000000000)\n", v("c"), v("s"));
        s += &format!("guard_true({}) [p0, {}, {prevf}]\n", v("c"), v("s"));
        s += &format!("setarrayitem(p1, {}, {}, descr=stack)\n", v("top"), v("s"));
        s += &format!("f{k}a = cast_int_to_float({})\n", v("s"));
        s += &format!("f{k}b = float_mul(f{k}a, {prevf})\n");
        s += &format!("f{k}c = float_add(f{k}b, 0.5)\n");
        s += &format!("setfield(p0, f{k}c, descr=acc)\n");
        let next = if k % 4 == 3 {
            s += &format!(
                "{} = call_i(ConstFn(helper), {}, {prev}, descr=h)\n",
                v("h"),
                v("s")
            );
            v("h")
        } else {
            s += &format!("{} = int_and({}, 255)\n", v("m"), v("s"));
            v("m")
        };
        prev = next;
        prevf = format!("f{k}c");
    }
    s += &format!("jump(p0, p1, {prev}, {prevf})\n");
    parse_with(&s, &env()).expect("the generated trace parses")
}

/// `count` random traces of `meta_jit::testing` (calls, memory, guards, loops), from a fixed
/// seed, each built from `steps` steps.
pub fn random_traces(count: u64, steps: usize) -> Vec<Trace> {
    const SEED: u64 = 0x6f70_745f_6265_6e63;
    (0..count)
        .map(|k| {
            meta_jit::testing::Case::random(SEED.wrapping_add(k), steps)
                .build()
                .trace
        })
        .collect()
}

/// Small loops that run until a guard fails after 10 million iterations: a name, the trace
/// and whether it takes the address of a 64-float array as its first input.
pub fn loops() -> Vec<(&'static str, Trace, bool)> {
    let texts = [
        (
            "integer sum",
            "[i0, i1]
            i2 = int_add(i0, i1)
            i3 = int_mul(i1, 3)
            i4 = int_xor(i2, i3)
            i5 = int_add(i1, 1)
            i6 = int_lt(i5, 10000000)
            guard_true(i6) [i4, i5]
            jump(i4, i5)",
            false,
        ),
        (
            "float + array",
            "descr a = array(base=0, item=8, kind=f)
            [p0, i1, f2]
            i3 = int_and(i1, 63)
            f4 = getarrayitem_f(p0, i3, descr=a)
            f5 = float_mul(f4, 1.0001)
            f6 = float_add(f2, f5)
            setarrayitem(p0, i3, f5, descr=a)
            i7 = int_add(i1, 1)
            i8 = int_lt(i7, 10000000)
            guard_true(i8) [f6, i7]
            jump(p0, i7, f6)",
            true,
        ),
        (
            "with a call",
            "descr h = call(args=ii, ret=i)
            [i0, i1]
            i2 = call_i(ConstFn(helper), i0, i1, descr=h)
            i3 = int_add(i1, 1)
            i4 = int_lt(i3, 10000000)
            guard_true(i4) [i2, i3]
            jump(i2, i3)",
            false,
        ),
    ];
    texts
        .into_iter()
        .map(|(name, text, array)| {
            let t = parse_with(text, &env()).expect("the loop parses");
            (name, t, array)
        })
        .collect()
}

/// The inputs of a loop of [`loops`]: the array's address when it takes one.
pub fn loop_inputs(array: Option<&mut [f64]>) -> Vec<Value> {
    match array {
        Some(a) => vec![
            Value::Ref(a.as_mut_ptr() as usize),
            Value::Int(0),
            Value::Float(0.0),
        ],
        None => vec![Value::Int(1), Value::Int(0)],
    }
}
