use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let _g = |y: i64| y + 1;
    x
}

fn main() {}
