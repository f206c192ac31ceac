use meta_jit::hints::*;

// A struct literal is a value only for a struct with `#[derive(JitLayout)]`.
struct Point {
    x: i64,
}

#[look_inside]
fn f(x: i64) -> i64 {
    let _p = Point { x };
    x
}

fn main() {}
