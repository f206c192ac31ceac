use meta_jit::hints::*;

#[unroll_safe]
fn f(xs: &[i64]) -> i64 {
    let mut s = 0;
    for _x in xs {
        s += 1;
    }
    s
}

fn main() {}
