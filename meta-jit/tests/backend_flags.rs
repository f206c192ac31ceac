//! The backend reads a comparison with 0 from the flags the arithmetic op that made the value
//! left (no `test`), and computes `x + c` into a new register with one `lea`: the shapes, and
//! the outcomes against the reference interpreter on values where the sum overflows (after an
//! `add`, OF is the overflow, so `x < 0` must be read from SF alone).

use meta_jit::backend::check::Compiled;
use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::ir::{parse::parse, Value};

const EDGES: [i64; 9] = [
    0,
    1,
    -1,
    2,
    -2,
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
    i64::MIN + 1,
];

/// The instructions of op `i` of `text`, compiled.
fn code(text: &str, i: usize) -> Vec<String> {
    let t = parse(text).unwrap();
    let mut b = Backend::new();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    b.op_code(id, i)
}

#[test]
fn a_guard_on_a_sum_compared_with_zero_reads_the_adds_flags() {
    for (cmp, jcc) in [
        ("int_lt", "js"),
        ("int_ge", "jns"),
        ("int_eq", "je"),
        ("int_ne", "jne"),
    ] {
        let text = format!(
            "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = {cmp}(i2, 0)\nguard_false(i3) [i2]\nfinish(i2)"
        );
        // Op 4 is the guard: its jump alone, no `test`.
        let guard = code(&text, 4);
        assert_eq!(guard.len(), 1, "{cmp}: {guard:?}");
        assert!(guard[0].starts_with(jcc), "{cmp}: {guard:?}");
    }
    // `x > 0` reads OF: it keeps its `test`.
    let text =
        "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_gt(i2, 0)\nguard_true(i3) [i2]\nfinish(i2)";
    assert_eq!(code(text, 4).len(), 2);
    // A store between the sum and the guard leaves the flags alone; a call does not.
    let store = "descr x = field(offset=0, size=8, kind=i, signed)
[p0, i1]
i2 = int_and(i1, 255)
setfield(p0, i2, descr=x)
guard_true(i2) [i2]
finish(i2)";
    assert_eq!(code(store, 4).len(), 1, "{:?}", code(store, 4));
}

#[test]
fn a_sum_into_a_new_register_is_one_lea() {
    let text = "[i0]\ni1 = int_add(i0, 9)\ni2 = int_sub(i0, 3)\nfinish(i0, i1, i2)";
    let add = code(text, 1);
    assert_eq!(add.len(), 1, "{add:?}");
    assert!(
        add[0].starts_with("lea ") && add[0].ends_with("+9]"),
        "{add:?}"
    );
    let sub = code(text, 2);
    assert_eq!(sub.len(), 1, "{sub:?}");
    assert!(
        sub[0].starts_with("lea ") && sub[0].ends_with("-3]"),
        "{sub:?}"
    );
}

#[test]
fn flag_reads_agree_with_the_interpreter() {
    let mut runs = 0;
    for op in ["int_add", "int_sub", "int_and", "int_or", "int_xor"] {
        for cmp in ["int_lt", "int_ge", "int_eq", "int_ne", "int_gt", "int_le"] {
            for guard in ["guard_true", "guard_false"] {
                // Operands in registers, the right one a constant, and the value read again
                // after the guard (so the `lea` path and the flag path both run).
                let forms = [
                    format!("[i0, i1]\ni2 = {op}(i0, i1)\ni3 = {cmp}(i2, 0)\n{guard}(i3) [i2]\nfinish(i2, 1)"),
                    format!("[i0, i1]\ni2 = {op}(i0, 1)\ni3 = {cmp}(i2, 0)\n{guard}(i3) [i2, i0]\nfinish(i2, i0)"),
                    format!("[i0, i1]\ni2 = {op}(i0, -1)\ni3 = {cmp}(0, i2)\n{guard}(i3) [i2, i0]\nfinish(i2, i0)"),
                    format!("[i0, i1]\ni2 = {op}(i0, i1)\ni4 = int_add(i0, 7)\ni3 = {cmp}(i2, 0)\n{guard}(i3) [i2, i4]\nfinish(i4, i0)"),
                    format!("[i0, i1]\ni2 = {op}(i0, i1)\n{guard}(i2) [i2]\nfinish(i2, i1)"),
                ];
                for text in &forms {
                    let c = Compiled::new(parse(text).unwrap_or_else(|e| panic!("{e}\n{text}")));
                    for &x in &EDGES {
                        for &y in &EDGES {
                            c.check(&[Value::Int(x), Value::Int(y)]);
                            runs += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(runs > 10_000);
}

#[test]
fn a_loop_on_the_flags_of_its_counter_agrees_with_the_interpreter() {
    // The counter is compared with 0 right after its `add`, in the loop body, and the label
    // in between must forget the flags of the preamble's `add`.
    let text = "[i0, i1]
i2 = int_add(i0, -1)
i3 = int_ne(i2, 0)
guard_true(i3) [i2, i1]
label(i2, i1)
i4 = int_add(i1, i2)
i5 = int_add(i2, -1)
i6 = int_ne(i5, 0)
guard_true(i6) [i5, i4]
jump(i5, i4)";
    let c = Compiled::new(parse(text).unwrap());
    for n in [1, 2, 3, 100] {
        c.check(&[Value::Int(n), Value::Int(0)]);
    }
}

#[test]
fn a_byte_plus_a_constant_masked_is_one_byte_add() {
    // A cell of a byte tape: loaded, `+ c`, masked, stored, tested. The sum and its mask are
    // one `add` of the low byte; the guard reads its ZF.
    let text = "descr b = array(base=0, item=1, kind=i)
[p0, i1]
i2 = getarrayitem_i(p0, i1, descr=b)
i3 = int_add(i2, 255)
i4 = int_and(i3, 255)
setarrayitem(p0, i1, i4, descr=b)
i5 = int_ne(i4, 0)
guard_true(i5) [i4]
finish(i4)";
    let add = code(text, 3);
    assert_eq!(add.len(), 1, "{add:?}");
    assert!(
        add[0].starts_with("add ") && add[0].ends_with(",0FFh"),
        "{add:?}"
    );
    assert!(code(text, 4).is_empty());
    let guard = code(text, 7);
    assert_eq!(guard.len(), 1, "{guard:?}");
}

#[test]
fn byte_sums_agree_with_the_interpreter() {
    let mut runs = 0;
    let mut cell = [0u8; 2];
    let consts = [
        0i64,
        1,
        -1,
        127,
        128,
        255,
        256,
        1000,
        -1000,
        i64::MAX,
        i64::MIN,
    ];
    for c in consts {
        for (op, mask) in [
            ("int_add", "int_and(i3, 255)"),
            ("int_sub", "int_and(255, i3)"),
            ("int_add", "int_and(i3, 127)"),
        ] {
            for cmp in ["int_ne", "int_eq", "int_lt", "int_ge"] {
                // From a byte load (dying at the sum, or read again after it), and from a mask.
                let forms = [
                    format!("descr b = array(base=0, item=1, kind=i)\n[p0, i1]\ni2 = getarrayitem_i(p0, 0, descr=b)\ni3 = {op}(i2, {c})\ni4 = {mask}\nsetarrayitem(p0, 1, i4, descr=b)\ni5 = {cmp}(i4, 0)\nguard_true(i5) [i4]\nfinish(i4)"),
                    format!("descr b = array(base=0, item=1, kind=i)\n[p0, i1]\ni2 = getarrayitem_i(p0, 0, descr=b)\ni3 = {op}(i2, {c})\ni4 = {mask}\ni5 = {cmp}(i4, 0)\nguard_false(i5) [i4, i2]\nfinish(i4, i2)"),
                    format!("descr b = array(base=0, item=1, kind=i)\n[p0, i1]\ni2 = int_and(i1, 255)\ni3 = {op}(i2, {c})\ni4 = {mask}\ni5 = {cmp}(i4, 0)\nguard_true(i5) [i4, i2]\nfinish(i4, i2, i1)"),
                    format!("descr b = array(base=0, item=1, kind=i)\n[p0, i1]\ni2 = int_and(i1, 200)\ni3 = {op}(i2, {c})\ni4 = {mask}\nguard_true(i4) [i4]\nfinish(i4, i1)"),
                ];
                for text in &forms {
                    let c = Compiled::new(parse(text).unwrap_or_else(|e| panic!("{e}\n{text}")));
                    for x in [0u8, 1, 2, 127, 128, 129, 200, 254, 255] {
                        for y in [0i64, 1, 255, 256, -1, 0x1234] {
                            let p = Value::Ref(cell.as_mut_ptr() as usize);
                            let ins = [p, Value::Int(y + x as i64)];
                            cell = [x, 9];
                            let want = meta_jit::interp::run(&c.trace, &ins).unwrap();
                            let after_interp = cell;
                            cell = [x, 9];
                            let got = c.backend.run(c.id, &ins).unwrap().outcome;
                            assert_eq!(got, want, "{text}\nx={x} y={y}");
                            assert_eq!(cell, after_interp, "{text}\nx={x} y={y}");
                            runs += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(runs > 20_000);
}
