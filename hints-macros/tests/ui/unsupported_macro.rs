use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    println!("{x}");
    x
}

fn main() {}
