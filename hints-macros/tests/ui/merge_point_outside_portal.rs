use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    jit_merge_point!();
    x
}

fn main() {}
