use meta_jit::hints::*;

#[look_inside]
fn arith(a: i64, b: i64) -> i64 {
    let c = a * 3 + b;
    if c > 10 {
        c - a
    } else {
        -c
    }
}

#[test]
fn smoke() {
    println!("{}", arith::jitcode());
    for (a, b) in [(1, 2), (5, 7), (-3, 100)] {
        assert_eq!(arith::run_jitcode(a, b), arith(a, b));
    }
}
