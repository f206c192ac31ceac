use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(JitLayout)]
struct Frame {
    n: i64,
}

#[jit::methods]
impl Frame {
    #[look_inside]
    fn get(&self) -> i64 {
        self.n
    }
    fn plain(&self) -> i64 {
        self.n
    }
}

#[look_inside]
fn f(frame: &Frame) -> i64 {
    frame.get() + frame.plain()
}

fn main() {
    f(&Frame { n: 1 });
}
