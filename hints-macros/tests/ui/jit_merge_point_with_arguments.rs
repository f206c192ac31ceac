use meta_jit::hints as jit;
use meta_jit::hints::*;

#[jit::interpreter(greens(pc), reds(n))]
fn run(n: i64) -> i64 {
    let mut n = n;
    let mut pc = 0u8;
    loop {
        jit_merge_point!(pc, n);
        if n <= 0 {
            return n;
        }
        n -= 1;
        pc = pc.wrapping_add(1);
    }
}

fn main() {
    run(3);
}
