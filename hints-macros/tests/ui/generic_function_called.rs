use meta_jit::hints::*;

#[look_inside]
fn id<T: Copy>(x: T) -> T {
    x
}

#[look_inside]
fn f(x: i64) -> i64 {
    id(x) + 1
}

fn main() {
    f(1);
}
