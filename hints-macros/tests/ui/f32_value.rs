use meta_jit::hints::*;

#[look_inside]
fn f(x: f32) -> f32 {
    x * 2.0
}

fn main() {}
