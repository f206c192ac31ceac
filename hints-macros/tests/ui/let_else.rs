use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let y = x else { return 0 };
    y
}

fn main() {}
