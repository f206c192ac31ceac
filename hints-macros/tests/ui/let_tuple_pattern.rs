use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let (a, _b) = (x, x);
    a
}

fn main() {}
