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
fn f(s: &Slot) -> i64 {
    match s.value {
        Some(p) => p.x,
        None => 0,
    }
}

fn main() {}
