use meta_jit::hints::*;

#[dont_look_inside(writes_nothing)]
fn bump(x: &mut i64) {
    *x += 1;
}

#[dont_look_inside(writes_anything)]
fn other(x: i64) -> i64 {
    x
}

fn main() {
    let mut x = 1;
    bump(&mut x);
    other(x);
}
