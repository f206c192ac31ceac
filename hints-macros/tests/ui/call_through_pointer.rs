use meta_jit::hints::*;

#[derive(JitLayout)]
struct Callback {
    f: fn(i64) -> i64,
}

#[look_inside]
fn f(cb: &Callback, x: i64) -> i64 {
    (cb.f)(x)
}

fn main() {}
