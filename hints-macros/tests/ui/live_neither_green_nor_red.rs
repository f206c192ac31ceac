use meta_jit::hints as jit;
use meta_jit::hints::*;

#[jit::interpreter(greens(pc), reds(n))]
fn run(n: i64) -> i64 {
    let mut n = n;
    let mut pc = 0u8;
    let mut acc = 0i64;
    loop {
        jit_merge_point!();
        acc += n;
        if n <= 0 {
            return acc;
        }
        n -= 1;
        pc = pc.wrapping_add(1);
    }
}

fn main() {
    run(3);
}
