use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let y: i64;
    y = x;
    y
}

fn main() {}
