use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::interp::{self, Outcome};
use meta_jit::ir::{parse::parse, Value};

#[test]
fn smoke_loop() {
    let t = parse(
        "[i0, i1]
        i2 = int_add(i0, i1)
        i3 = int_sub(i1, 1)
        i4 = int_gt(i3, 0)
        guard_true(i4) [i2, i3]
        jump(i2, i3)",
    )
    .unwrap();
    let mut b = Backend::new();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    println!("{}", b.disassemble(id, &t));
    let end = b.run(id, &[Value::Int(0), Value::Int(10)]).unwrap();
    assert_eq!(
        end.outcome,
        interp::run(&t, &[Value::Int(0), Value::Int(10)]).unwrap()
    );
    let _ = Outcome::Finish(vec![]);
}
