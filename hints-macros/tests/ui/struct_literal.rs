use meta_jit::hints::*;

struct Point {
    x: i64,
}

#[look_inside]
fn f(x: i64) -> i64 {
    let _p = Point { x };
    x
}

fn main() {}
