//! Compiled traces against the reference interpreter: guards, memory, allocation, calls under
//! the System V ABI, loops (label or not, invariants, cycles in the back-edge moves, more
//! loop-carried values than registers, calls and stores inside), jumps to other traces,
//! invalidation, W^X and freeing.

use meta_jit::alloc::Tracker;
use meta_jit::backend::check::Compiled;
use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::interp::{Outcome, Run};
use meta_jit::ir::parse::{parse, parse_with, Env};
use meta_jit::ir::{Trace, Value};

fn compiled(text: &str) -> Compiled {
    Compiled::new(parse_with(text, &env()).unwrap_or_else(|e| panic!("{e}\n{text}")))
}

fn int(i: i64) -> Value {
    Value::Int(i)
}
fn flt(f: f64) -> Value {
    Value::Float(f)
}
fn ptr<T>(p: *const T) -> Value {
    Value::Ref(p as usize)
}

// ---------------------------------------------------------------------------------------
// Functions the traces call.

extern "C" fn add6(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64) -> i64 {
    a.wrapping_add(b.wrapping_mul(2))
        .wrapping_add(c.wrapping_mul(3))
        .wrapping_add(d.wrapping_mul(5))
        .wrapping_add(e.wrapping_mul(7))
        .wrapping_add(f.wrapping_mul(11))
}
#[allow(clippy::too_many_arguments)]
extern "C" fn fmix8(a: f64, b: f64, c: f64, d: f64, e: f64, f: f64, g: f64, h: f64) -> f64 {
    a + 2.0 * b + 3.0 * c + 5.0 * d + 7.0 * e + 11.0 * f + 13.0 * g + 17.0 * h
}
extern "C" fn mixed(a: i64, x: f64, b: i64, y: f64) -> f64 {
    a as f64 * x - b as f64 * y
}
extern "C" fn id_ptr(p: usize) -> usize {
    p ^ 8
}
extern "C" fn bump(p: *mut i64, by: i64) {
    // SAFETY: the tests pass the address of a live i64.
    unsafe { *p += by }
}
extern "C" fn square(a: i64) -> i64 {
    a.wrapping_mul(a)
}
#[inline(never)]
extern "C" fn stack_misalignment() -> i64 {
    // A 16-aligned local: its address mod 16 is 8 if the caller broke the ABI's alignment.
    #[repr(align(16))]
    struct A(#[allow(dead_code)] u64);
    let a = std::hint::black_box(A(1));
    (&a as *const A as usize % 16) as i64
}
extern "C" fn fneg(x: f64) -> f64 {
    -x
}

fn env() -> Env {
    Env::new()
        .func("add6", add6 as *const () as usize)
        .func("fmix8", fmix8 as *const () as usize)
        .func("mixed", mixed as *const () as usize)
        .func("id_ptr", id_ptr as *const () as usize)
        .func("bump", bump as *const () as usize)
        .func("square", square as *const () as usize)
        .func("misalign", stack_misalignment as *const () as usize)
        .func("fneg", fneg as *const () as usize)
}

const CALL_DESCRS: &str = "
descr d_add6 = call(args=iiiiii, ret=i)
descr d_fmix8 = call(args=ffffffff, ret=f)
descr d_mixed = call(args=ifif, ret=f)
descr d_id = call(args=p, ret=p)
descr d_bump = call(args=pi, ret=n)
descr d_square = call(args=i, ret=i, elidable)
descr d_misalign = call(args=-, ret=i)
descr d_fneg = call(args=f, ret=f)
";

// ---------------------------------------------------------------------------------------
// Guards.

#[test]
fn guards_on_values() {
    let c = compiled(
        "[i0, i1, p2]
        guard_true(i0) [i0, i1]
        guard_false(i1) [i1, p2]
        guard_nonnull(p2) [i0]
        finish(i0)",
    );
    for ins in [
        [int(1), int(0), ptr(8 as *const u8)],
        [int(0), int(0), ptr(8 as *const u8)],
        [int(-5), int(3), ptr(8 as *const u8)],
        [int(i64::MIN), int(0), Value::Ref(0)],
    ] {
        c.check(&ins);
    }
    let c = compiled("[p0]\nguard_isnull(p0) [p0]\nfinish(p0)");
    c.check(&[Value::Ref(0)]);
    c.check(&[Value::Ref(usize::MAX)]);
}

#[test]
fn guards_on_constants_pass_or_always_fail() {
    for (g, arg) in [
        ("guard_true", "1"),
        ("guard_true", "0"),
        ("guard_false", "0"),
        ("guard_false", "-1"),
        ("guard_nonnull", "ConstPtr(0)"),
        ("guard_isnull", "ConstPtr(0)"),
        ("guard_value", "5, 5"),
        ("guard_value", "5, 6"),
        ("guard_value", "0.0, -0.0"),
    ] {
        let c = compiled(&format!("[i0]\n{g}({arg}) [i0]\nfinish(i0)"));
        c.check(&[int(3)]);
    }
}

#[test]
fn guard_value_compares_bits() {
    let floats = [0.0, -0.0, 1.5, f64::NAN, -f64::NAN, f64::INFINITY, 1e300];
    for &k in &floats {
        let lit = if k.is_nan() {
            format!("nan({:#x})", k.to_bits())
        } else if k.is_infinite() {
            "inf".into()
        } else {
            format!("{k:?}")
        };
        for spill in [false, true] {
            let fill: String = (0..16).map(|j| format!("fx{j}, ")).collect();
            let header = if spill {
                format!("[{fill}f0]")
            } else {
                "[f0]".into()
            };
            let c = compiled(&format!(
                "{header}\nguard_value(f0, {lit}) [f0]\nfinish(f0)"
            ));
            for &x in &floats {
                let mut ins: Vec<Value> = if spill {
                    (0..16).map(|j| flt(j as f64)).collect()
                } else {
                    vec![]
                };
                ins.push(flt(x));
                c.check(&ins);
            }
        }
    }
    for k in [0i64, -1, i64::MIN, 1 << 40, 77] {
        let c = compiled(&format!("[i0, p1]\nguard_value(i0, {k}) [p1]\nguard_value(p1, ConstPtr({:#x})) [i0]\nfinish(i0)", k as u64 ^ 1));
        for x in [0i64, -1, i64::MIN, 1 << 40, 77] {
            c.check(&[int(x), Value::Ref(x as usize ^ 1)]);
            c.check(&[int(x), Value::Ref(x as usize)]);
        }
    }
}

#[test]
fn guard_saving_its_own_condition() {
    // The comparison is the guard's condition *and* a value its exit saves: it cannot be
    // fused into flags only (found by the random traces).
    for g in ["guard_true", "guard_false"] {
        let c = compiled(&format!(
            "[i0, i1, f2]
            i3 = int_lt(i0, i1)
            {g}(i3) [i3, i0]
            i4 = float_lt(f2, 1.0)
            {g}(i4) [i1, i4]
            finish(i0)"
        ));
        for (a, b, f) in [(1, 2, 0.5), (2, 1, 0.5), (1, 2, 2.0), (2, 1, f64::NAN)] {
            c.check(&[int(a), int(b), flt(f)]);
        }
    }
}

#[test]
fn guard_not_invalidated() {
    let c = compiled("[i0]\ni1 = int_add(i0, 1)\nguard_not_invalidated() [i1, i0]\nfinish(i1)");
    let valid = Run::default();
    assert_eq!(
        c.compare_with(&[int(4)], &valid, &mut || {}).unwrap(),
        Outcome::Finish(vec![int(5)])
    );
    let invalid = Run {
        invalidated: true,
        ..Run::default()
    };
    let out = c.compare_with(&[int(4)], &invalid, &mut || {}).unwrap();
    assert!(matches!(out, Outcome::GuardFailed { op: 2, .. }), "{out:?}");
}

#[test]
fn guard_saves_exactly_the_live_ops_in_order() {
    // Repeated values, constants and virtuals in the resume data: saved are the distinct ops
    // in order of first appearance, then those of the virtuals' fields.
    let c = compiled(
        "descr S = size(size=16, align=8)
        descr x = field(offset=0, size=8, kind=i)
        descr y = field(offset=8, size=8, kind=f)
        [i0, f1, i2]
        i3 = int_mul(i0, 3)
        i4 = int_lt(i3, 10)
        guard_true(i4) [1@2: i3, 7, i0, i3 | 3@4: v0, i2] {v0 = S(x=i2, y=f1)}
        finish(i3)",
    );
    let out = c.check(&[int(5), flt(2.5), int(-1)]);
    assert_eq!(
        out,
        Outcome::GuardFailed {
            id: 0,
            op: 5,
            saved: vec![int(15), int(5), int(-1), flt(2.5)]
        }
    );
}

// ---------------------------------------------------------------------------------------
// Memory.

#[repr(C, align(16))]
struct Buf([u8; 256]);

fn pattern() -> Buf {
    let mut b = Buf([0; 256]);
    for (k, x) in b.0.iter_mut().enumerate() {
        *x = (k as u8).wrapping_mul(37).wrapping_add(0x81);
    }
    b
}

/// Runs `c` with a pointer to a fresh pattern buffer as its first input (plus `rest`), in
/// the interpreter and compiled, and checks both the outcomes and the buffer afterwards.
fn check_memory(c: &Compiled, rest: &[Value]) {
    let mut buf = pattern();
    let mut ins = vec![ptr(buf.0.as_ptr())];
    ins.extend_from_slice(rest);
    let mut after_interp = None;
    let p = buf.0.as_mut_ptr();
    let out = c.compare_with(&ins, &Run::default(), &mut || {
        // SAFETY: `p` points to `buf`, alive for this call, and no reference to it is live.
        let b = unsafe { &mut *(p as *mut [u8; 256]) };
        after_interp = Some(*b);
        *b = pattern().0;
    });
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        Some(buf.0),
        after_interp,
        "memory differs after {out:?}\n{}",
        c.report(&ins, &out, &out)
    );
}

#[test]
fn field_loads_and_stores_of_every_size() {
    for size in [1, 2, 4, 8] {
        for signed in [false, true] {
            let s = if signed { ", signed" } else { "" };
            for offset in [0, 3, 8, 100] {
                let text = format!(
                    "descr d = field(offset={offset}, size={size}, kind=i{s})
                    [p0, i1]
                    i2 = getfield_i(p0, descr=d)
                    i3 = int_add(i2, i1)
                    setfield(p0, i3, descr=d)
                    i4 = getfield_i(p0, descr=d)
                    setfield(p0, -1, descr=d)
                    i5 = getfield_i(p0, descr=d)
                    setfield(p0, 0x123456789, descr=d)
                    i6 = getfield_i(p0, descr=d)
                    finish(i2, i4, i5, i6)"
                );
                let c = compiled(&text);
                for x in [0, 1, -1, 0x7f, 0x80, 0xffff, i64::MIN, 0x1234_5678_9abc] {
                    check_memory(&c, &[int(x)]);
                }
            }
        }
    }
}

#[test]
fn float_and_ref_fields_and_constant_bases() {
    let mut cell = [0u64; 4];
    let base = cell.as_mut_ptr() as usize;
    let c = compiled(&format!(
        "descr f = field(offset=8, size=8, kind=f)
        descr r = field(offset=16, size=8, kind=p)
        descr i = field(offset=24, size=4, kind=i, signed)
        [p0, f1, p2]
        setfield(p0, f1, descr=f)
        setfield(p0, p2, descr=r)
        f3 = getfield_f(p0, descr=f)
        p4 = getfield_r(p0, descr=r)
        setfield(ConstPtr({base:#x}), f3, descr=f)
        setfield(ConstPtr({base:#x}), 2.5, descr=f)
        setfield(ConstPtr({base:#x}), -0.0, descr=f)
        setfield(ConstPtr({base:#x}), -7, descr=i)
        f5 = getfield_f(ConstPtr({base:#x}), descr=f)
        i6 = getfield_i(ConstPtr({base:#x}), descr=i)
        setfield(ConstPtr({base:#x}), p4, descr=r)
        finish(f3, p4, f5, i6)"
    ));
    for x in [1.5, -0.0, f64::NAN] {
        check_memory(&c, &[flt(x), Value::Ref(0xdead_beef)]);
    }
    assert_eq!(cell[2], 0xdead_beef);
}

#[test]
fn array_items_with_register_and_constant_indexes() {
    for item in [1, 2, 4, 8] {
        for signed in [false, true] {
            let s = if signed { ", signed" } else { "" };
            let text = format!(
                "descr a = array(base=16, item={item}, kind=i{s})
                [p0, i1, i2]
                i3 = getarrayitem_i(p0, i1, descr=a)
                i4 = getarrayitem_i(p0, 3, descr=a)
                setarrayitem(p0, i1, i2, descr=a)
                setarrayitem(p0, 5, i3, descr=a)
                setarrayitem(p0, i1, 77, descr=a)
                i5 = getarrayitem_i(p0, 5, descr=a)
                i6 = int_sub(i1, 1)
                i7 = getarrayitem_i(p0, i6, descr=a)
                finish(i3, i4, i5, i7)"
            );
            let c = compiled(&text);
            for idx in [1, 2, 7, 10] {
                for v in [0, -1, 0x80, 0x8000_0001] {
                    check_memory(&c, &[int(idx), int(v)]);
                }
            }
        }
    }
    let text = "descr fa = array(base=8, item=8, kind=f)
        [p0, i1, f2]
        setarrayitem(p0, i1, f2, descr=fa)
        f3 = getarrayitem_f(p0, i1, descr=fa)
        f4 = getarrayitem_f(p0, 0, descr=fa)
        setarrayitem(p0, 2, 1.25, descr=fa)
        finish(f3, f4)";
    let c = compiled(text);
    for idx in [0, 3, 20] {
        check_memory(&c, &[int(idx), flt(-3.5)]);
    }
}

#[test]
fn memory_ops_under_register_pressure() {
    // Base, index and value all spilled; every register busy.
    let fill_i: Vec<String> = (0..14).map(|k| format!("ix{k}")).collect();
    let fill_f: Vec<String> = (0..16).map(|k| format!("fx{k}")).collect();
    let text = format!(
        "descr a = array(base=0, item=2, kind=i, signed)
        descr f = field(offset=40, size=8, kind=f)
        [{}, {}, p0, i1, i2, f3]
        i4 = getarrayitem_i(p0, i1, descr=a)
        setarrayitem(p0, i2, i4, descr=a)
        setfield(p0, f3, descr=f)
        setarrayitem(p0, i1, 0x7654321, descr=a)
        finish(i4, {}, {})",
        fill_i.join(", "),
        fill_f.join(", "),
        fill_i.join(", "),
        fill_f.join(", ")
    );
    let c = compiled(&text);
    let mut buf = pattern();
    let mut ins: Vec<Value> = (0..14).map(|k| int(k * 3)).collect();
    ins.extend((0..16).map(|k| flt(k as f64 * 0.5)));
    ins.push(ptr(buf.0.as_ptr()));
    ins.extend([int(5), int(9), flt(7.75)]);
    let p = buf.0.as_mut_ptr();
    let mut after = None;
    c.compare_with(&ins, &Run::default(), &mut || {
        // SAFETY: as in `check_memory`.
        let b = unsafe { &mut *(p as *mut [u8; 256]) };
        after = Some(*b);
        *b = pattern().0;
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Some(buf.0), after);
}

#[test]
fn allocation_goes_through_jit_alloc() {
    let c = compiled(
        "descr S = size(size=24, align=8)
        descr x = field(offset=8, size=8, kind=i)
        descr A = array(base=8, item=4, kind=i, signed)
        [i0, i1]
        p2 = new(descr=S)
        i3 = getfield_i(p2, descr=x)
        setfield(p2, i0, descr=x)
        i4 = getfield_i(p2, descr=x)
        p5 = new_array(i1, descr=A)
        i6 = getarrayitem_i(p5, 0, descr=A)
        setarrayitem(p5, 0, i0, descr=A)
        i7 = getarrayitem_i(p5, 0, descr=A)
        finish(i3, i4, i6, i7, p2, p5)",
    );
    let tracker = Tracker::new();
    for n in [1i64, 3, 100] {
        let want = Run::default().run(&c.trace, &[int(-9), int(n)]).unwrap();
        let got = c.backend.run(c.id, &[int(-9), int(n)]).unwrap().outcome;
        let (Outcome::Finish(w), Outcome::Finish(g)) = (want, got) else {
            panic!()
        };
        assert_eq!(w[..4], g[..4]);
        assert_eq!(tracker.size_of(g[4].addr()), Some(24));
        assert_eq!(tracker.size_of(g[5].addr()), Some(8 + 4 * n as usize));
        assert_ne!(g[4], w[4], "a fresh object, not the interpreter's");
    }
    // A negative length allocates an empty array, as in the interpreter.
    let got = c.backend.run(c.id, &[int(1), int(-5)]).unwrap().outcome;
    let Outcome::Finish(g) = got else { panic!() };
    assert_eq!(tracker.size_of(g[5].addr()), Some(8));
}

// ---------------------------------------------------------------------------------------
// Calls.

#[test]
fn calls_pass_every_argument_register() {
    let c = compiled(&format!(
        "{CALL_DESCRS}
        [i0, i1, f2, f3, p4]
        i5 = call_i(ConstFn(add6), i0, i1, 3, i0, -4, 1099511627776, descr=d_add6)
        f6 = call_f(ConstFn(fmix8), f2, f3, 1.5, f2, -0.5, f3, 0.0, 2.0, descr=d_fmix8)
        f7 = call_f(ConstFn(mixed), i1, f3, i5, f6, descr=d_mixed)
        p8 = call_r(ConstFn(id_ptr), p4, descr=d_id)
        i9 = call_pure_i(ConstFn(square), i0, descr=d_square)
        i10 = call_i(ConstFn(misalign), descr=d_misalign)
        finish(i5, f6, f7, p8, i9, i10, i0, i1, f2, f3, p4)"
    ));
    for (a, b) in [(1, 2), (-7, 1 << 40), (i64::MAX, i64::MIN)] {
        let out = c.check(&[int(a), int(b), flt(0.25), flt(-8.0), Value::Ref(0x1000)]);
        let Outcome::Finish(v) = out else { panic!() };
        assert_eq!(v[5], int(0), "the stack is 16-byte aligned at calls");
    }
}

#[test]
fn calls_with_arguments_in_each_others_registers() {
    // The arguments arrive in the registers of other arguments (the move into rdi, rsi, ...
    // must not clobber a value still to be read), repeated, and from spill slots.
    let fill: Vec<String> = (0..12).map(|k| format!("ix{k}")).collect();
    let c = compiled(&format!(
        "{CALL_DESCRS}
        [i0, i1, i2, i3, i4, i5, {}]
        i6 = call_i(ConstFn(add6), i5, i4, i3, i2, i1, i0, descr=d_add6)
        i7 = call_i(ConstFn(add6), i1, i0, i1, i0, i6, i6, descr=d_add6)
        i8 = call_i(ConstFn(add6), i2, i3, i4, i5, i0, i1, descr=d_add6)
        finish(i6, i7, i8, {})",
        fill.join(", "),
        fill.join(", ")
    ));
    let mut ins: Vec<Value> = (1..=6).map(int).collect();
    ins.extend((0..12).map(|k| int(100 + k)));
    c.check(&ins);
}

#[test]
fn values_survive_calls() {
    // Many ints and floats live across calls: caller-saved registers are saved around them.
    let ints: Vec<String> = (0..20).map(|k| format!("ia{k}")).collect();
    let floats: Vec<String> = (0..18).map(|k| format!("fa{k}")).collect();
    let mut body = String::new();
    for k in 0..20 {
        body += &format!("ib{k} = int_add(ia{k}, {k})\n");
    }
    for k in 0..18 {
        body += &format!("fb{k} = float_mul(fa{k}, 2.0)\n");
    }
    let c = compiled(&format!(
        "{CALL_DESCRS}
        [{}, {}, p0]
        {body}
        call_n(ConstFn(bump), p0, 1, descr=d_bump)
        f1 = call_f(ConstFn(fneg), fb3, descr=d_fneg)
        i2 = call_pure_i(ConstFn(square), ib7, descr=d_square)
        call_n(ConstFn(bump), p0, i2, descr=d_bump)
        finish(f1, i2, {}, {})",
        ints.join(", "),
        floats.join(", "),
        (0..20)
            .map(|k| format!("ib{k}"))
            .collect::<Vec<_>>()
            .join(", "),
        (0..18)
            .map(|k| format!("fb{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let mut counter = 0i64;
    let mut ins: Vec<Value> = (0..20).map(|k| int(k * 7 - 30)).collect();
    ins.extend((0..18).map(|k| flt(k as f64 - 4.5)));
    ins.push(ptr(&mut counter as *mut i64));
    c.check(&ins);
    // ib7 = ia7 + 7 = 26, bumped by 1 and by its square, once per run.
    assert_eq!(
        counter,
        2 * (1 + 26 * 26),
        "both runs bumped the counter the same"
    );
}

#[test]
fn call_through_a_function_value() {
    let c = compiled(&format!(
        "{CALL_DESCRS}
        [p0, i1]
        i2 = call_i(p0, i1, descr=d_square)
        finish(i2)"
    ));
    c.check(&[Value::Ref(square as *const () as usize), int(-12)]);
}

// ---------------------------------------------------------------------------------------
// Loops.

fn check_iterations(c: &Compiled, ins: &[Value], limits: &[usize]) {
    for &n in limits {
        let run = Run {
            max_iterations: n,
            ..Run::default()
        };
        c.compare_with(ins, &run, &mut || {})
            .unwrap_or_else(|e| panic!("limit {n}: {e}"));
    }
}

#[test]
fn loop_to_the_start() {
    let c = compiled(
        "[i0, i1]
        i2 = int_add(i0, i1)
        i3 = int_sub(i1, 1)
        i4 = int_gt(i3, 0)
        guard_true(i4) [i2, i3]
        jump(i2, i3)",
    );
    check_iterations(&c, &[int(0), int(10)], &[0, 1, 2, 5, 9, 10, 11, 1000]);
    let out = c.check(&[int(0), int(100)]);
    assert_eq!(
        out,
        Outcome::GuardFailed {
            id: 0,
            op: 5,
            saved: vec![int(5050), int(0)]
        }
    );
}

#[test]
fn label_loop_with_invariants() {
    let c = compiled(
        "[i0, i1, f2]
        i3 = int_mul(i1, 2)
        f4 = float_add(f2, 0.5)
        label(i0, f2)
        i5 = int_add(i0, i3)
        f6 = float_mul(f2, f4)
        i7 = int_lt(i5, 1000)
        guard_true(i7) [i5, f6, i3, f4]
        jump(i5, f6)",
    );
    check_iterations(&c, &[int(0), int(7), flt(1.0)], &[1, 3, 50, 100_000]);
}

#[test]
fn back_edge_moves_with_cycles() {
    // Swaps and rotations of loop-carried values: the parallel move must break cycles.
    for jump in [
        "jump(i1, i0, i2, f3, f4)",
        "jump(i1, i2, i0, f4, f3)",
        "jump(i2, i0, i1, f3, f4)",
        "jump(i0, i0, i1, f4, f4)",
        "jump(i5, i1, 7, f3, 2.5)",
    ] {
        let c = compiled(&format!(
            "[i0, i1, i2, f3, f4]
            i5 = int_add(i0, i2)
            i6 = int_lt(i5, 100000)
            guard_true(i6) [i0, i1, i2, f3, f4, i5]
            {jump}"
        ));
        check_iterations(
            &c,
            &[int(1), int(2), int(3), flt(0.5), flt(-1.5)],
            &[1, 2, 3, 7, 100],
        );
    }
}

#[test]
fn loop_carrying_more_values_than_registers() {
    // 24 ints and 20 floats rotate through the loop: some live in spill slots at the header,
    // and the back-edge moves slots to registers, registers to slots and slots to slots.
    let n = 24;
    let m = 20;
    let ints: Vec<String> = (0..n).map(|k| format!("ia{k}")).collect();
    let floats: Vec<String> = (0..m).map(|k| format!("fa{k}")).collect();
    let mut body = String::from("ic = int_add(ia0, ia23)\nfc = float_add(fa0, fa19)\n");
    body += "ig = int_lt(ic, 1000000000)\nguard_true(ig) [ic, ia5, fa7]\n";
    let mut next_i: Vec<String> = ints[1..].to_vec();
    next_i.push("ic".into());
    let mut next_f: Vec<String> = floats[1..].to_vec();
    next_f.push("fc".into());
    let c = compiled(&format!(
        "[{}, {}]\n{body}jump({}, {})",
        ints.join(", "),
        floats.join(", "),
        next_i.join(", "),
        next_f.join(", ")
    ));
    let mut ins: Vec<Value> = (0..n).map(|k| int(k as i64 + 1)).collect();
    ins.extend((0..m).map(|k| flt(k as f64 * 0.125)));
    check_iterations(&c, &ins, &[1, 2, 5, 23, 24, 25, 60, 400]);
}

#[test]
fn loop_with_calls_and_stores() {
    let c = compiled(&format!(
        "{CALL_DESCRS}
        descr a = array(base=0, item=8, kind=i)
        [p0, i1, i2, f3]
        i4 = call_pure_i(ConstFn(square), i1, descr=d_square)
        setarrayitem(p0, i1, i4, descr=a)
        call_n(ConstFn(bump), p0, i2, descr=d_bump)
        f5 = call_f(ConstFn(mixed), i1, f3, i2, f3, descr=d_mixed)
        i6 = int_add(i1, 1)
        i7 = int_lt(i6, 30)
        guard_true(i7) [i6, i4, f5]
        jump(p0, i6, i4, f5)"
    ));
    let mut buf = [0i64; 32];
    let p = buf.as_mut_ptr();
    let ins = [ptr(p), int(1), int(3), flt(0.5)];
    let mut after = None;
    c.compare_with(&ins, &Run::default(), &mut || {
        // SAFETY: `p` points to `buf`, alive here, with no reference to it live.
        let b = unsafe { &mut *(p as *mut [i64; 32]) };
        after = Some(*b);
        *b = [0; 32];
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Some(buf), after);
}

#[test]
fn loop_with_unused_and_constant_label_arguments() {
    let c = compiled(
        "[i0, i1, i2]
        label(i0, i1, i2)
        i3 = int_add(i0, 1)
        i4 = int_le(i3, 500)
        guard_true(i4) [i3, i2]
        jump(i3, 99, i1)",
    );
    check_iterations(&c, &[int(0), int(5), int(6)], &[1, 2, 3, 600]);
}

#[test]
fn label_argument_with_a_stale_slot_copy() {
    // f2 is saved to its slot by the first call and reloaded by the comparison (whose left
    // operand must be a register) before the label, so at the
    // header it is in a register *and* has a slot copy. The back-edge writes only the
    // register: the copy is stale from the second iteration on, and the call in the body
    // must store f2 again rather than trust it.
    let c = compiled(&format!(
        "{CALL_DESCRS}
        [f0, i1]
        f2 = float_add(f0, 1.0)
        f3 = call_f(ConstFn(fneg), f0, descr=d_fneg)
        f4 = float_add(f2, f3)
        i9 = float_gt(f2, f4)
        guard_false(i9) [f2]
        label(f2, f4, i1)
        f5 = call_f(ConstFn(fneg), f4, descr=d_fneg)
        f6 = float_add(f2, 0.5)
        i7 = int_sub(i1, 1)
        i8 = int_gt(i7, 0)
        guard_true(i8) [f6, f5]
        jump(f6, f5, i7)"
    ));
    check_iterations(&c, &[flt(3.0), int(10)], &[1, 2, 3, 20]);
    check_iterations(&c, &[flt(-3.0), int(10)], &[1, 2, 3, 20]);
}

// ---------------------------------------------------------------------------------------
// Jumps between traces, invalidation, memory.

#[test]
fn jump_to_unlinked_target_exits() {
    let c = compiled(
        "descr t = target(7)
        [i0, f1]
        i2 = int_add(i0, 1)
        jump(i2, f1, 3, descr=t)",
    );
    let out = c.check(&[int(1), flt(0.5)]);
    assert_eq!(
        out,
        Outcome::Jump {
            target: 7,
            args: vec![int(2), flt(0.5), int(3)]
        }
    );
}

#[test]
fn jump_to_linked_target_runs_it() {
    let mut b = Backend::new();
    let opts = CompileOptions::default();
    let callee = parse("[i0, f1, i2]\ni3 = int_mul(i0, i2)\nfinish(i3, f1)").unwrap();
    let to = b.compile(&callee, &opts).unwrap();
    b.define_target(7, to);
    let caller =
        parse("descr t = target(7)\n[i0, f1]\ni2 = int_add(i0, 1)\njump(i2, f1, 3, descr=t)")
            .unwrap();
    let from = b.compile(&caller, &opts).unwrap();
    let end = b.run(from, &[int(4), flt(2.0)]).unwrap();
    assert_eq!(end.trace, to);
    assert_eq!(end.outcome, Outcome::Finish(vec![int(15), flt(2.0)]));
}

/// The permissions of the mapping that contains `addr`, from `/proc/self/maps`.
fn perms_at(addr: usize) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().find_map(|l| {
        let mut parts = l.split_whitespace();
        let range = parts.next()?;
        let perms = parts.next()?;
        let (lo, hi) = range.split_once('-')?;
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).ok()?,
            usize::from_str_radix(hi, 16).ok()?,
        );
        (lo <= addr && addr < hi).then(|| perms.to_string())
    })
}

#[test]
fn code_is_never_writable_and_can_be_freed() {
    let mut b = Backend::new();
    let t: Trace = parse("[i0]\ni1 = int_add(i0, 1)\nfinish(i1)").unwrap();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    let addr = b.code_addr(id).unwrap();
    let perms = perms_at(addr).expect("the code is mapped");
    assert!(perms.starts_with("r-x"), "code mapped {perms}");
    assert_eq!(b.free(id), vec![id]);
    assert!(!b.is_live(id));
    assert!(b.run(id, &[int(1)]).is_err());
}

// ---------------------------------------------------------------------------------------
// The shape of the code: what each lowering emits, read back from the disassembly.

#[test]
fn code_shapes() {
    let t = parse(
        "[i0, i1, f2]
        i3 = int_add(i0, 1)
        i4 = int_lt(i3, i1)
        guard_true(i4) [i3]
        f5 = float_mul(f2, f2)
        i6 = int_mul_ovf(i3, i1)
        guard_no_overflow() [i6]
        i7 = uint_rshift(i6, 65)
        jump(i7, i1, f5)",
    )
    .unwrap();
    let mut b = Backend::new();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    let code = |i| b.op_code(id, i).join("; ");
    let shape = |i: usize, pattern: &[&str]| {
        let ins = b.op_code(id, i);
        assert_eq!(ins.len(), pattern.len(), "op {i}: {ins:?}");
        for (x, p) in ins.iter().zip(pattern) {
            assert!(
                x.starts_with(p),
                "op {i}: {ins:?} does not match {pattern:?}"
            );
        }
    };
    // i0 dies: its register becomes i3's, and the add is the only instruction.
    shape(3, &["add "]);
    // The comparison is fused into the guard.
    shape(4, &[]);
    shape(5, &["cmp ", "jge "]);
    shape(6, &["mulsd "]);
    // The overflow guard is one `jo` right after the `imul`.
    shape(7, &["imul "]);
    shape(8, &["jo "]);
    // A constant shift count is masked by 63: 65 shifts by 1.
    shape(9, &["shr "]);
    assert!(code(9).ends_with(",1"), "{}", code(9));
    // Every loop-carried value is already where the header wants it: the back-edge is a jump.
    shape(10, &["jmp "]);
    let listing = b.disassemble(id, &t);
    for line in [
        "; i3 = int_add(i0, 1)",
        "; guard_true(i4) [i3]",
        "; exit 0: guard #0 (op 5)",
    ] {
        assert!(listing.contains(line), "{line} not in\n{listing}");
    }
}
