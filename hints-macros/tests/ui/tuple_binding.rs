use meta_jit::hints::*;

#[look_inside]
fn f(x: i64, y: i64) -> i64 {
    match (x, y) {
        (0, _) => 0,
        t => 1,
    }
}

fn main() {}
