use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> i64 {
    let y = 'b: {
        if x > 0 {
            break 'b 1;
        }
        2
    };
    y
}

fn main() {}
