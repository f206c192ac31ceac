use meta_jit::hints::*;

#[interpreter(greens(pc), reds(n))]
fn run(n: i64) -> i64 {
    let pc = 0;
    n + pc
}

fn main() {}
