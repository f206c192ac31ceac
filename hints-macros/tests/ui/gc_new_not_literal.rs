use meta_jit::hints::*;

#[derive(JitLayout, Trace)]
pub struct Num {
    pub v: i64,
}

#[look_inside]
fn f(g: Gc<Num>) -> Gc<Gc<Num>> {
    Gc::new(g)
}

fn main() {}
