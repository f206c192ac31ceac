use meta_jit::hints::*;

#[dont_look_inside]
fn bump(x: &mut i64) {
    *x += 1;
}

#[look_inside]
fn f(x: i64) -> i64 {
    let mut y = x;
    bump(&mut y);
    y
}

fn main() {}
