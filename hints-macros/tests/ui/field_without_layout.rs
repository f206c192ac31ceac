use meta_jit::hints::*;

struct Frame {
    n: i64,
}

#[look_inside]
fn f(frame: &Frame) -> i64 {
    frame.n
}

fn main() {}
