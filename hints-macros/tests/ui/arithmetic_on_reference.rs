use meta_jit::hints::*;

#[derive(PartialEq, JitLayout)]
struct Frame {
    n: i64,
}

#[look_inside]
fn f(a: &Frame, b: &Frame) -> bool {
    a == b
}

fn main() {}
