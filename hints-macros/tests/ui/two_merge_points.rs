use meta_jit::hints::*;

#[interpreter(greens(pc), reds(n))]
fn run(n: i64) -> i64 {
    let mut n = n;
    let pc = 0u8;
    loop {
        jit_merge_point!();
        jit_merge_point!();
        if n == 0 {
            return pc as i64;
        }
        n -= 1;
    }
}

fn main() {}
