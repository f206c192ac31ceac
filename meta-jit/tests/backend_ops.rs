//! Every pure op, compiled, against the reference interpreter: on edge values (overflow,
//! MIN/MAX, NaN, -0.0, shift counts >= 64, division by 0 and MIN / -1, signed and unsigned
//! float-to-int saturation, unsigned values at and above 2^63), with its operands in registers, as constants on either side, the same value
//! twice, spilled to the frame under register pressure, kept alive or dying, and (comparisons)
//! fused with the guard that reads them. Traces are written in the IR text form.

use meta_jit::backend::check::Compiled;
use meta_jit::interp::Outcome;
use meta_jit::ir::parse::parse;
use meta_jit::ir::{Args, Opcode, Type, Value};

const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    -2,
    3,
    7,
    -7,
    63,
    64,
    65,
    127,
    -128,
    255,
    256,
    0x7fff,
    -0x8000,
    0xffff,
    i32::MAX as i64,
    i32::MIN as i64,
    u32::MAX as i64,
    1 << 32,
    i64::MAX,
    i64::MIN,
    i64::MIN + 1,
    i64::MAX - 1,
    0x5555_5555_5555_5555,
    -0x1234_5678_9abc_def0,
    1_000_003,
    // Above 2^63 as unsigned: u64 to f64 rounds ties to even, odd halves up.
    0x8000_0000_0000_0401u64 as i64,
    0x8000_0000_0000_0400u64 as i64,
    0xffff_ffff_ffff_fbffu64 as i64,
];

fn floats() -> Vec<f64> {
    let two63 = 9_223_372_036_854_775_808.0f64;
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.0,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7ff8_0000_0000_0000),
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::from_bits(0xfff8_0000_0000_0000),
        f64::from_bits(0x7ff8_dead_beef_0001),
        two63,
        -two63,
        9_223_372_036_854_774_784.0,
        -9_223_372_036_854_777_856.0,
        1e19,
        -1e19,
        // 2^64 and the largest double below it (float to u64 saturates at the first).
        18_446_744_073_709_551_616.0,
        18_446_744_073_709_549_568.0,
        4_294_967_296.5,
        -0.9999,
        123_456_789.75,
    ]
}

const PTRS: &[usize] = &[0, 1, 0x1000, usize::MAX, 0x7fff_ffff_ffff_fff0];

fn edge_values(t: Type) -> Vec<Value> {
    match t {
        Type::Int => INTS.iter().map(|&i| Value::Int(i)).collect(),
        Type::Float => floats().into_iter().map(Value::Float).collect(),
        _ => PTRS.iter().map(|&p| Value::Ref(p)).collect(),
    }
}

/// A constant in the text form.
fn lit(v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Ref(p) => format!("ConstPtr({p:#x})"),
        Value::Float(f) if f.is_nan() => format!("nan({:#x})", f.to_bits()),
        Value::Float(f) if f.is_infinite() => (if f > 0.0 { "inf" } else { "-inf" }).into(),
        Value::Float(f) => format!("{f:?}"),
    }
}

fn letter(t: Type) -> char {
    t.letter()
}

/// The pure, non-call ops and their argument types.
fn pure_ops() -> Vec<(Opcode, Vec<Type>)> {
    Opcode::ALL
        .iter()
        .filter(|o| o.is_pure() && !o.is_call())
        .map(|&o| match o.args() {
            Args::Fixed(ts) => (o, ts.to_vec()),
            Args::Variadic => unreachable!("pure non-call ops have fixed arguments"),
        })
        .collect()
}

/// All argument tuples to try for an op.
fn tuples(op: Opcode, tys: &[Type]) -> Vec<Vec<Value>> {
    if op == Opcode::IntSignext {
        return INTS.iter().map(|&i| vec![Value::Int(i)]).collect();
    }
    match tys {
        [a] => edge_values(*a).into_iter().map(|v| vec![v]).collect(),
        [a, b] => {
            let mut out = Vec::new();
            for x in edge_values(*a) {
                for y in edge_values(*b) {
                    out.push(vec![x, y]);
                }
            }
            out
        }
        _ => unreachable!(),
    }
}

/// Builds `[inputs] r = op(args); finish(...)` with `args[k]` either input `k` or a constant.
fn op_trace(op: Opcode, tys: &[Type], consts: &[Option<Value>], tail: &str) -> String {
    let mut header = Vec::new();
    let mut args = Vec::new();
    for (k, t) in tys.iter().enumerate() {
        match consts.get(k).copied().flatten() {
            Some(c) => args.push(lit(c)),
            None => {
                let n = format!("{}a{k}", letter(*t));
                header.push(n.clone());
                args.push(n);
            }
        }
    }
    let r = format!("{}r", letter(op.result()));
    format!(
        "[{}]\n{r} = {}({})\n{}",
        header.join(", "),
        op.name(),
        args.join(", "),
        tail.replace("R", &r)
    )
}

fn check_all(text: &str, inputs: &[Vec<Value>]) -> usize {
    let t = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let c = Compiled::new(t);
    for ins in inputs {
        c.check(ins);
    }
    inputs.len()
}

/// Runs `op` on every tuple with operands as inputs, as constants, and both constants.
fn check_op_forms(op: Opcode, tys: &[Type], signext: Option<i64>) -> usize {
    let mut runs = 0;
    let extra: Vec<Option<Value>> = match signext {
        Some(n) => vec![None, Some(Value::Int(n))],
        None => vec![],
    };
    let tail = "finish(R)";
    let all = tuples(op, tys);
    let with_extra = |c: Vec<Option<Value>>| -> Vec<Option<Value>> {
        if extra.is_empty() {
            c
        } else {
            vec![c[0], extra[1]]
        }
    };
    // Register operands, dying at the op, then kept alive.
    let none = with_extra(vec![None; tys.len()]);
    let text = op_trace(op, tys, &none, tail);
    runs += check_all(&text, &all);
    let names: Vec<String> = tys
        .iter()
        .enumerate()
        .take(if signext.is_some() { 1 } else { tys.len() })
        .map(|(k, t)| format!("{}a{k}", letter(*t)))
        .collect();
    let keep = format!("finish(R, {})", names.join(", "));
    runs += check_all(&op_trace(op, tys, &none, &keep), &all);
    // One operand constant, on either side.
    let arity = if signext.is_some() { 1 } else { tys.len() };
    for k in 0..arity {
        for c in edge_values(tys[k]) {
            let mut consts = vec![None; tys.len()];
            consts[k] = Some(c);
            let consts = with_extra(consts);
            let inputs: Vec<Vec<Value>> = all
                .iter()
                .filter(|t| t[k] == c)
                .map(|t| {
                    t.iter()
                        .enumerate()
                        .filter(|&(j, _)| j != k && j < arity)
                        .map(|(_, v)| *v)
                        .collect()
                })
                .collect();
            let inputs = if arity == 1 { vec![vec![]] } else { inputs };
            runs += check_all(&op_trace(op, tys, &consts, tail), &inputs);
        }
    }
    // The same value on both sides.
    if arity == 2 && tys[0] == tys[1] {
        let n = format!("{}a0", letter(tys[0]));
        let r = format!("{}r", letter(op.result()));
        let text = format!("[{n}]\n{r} = {}({n}, {n})\nfinish({r})", op.name());
        let inputs: Vec<Vec<Value>> = edge_values(tys[0]).into_iter().map(|v| vec![v]).collect();
        runs += check_all(&text, &inputs);
    }
    runs
}

/// Runs `op` with every register of both classes holding a live value, so that operands
/// come from spill slots and the result evicts something.
fn check_op_spilled(op: Opcode, tys: &[Type], signext: Option<i64>) -> usize {
    let fillers_i: Vec<String> = (0..14).map(|k| format!("ix{k}")).collect();
    let fillers_f: Vec<String> = (0..16).map(|k| format!("fx{k}")).collect();
    let arity = if signext.is_some() { 1 } else { tys.len() };
    let names: Vec<String> = tys[..arity]
        .iter()
        .enumerate()
        .map(|(k, t)| format!("{}a{k}", letter(*t)))
        .collect();
    let mut header = fillers_i.clone();
    header.extend(fillers_f.iter().cloned());
    header.extend(names.iter().cloned());
    let mut args = names.clone();
    if let Some(n) = signext {
        args.push(n.to_string());
    }
    let r = format!("{}r", letter(op.result()));
    let mut keep = vec![r.clone()];
    keep.extend(fillers_i.iter().cloned());
    keep.extend(fillers_f.iter().cloned());
    keep.extend(names.iter().cloned());
    let text = format!(
        "[{}]\n{r} = {}({})\nfinish({})",
        header.join(", "),
        op.name(),
        args.join(", "),
        keep.join(", ")
    );
    let mut inputs = Vec::new();
    for t in tuples(op, tys) {
        let mut v: Vec<Value> = (0..14).map(|k| Value::Int(k * 1000 + 1)).collect();
        v.extend((0..16).map(|k| Value::Float(k as f64 + 0.25)));
        v.extend(t.into_iter().take(arity));
        inputs.push(v);
    }
    check_all(&text, &inputs)
}

/// A comparison fused with `guard_true` / `guard_false`, the guard saving both operands.
fn check_compare_fused(op: Opcode, tys: &[Type]) -> usize {
    let mut runs = 0;
    let all = tuples(op, tys);
    for guard in ["guard_true", "guard_false"] {
        let names: Vec<String> = tys
            .iter()
            .enumerate()
            .map(|(k, t)| format!("{}a{k}", letter(*t)))
            .collect();
        let tail = format!("{guard}(R) [{}]\nfinish({})", names.join(", "), names[0]);
        runs += check_all(&op_trace(op, tys, &vec![None; tys.len()], &tail), &all);
        // With a constant on either side.
        for k in 0..tys.len() {
            for c in edge_values(tys[k]).into_iter().step_by(3) {
                let mut consts = vec![None; tys.len()];
                consts[k] = Some(c);
                let live: Vec<String> = names
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != k)
                    .map(|(_, n)| n.clone())
                    .collect();
                let fin = live.first().cloned().unwrap_or_else(|| "0".into());
                let tail = format!("{guard}(R) [{}]\nfinish({fin})", live.join(", "));
                let inputs: Vec<Vec<Value>> = all
                    .iter()
                    .filter(|t| t[k] == c)
                    .map(|t| {
                        t.iter()
                            .enumerate()
                            .filter(|&(j, _)| j != k)
                            .map(|(_, v)| *v)
                            .collect()
                    })
                    .collect();
                let inputs = if tys.len() == 1 { vec![vec![]] } else { inputs };
                runs += check_all(&op_trace(op, tys, &consts, &tail), &inputs);
            }
        }
    }
    runs
}

#[test]
fn every_pure_op_on_edge_values() {
    let mut runs = 0;
    let ops = pure_ops();
    assert!(ops.len() >= 57, "the table lost ops: {}", ops.len());
    for (op, tys) in &ops {
        if *op == Opcode::IntSignext {
            for n in [1, 2, 4, 8] {
                runs += check_op_forms(*op, tys, Some(n));
                runs += check_op_spilled(*op, tys, Some(n));
            }
            continue;
        }
        runs += check_op_forms(*op, tys, None);
        runs += check_op_spilled(*op, tys, None);
        if op.is_comparison() {
            runs += check_compare_fused(*op, tys);
        }
    }
    assert!(runs > 150_000, "only {runs} runs");
}

#[test]
fn overflow_checked_ops() {
    for op in ["int_add_ovf", "int_sub_ovf", "int_mul_ovf"] {
        for guard in ["guard_no_overflow", "guard_overflow"] {
            let pairs: Vec<Vec<Value>> = INTS
                .iter()
                .flat_map(|&a| {
                    INTS.iter()
                        .map(move |&b| vec![Value::Int(a), Value::Int(b)])
                })
                .collect();
            let text = format!("[ia, ib]\nir = {op}(ia, ib)\n{guard}() [ia, ir]\nfinish(ir, ib)");
            check_all(&text, &pairs);
            // The result dies at the guard; the operands stay alive.
            let text = format!("[ia, ib]\nir = {op}(ia, ib)\n{guard}() [ib]\nfinish(ia)");
            check_all(&text, &pairs);
            for &c in INTS {
                let ones: Vec<Vec<Value>> = INTS.iter().map(|&a| vec![Value::Int(a)]).collect();
                let text = format!("[ia]\nir = {op}(ia, {c})\n{guard}() [ir]\nfinish(ir)");
                check_all(&text, &ones);
                let text = format!("[ia]\nir = {op}({c}, ia)\n{guard}() [ir, ia]\nfinish(ir)");
                check_all(&text, &ones);
            }
        }
    }
}

#[test]
fn outcomes_are_the_interpreters() {
    // A sanity check that the comparison is not vacuous: a finish with values comes back.
    let c = Compiled::new(parse("[ia, fb]\nic = int_add(ia, 1)\nfinish(ic, fb, 7, -0.0)").unwrap());
    let out = c.check(&[Value::Int(41), Value::Float(0.5)]);
    assert_eq!(
        out,
        Outcome::Finish(vec![
            Value::Int(42),
            Value::Float(0.5),
            Value::Int(7),
            Value::Float(-0.0)
        ])
    );
}

/// A signed division or remainder by a constant power of two compiles to shifts, an add and
/// (for the remainder) an `and` and a `sub`: no `idiv`, whose latency is tens of cycles (a
/// register window `base = (depth % 64) * 4` paid it on every guest call). Its results are
/// checked against the interpreter on the edge values by `every_pure_op_on_edge_values`
/// (the constants 2, 64 and 256 are powers of two).
#[test]
fn division_by_a_power_of_two_has_no_idiv() {
    for (op, want) in [("int_floordiv", 5), ("int_mod", 7)] {
        let c = Compiled::new(parse(&format!("[i0]\ni1 = {op}(i0, 64)\nfinish(i1)")).unwrap());
        let code = c.backend.op_code(c.id, 1);
        assert!(code.iter().all(|i| !i.contains("div")), "{op}: {code:#?}");
        assert!(code.len() <= want, "{op}: {code:#?}");
        for x in [-129, -64, -63, -1, 0, 1, 63, 64, 65, i64::MIN, i64::MAX] {
            let got = c.compare_with(&[Value::Int(x)], &Default::default(), &mut || {});
            assert!(got.is_ok(), "{op}({x}, 64): {got:?}");
        }
    }
}

/// A signed division or remainder by any other constant (not 0, not a power of two in
/// absolute value) is a multiplication by a magic number, shifts and adds: no `idiv`. The
/// divisors and dividends are the edge values and pseudo-random ones, each compiled result
/// compared with the interpreter's (`wrapping_div`/`wrapping_rem`).
#[test]
fn division_by_a_constant_is_a_multiplication() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut divisors: Vec<i64> = vec![
        3,
        5,
        6,
        7,
        10,
        12,
        25,
        100,
        125,
        641,
        1000,
        7919,
        -3,
        -5,
        -7,
        -10,
        -1000,
        3 << 40,
        (1 << 62) + 1,
        (1 << 62) - 1,
        i64::MAX,
        i64::MIN + 1,
        i64::MAX - 1,
        0x5555_5555_5555_5555,
    ];
    for k in 0..40 {
        // Random divisors of every size, from 2 bits to 63.
        let d = (next() >> (k % 62)) as i64;
        divisors.push(if k % 3 == 0 { d.wrapping_neg() } else { d });
    }
    let mut dividends: Vec<i64> = INTS.to_vec();
    dividends.extend((0..60).map(|k| (next() >> (k % 64)) as i64));
    dividends.extend((0..20).map(|_| next() as i64));
    let mut checked = 0;
    for &d in &divisors {
        if d == 0 || d.unsigned_abs().is_power_of_two() {
            continue;
        }
        for op in ["int_floordiv", "int_mod"] {
            let c = Compiled::new(parse(&format!("[i0]\ni1 = {op}(i0, {d})\nfinish(i1)")).unwrap());
            let code = c.backend.op_code(c.id, 1);
            assert!(
                code.iter().all(|i| !i.contains("div")),
                "{op} by {d}: {code:#?}"
            );
            for &x in &dividends {
                let got = c.compare_with(&[Value::Int(x)], &Default::default(), &mut || {});
                assert!(got.is_ok(), "{op}({x}, {d}): {got:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}
