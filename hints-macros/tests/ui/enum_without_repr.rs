use meta_jit::hints::*;

#[derive(JitLayout)]
enum Op {
    Push(i64),
    Pop,
}

fn main() {}
