use meta_jit::hints::*;

#[look_inside]
fn f(x: &i64) -> i64 {
    unsafe { *(x as *const i64) }
}

fn main() {}
