use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let _s = "hello";
    x
}

fn main() {}
