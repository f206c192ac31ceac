use meta_jit::hints::*;

#[look_inside]
fn f<T: Copy>(x: T) -> T {
    x
}

fn main() {}
