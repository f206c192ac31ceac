use meta_jit::hints::*;

struct Frame {
    n: i64,
}

impl Frame {
    #[look_inside]
    fn get(&self) -> i64 {
        self.n
    }
}

fn main() {}
