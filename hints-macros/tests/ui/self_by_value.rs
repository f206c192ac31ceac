use meta_jit::hints as jit;

#[derive(Clone, Copy)]
struct Frame {
    n: i64,
}

#[jit::methods]
impl Frame {
    #[jit::look_inside]
    fn get(self) -> i64 {
        self.n
    }
}

fn main() {}
