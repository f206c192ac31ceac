use meta_jit::hints::*;

#[look_inside]
fn f(x: &i64) -> i64 {
    match x {
        &0 => 1,
        _ => 2,
    }
}

fn main() {}
