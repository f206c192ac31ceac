//! The backend reads a comparison with 0 from the flags the arithmetic op that made the value
//! left (no `test`), and computes `x + c` into a new register with one `lea`: the shapes, and
//! the outcomes against the reference interpreter on values where the sum overflows (after an
//! `add`, OF is the overflow, so `x < 0` must be read from SF alone).

use meta_jit::backend::check::Compiled;
use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::ir::{parse::parse, Value};

const EDGES: [i64; 9] = [0, 1, -1, 2, -2, i64::MAX, i64::MIN, i64::MAX - 1, i64::MIN + 1];

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
    let text = "[i0, i1]\ni2 = int_add(i0, i1)\ni3 = int_gt(i2, 0)\nguard_true(i3) [i2]\nfinish(i2)";
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
    assert!(add[0].starts_with("lea ") && add[0].ends_with("+9]"), "{add:?}");
    let sub = code(text, 2);
    assert_eq!(sub.len(), 1, "{sub:?}");
    assert!(sub[0].starts_with("lea ") && sub[0].ends_with("-3]"), "{sub:?}");
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
