use meta_jit::hints::*;

#[look_inside]
fn f(mut x: i64) -> i64 {
    while x > 10 {
        x -= 10;
    }
    x
}

fn main() {}
