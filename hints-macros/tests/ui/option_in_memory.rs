use meta_jit::hints::*;

#[derive(JitLayout)]
struct Slot {
    value: Option<i64>,
}

#[look_inside]
fn f(s: &Slot) -> Option<i64> {
    s.value
}

fn main() {}
