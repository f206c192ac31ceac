use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let _r = 0..x;
    x
}

fn main() {}
