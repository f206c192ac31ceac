use meta_jit::hints::*;

#[interpreter(greens(pc, program), reds(n))]
fn run(n: i64) -> i64 {
    let mut n = n;
    let mut pc = 0u8;
    loop {
        jit_merge_point!();
        if n == 0 {
            return pc as i64;
        }
        n -= 1;
        pc = pc.wrapping_add(1);
    }
}

fn main() {}
