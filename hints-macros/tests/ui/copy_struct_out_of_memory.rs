use meta_jit::hints::*;

#[derive(Clone, Copy, JitLayout)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(JitLayout)]
struct Holder {
    pair: Pair,
}

#[look_inside]
fn f(h: &Holder) -> i64 {
    let _p = h.pair;
    0
}

fn main() {}
