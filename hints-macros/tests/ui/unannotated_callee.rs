use meta_jit::hints::*;

fn helper(x: i64) -> i64 {
    x + 1
}

#[look_inside]
fn f(x: i64) -> i64 {
    helper(x)
}

fn main() {
    f(1);
}
