use meta_jit::hints::*;

#[look_inside]
fn f(x: i64) -> Option<i64> {
    let v = x.checked_add(1)?;
    Some(v)
}

fn main() {}
