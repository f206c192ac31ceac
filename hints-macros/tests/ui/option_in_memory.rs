use meta_jit::hints::*;

#[derive(Clone, Copy, JitLayout)]
struct Point {
    x: i64,
    y: i64,
}

#[derive(JitLayout)]
struct Slot {
    value: Option<Point>,
}

#[look_inside]
fn f(s: &Slot, d: &mut Slot) {
    d.value = s.value;
}

fn main() {}
