//! Tests of the text form and the verifier, and of the reference interpreter on small traces.

use super::parse::{parse, parse_with, Env};
use super::print::print;
use crate::interp::{run, Outcome, Run};
use crate::ir::Value;

const SAMPLE: &str = "\
descr x = field(offset=8, size=8, kind=i, signed)
descr b = field(offset=0, size=1, kind=i)
descr next = field(offset=16, size=8, kind=p, immutable)
descr S = size(size=24, align=8)
descr ints = array(base=0, item=8, kind=i, signed)
descr f = call(args=ip, ret=i, reads=[x], writes=none, elidable)
[p0, i1, f2]
i3 = getfield_i(p0, descr=x)
i4 = int_add_ovf(i3, -5)
guard_no_overflow() [p0, i4]
f5 = float_mul(f2, 1.5)
i6 = float_lt(f5, -inf)
guard_false(i6) [1@12: p0, i1 | 2@3: v0, 7] {v0 = S(x=i4, next=v1), v1 = S()}
p7 = new(descr=S)
setfield(p7, i4, descr=x)
i8 = call_pure_i(ConstFn(g), i1, p7, descr=f)
guard_value(i8, 3) []
i9 = getarrayitem_i(p0, i1, descr=ints)
setarrayitem(p0, 0, i9, descr=ints)
f10 = cast_int_to_float(-9223372036854775808)
i11 = float_eq(f10, nan(0x7ff8000000000001))
finish(i3, f10, ConstPtr(0x10), 0.0, -0.0)
";

extern "C" fn g(a: i64, _p: usize) -> i64 {
    a * 3
}

#[test]
fn sample_round_trips() {
    let env = Env::new().func("g", g as *const () as usize);
    let t = parse_with(SAMPLE, &env).unwrap();
    let text = print(&t);
    let t2 = parse_with(&text, &env).unwrap();
    assert_eq!(print(&t2), text);
    assert!(
        text.contains(
            "guard_false(i6) [1@12: p0, i1 | 2@3: v0, 7] {v0 = S(x=i4, next=v1), v1 = S()}"
        ),
        "{text}"
    );
    assert!(text.contains("nan(0x7ff8000000000001)"));
    assert!(text.contains("finish(i3, f10, ConstPtr(0x10), 0.0, -0.0)"));
}

#[test]
fn renaming_is_canonical() {
    let a = parse("[i5, i9]\ni7 = int_add(i5, i9)\nfinish(i7)").unwrap();
    let b = parse("[ia, ib]\nic = int_add(ia, ib)\nfinish(ic)").unwrap();
    assert_eq!(print(&a), print(&b));
    assert_eq!(print(&a), "[i0, i1]\ni2 = int_add(i0, i1)\nfinish(i2)\n");
}

#[test]
fn parse_errors_name_the_line() {
    let cases = [
        (
            "[i0]\ni1 = int_add(i0, i9)\nfinish(i1)",
            2,
            "`i9` is not defined",
        ),
        (
            "[i0]\ni1 = int_frob(i0)\nfinish(i1)",
            2,
            "unknown operation",
        ),
        (
            "[i0]\nf1 = int_add(i0, 1)\nfinish(f1)",
            2,
            "names a Int value",
        ),
        ("[i0]\ni1 = int_add(i0, 1)", 0, "ends with jump or finish"),
        (
            "[i0]\ni1 = int_add(i0, 1.5)\nfinish(i1)",
            0,
            "takes [Int, Int]",
        ),
        (
            "[i0]\ni1 = int_add_ovf(i0, 1)\nfinish(i1)",
            0,
            "overflow guard",
        ),
        (
            "[i0]\nguard_value(i0, i0) []\nfinish()",
            0,
            "a constant of its type",
        ),
        (
            "[p0]\ni1 = getfield_i(p0, descr=nope)\nfinish()",
            2,
            "unknown descriptor",
        ),
    ];
    for (text, line, msg) in cases {
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.msg.contains(msg), "{text}: {e}");
    }
}

/// A descriptor number past the table is an error, for a `jump` too (whose target descriptor
/// is looked up before the others).
#[test]
fn verify_reports_a_descriptor_past_the_table() {
    for opcode in [super::Opcode::Jump, super::Opcode::GetfieldI] {
        let mut t = super::Trace::new();
        let p = t.input(super::Type::Ref);
        let op = super::Op::new(opcode, &[p]).with_descr(super::DescrId(99));
        t.push(op);
        if opcode != super::Opcode::Jump {
            t.emit(super::Opcode::Finish, &[]);
        }
        let e = super::verify::verify(&t).unwrap_err();
        assert!(
            e.to_string().contains("unknown descriptor"),
            "{opcode:?}: {e}"
        );
    }
}

#[test]
fn interp_runs_a_loop() {
    let t = parse(
        "[i0, i1]
        i2 = int_add(i0, i1)
        i3 = int_sub(i1, 1)
        i4 = int_gt(i3, 0)
        guard_true(i4) [i2, i3]
        jump(i2, i3)",
    )
    .unwrap();
    // Sum of 1..=10 is reached when the counter hits 0.
    let out = run(&t, &[Value::Int(0), Value::Int(10)]).unwrap();
    assert_eq!(
        out,
        Outcome::GuardFailed {
            id: 0,
            op: 5,
            saved: vec![Value::Int(55), Value::Int(0)]
        }
    );
    let limited = Run {
        max_iterations: 3,
        ..Run::default()
    };
    let out = limited.run(&t, &[Value::Int(0), Value::Int(10)]).unwrap();
    assert_eq!(
        out,
        Outcome::Iterations(vec![Value::Int(27), Value::Int(7)])
    );
}

#[test]
fn interp_label_loop_keeps_invariants() {
    let t = parse(
        "[i0, i1]
        i2 = int_mul(i1, 2)
        label(i0)
        i3 = int_add(i0, i2)
        i4 = int_lt(i3, 100)
        guard_true(i4) [i3]
        jump(i3)",
    )
    .unwrap();
    let out = run(&t, &[Value::Int(0), Value::Int(7)]).unwrap();
    assert_eq!(
        out,
        Outcome::GuardFailed {
            id: 0,
            op: 6,
            saved: vec![Value::Int(112)]
        }
    );
}

#[test]
fn interp_memory_calls_and_overflow() {
    let env = Env::new().func("g", g as *const () as usize);
    let t = parse_with(
        "descr x = field(offset=8, size=4, kind=i, signed)
        descr S = size(size=16, align=8)
        descr f = call(args=ip, ret=i, elidable)
        [i0]
        p1 = new(descr=S)
        setfield(p1, i0, descr=x)
        i2 = getfield_i(p1, descr=x)
        i3 = call_pure_i(ConstFn(g), i2, p1, descr=f)
        i4 = int_mul_ovf(i3, i3)
        guard_no_overflow() [i3]
        finish(i2, i4)",
        &env,
    )
    .unwrap();
    let _tracker = crate::alloc::Tracker::new();
    // A 4-byte signed field truncates and sign-extends; g triples it; the square of that
    // overflows, so the guard fails with the saved i3.
    let out = run(&t, &[Value::Int(0x1_8000_0000)]).unwrap();
    let w = i32::MIN as i64;
    assert_eq!(
        out,
        Outcome::GuardFailed {
            id: 0,
            op: 6,
            saved: vec![Value::Int(w * 3)]
        }
    );
    let out = run(&t, &[Value::Int(-7)]).unwrap();
    assert_eq!(out, Outcome::Finish(vec![Value::Int(-7), Value::Int(441)]));
}

#[test]
fn float_arith_nan_results_are_defined() {
    use super::semantics::eval_pure;
    use super::Opcode;
    // Two NaNs with different payloads: the first operand wins, quieted (x86 SSE2's rule), for
    // every arithmetic op, whatever order the Rust compiler evaluates `x * y` in.
    let a = f64::from_bits(0x7ff0_0000_0000_0001); // signaling
    let b = f64::from_bits(0x7ff8_0000_dead_0000);
    for op in [
        Opcode::FloatAdd,
        Opcode::FloatSub,
        Opcode::FloatMul,
        Opcode::FloatTrueDiv,
    ] {
        let r = eval_pure(op, &[Value::Float(a), Value::Float(b)]).unwrap();
        assert_eq!(r.float().to_bits(), 0x7ff8_0000_0000_0001, "{op:?}");
        let r = eval_pure(op, &[Value::Float(b), Value::Float(a)]).unwrap();
        assert_eq!(r.float().to_bits(), 0x7ff8_0000_dead_0000, "{op:?}");
        let r = eval_pure(op, &[Value::Float(1.0), Value::Float(a)]).unwrap();
        assert_eq!(r.float().to_bits(), 0x7ff8_0000_0000_0001, "{op:?}");
    }
}

/// An op flagged COMMUTATIVE gives bit-identical results with its arguments swapped, for every
/// pair of interesting values. Float addition and multiplication are not: with two NaN
/// operands the result carries the first one's payload, and values compare by their bits.
#[test]
fn commutative_ops_commute_bit_for_bit() {
    use super::semantics::{eval_ovf, eval_pure};
    use super::{Args, Flags, Opcode, Type};
    let ints = [0, 1, -1, 7, i64::MIN, i64::MAX, 0x1234_5678_9abc];
    let floats = [
        0.0,
        -0.0,
        1.5,
        f64::INFINITY,
        f64::NAN,
        f64::from_bits(0xffff_ffff_ffff_ffff),
        f64::from_bits(0x7ff0_0000_0000_0001),
    ];
    let refs = [0usize, 8, 0x1000];
    let values = |t: Type| -> Vec<Value> {
        match t {
            Type::Int => ints.iter().map(|&i| Value::Int(i)).collect(),
            Type::Float => floats.iter().map(|&f| Value::Float(f)).collect(),
            _ => refs.iter().map(|&p| Value::Ref(p)).collect(),
        }
    };
    let mut checked = 0;
    for &op in Opcode::ALL {
        if !op.flags().has(Flags::COMMUTATIVE) {
            continue;
        }
        let Args::Fixed(&[t, _]) = op.args() else {
            panic!("{} is commutative but not binary", op.name());
        };
        for &a in &values(t) {
            for &b in &values(t) {
                let (x, y) = if op.is_ovf() {
                    let f = |p: Value, q: Value| {
                        let (v, o) = eval_ovf(op, p.int(), q.int());
                        Some((Value::Int(v), o))
                    };
                    (f(a, b), f(b, a))
                } else {
                    (
                        eval_pure(op, &[a, b]).map(|v| (v, false)),
                        eval_pure(op, &[b, a]).map(|v| (v, false)),
                    )
                };
                assert_eq!(x, y, "{}({a:?}, {b:?})", op.name());
                checked += 1;
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn alias_classes_wide_and_precise() {
    use crate::ir::may_alias;
    let (i, sx, sy, fx) = (Some("i64"), Some("i64:S.x"), Some("i64:S.y"), Some("f64:S.x"));
    assert!(may_alias(i, i) && may_alias(sx, sx));
    assert!(may_alias(i, sx) && may_alias(sx, i));
    assert!(!may_alias(sx, sy) && !may_alias(Some("f64"), sx));
    assert!(!may_alias(sx, fx));
    // An enum's payload read as two types: the same bytes. The items of two `Vec`s of
    // different types are not.
    let (ip, fp) = (Some("i64:E.payload"), Some("f64:E.payload"));
    assert!(may_alias(ip, fp) && may_alias(fp, ip) && !may_alias(ip, Some("f64:F.payload")));
    assert!(!may_alias(Some("i64:Vec.items"), Some("u8:Vec.items")));
    // The items of the `Vec`s two fields own are apart; those of an unseen `Vec` may be
    // either's, but not a field's.
    let (sv, tv, any) = (Some("i64:S.v.items"), Some("i64:T.v.items"), Some("i64:Vec.items"));
    assert!(!may_alias(sv, tv) && may_alias(any, sv) && may_alias(tv, any));
    assert!(!may_alias(any, sx) && !may_alias(Some("u8:Vec.items"), sv));
    // Enums at two places: their tags and payloads are apart; an enum of unseen place may be
    // at either, and its payload's types overlap theirs.
    let (ts, tt, tu) = (
        Some("E.tag:S.v.items"),
        Some("E.tag:T.v.items"),
        Some("E.tag"),
    );
    assert!(!may_alias(ts, tt) && may_alias(tu, ts) && may_alias(tt, tu));
    assert!(may_alias(Some("E.tag:Vec.items"), ts) && !may_alias(Some("E.tag:S.x"), ts));
    let (is, ft) = (Some("i64:E.payload@S.v.items"), Some("f64:E.payload@T.v.items"));
    let fs = Some("f64:E.payload@S.v.items");
    assert!(may_alias(is, fs) && !may_alias(is, ft) && !may_alias(is, Some("i64:E.payload@T.v.items")));
    assert!(may_alias(fp, is) && may_alias(is, fp) && may_alias(Some("f64:E.payload@Vec.items"), is));
    assert!(!may_alias(Some("i64:F.payload@S.v.items"), is) && may_alias(i, is) && !may_alias(i, fs));
    // A value inside another enum's payload: its tag's bytes are that payload's.
    assert!(may_alias(Some("E.tag:F.payload@S.x"), Some("i64:F.payload")));
    assert!(!may_alias(None, i) && !may_alias(i, None) && !may_alias(None, None));
    // The text form keeps a precise class.
    let t = crate::ir::parse::parse(
        "descr sx = field(offset=0, size=8, kind=i, alias=i64:S.x)\n[p0]\ni1 = getfield_i(p0, descr=sx)\nfinish(i1)",
    )
    .unwrap();
    assert!(t.to_string().contains("alias=i64:S.x"), "{t}");
    let t = crate::ir::parse::parse(
        "descr p = field(offset=8, size=8, kind=i, alias=i64:E.payload@S.v.items)\n[p0]\ni1 = getfield_i(p0, descr=p)\nfinish(i1)",
    )
    .unwrap();
    assert!(t.to_string().contains("alias=i64:E.payload@S.v.items"), "{t}");
    for bad in ["i64:", ":x", "a:b:c", "i@64", "i64@:x", "i64:@x", "i64:x@", "i64:a@b@c"] {
        let text = format!("descr d = field(offset=0, size=8, kind=i, alias={bad})\n[]\nfinish()");
        assert!(crate::ir::parse::parse(&text).is_err(), "{bad}");
    }
}

#[test]
fn a_dry_run_leaves_memory_as_it_was() {
    let t = parse(
        "descr a = field(offset=0, size=8, kind=i, signed)
        descr b = field(offset=8, size=1, kind=i)
        [p0]
        i1 = getfield_i(p0, descr=a)
        i2 = int_add(i1, 300)
        setfield(p0, i2, descr=a)
        setfield(p0, i2, descr=b)
        i3 = getfield_i(p0, descr=a)
        i4 = getfield_i(p0, descr=b)
        finish(i3, i4)",
    )
    .unwrap();
    let mut mem = [5i64, 0];
    let p = Value::Ref(mem.as_mut_ptr() as usize);
    let dry = Run {
        dry: true,
        ..Run::default()
    };
    // The loads after the stores see them (the one-byte field its low byte), the memory
    // does not.
    let want = Outcome::Finish(vec![Value::Int(305), Value::Int(305 & 255)]);
    assert_eq!(dry.run(&t, &[p]).unwrap(), want);
    assert_eq!(mem, [5, 0]);
    // The same run for real.
    assert_eq!(run(&t, &[p]).unwrap(), want);
    assert_eq!(mem, [305, 305 & 255]);
    // No dry run of a trace that calls or allocates.
    let t = parse("descr S = size(size=16, align=8)\n[]\np0 = new(descr=S)\nfinish(p0)").unwrap();
    assert!(dry.run(&t, &[]).is_err());
}
