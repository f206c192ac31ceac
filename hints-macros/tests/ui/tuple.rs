use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let _t = (x, x);
    x
}

fn main() {}
