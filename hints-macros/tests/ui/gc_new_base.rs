use meta_jit::hints::*;

#[derive(JitLayout, Trace)]
pub struct Num {
    pub v: i64,
    pub w: i64,
}

#[look_inside]
fn f(x: i64, g: Gc<Num>) -> Gc<Num> {
    Gc::new(Num { v: x, ..*g })
}

fn main() {}
