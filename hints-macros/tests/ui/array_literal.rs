use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let _a = [x, 1, 2];
    x
}

fn main() {}
