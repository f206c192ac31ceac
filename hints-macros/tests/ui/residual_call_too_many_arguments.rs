use meta_jit::hints::*;

#[dont_look_inside]
fn seven(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64) -> i64 {
    a + b + c + d + e + f + g
}

// Six integers and eight floats fit.
#[dont_look_inside]
fn fits(a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, x: f64, y: f64, z: f64, w: f64, u: f64, v: f64, s: f64, t: f64) -> f64 {
    (a + b + c + d + e + f) as f64 + x + y + z + w + u + v + s + t
}

fn main() {
    let _ = seven(1, 2, 3, 4, 5, 6, 7);
    let _ = fits(1, 2, 3, 4, 5, 6, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0);
}
