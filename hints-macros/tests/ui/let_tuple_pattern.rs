use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let (a, ..) = (x, x);
    a
}

fn main() {}
