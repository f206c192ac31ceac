use meta_jit::hints::*;

#[dont_look_inside]
fn sum(p: (i64, i64)) -> i64 {
    p.0 + p.1
}

#[look_inside]
fn f(x: i64) -> i64 {
    let t = (x, x);
    sum(t)
}

fn main() {}
