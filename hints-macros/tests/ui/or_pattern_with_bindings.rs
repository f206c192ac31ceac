use meta_jit::hints::*;

#[derive(Clone, Copy, JitLayout)]
#[repr(u8)]
enum Op {
    A(i64),
    B(i64),
}

#[derive(JitLayout)]
struct Code {
    op: Op,
}

#[look_inside]
fn f(code: &Code) -> i64 {
    match code.op {
        Op::A(v) | Op::B(v) => v,
    }
}

fn main() {}
