use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    x.rem_euclid(7) + 1
}

fn main() {
    f(2);
}
