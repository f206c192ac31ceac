use meta_jit::hints::*;

#[look_inside]
fn f(x: i64, y: i64) -> i64 {
    i64::midpoint(x, y)
}

fn main() {
    f(1, 2);
}
