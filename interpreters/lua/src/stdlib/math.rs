//! The math library of Lua 5.4, with its xoshiro256** generator (same seeding as PUC Lua, so
//! `math.randomseed(n)` gives the same sequence).

use super::{arg, check_f64, check_int, check_num, nf, register};
use crate::value::Rets;
use crate::value::{float_to_int, Value};
use crate::vm::{LResult, Vm};
use smallvec::smallvec;

fn rotl(x: u64, n: u32) -> u64 {
    x.rotate_left(n)
}

/// The next xoshiro256** output.
pub fn next_rand(s: &mut [u64; 4]) -> u64 {
    let r = rotl(s[1].wrapping_mul(5), 7).wrapping_mul(9);
    let t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    r
}

/// Seeds the generator as PUC Lua's `setseed`.
pub fn set_seed(s: &mut [u64; 4], n1: u64, n2: u64) {
    *s = [n1, 0xff, n2, 0];
    for _ in 0..16 {
        next_rand(s);
    }
}

fn project(mut ran: u64, n: u64, s: &mut [u64; 4]) -> u64 {
    if n & n.wrapping_add(1) == 0 {
        return ran & n;
    }
    let mut lim = n;
    lim |= lim >> 1;
    lim |= lim >> 2;
    lim |= lim >> 4;
    lim |= lim >> 8;
    lim |= lim >> 16;
    lim |= lim >> 32;
    loop {
        ran &= lim;
        if ran <= n {
            return ran;
        }
        ran = next_rand(s);
    }
}

fn random(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let rv = next_rand(&mut vm.rng);
    let (low, up) = match args.len() {
        0 => return Ok(smallvec![Value::Num((rv >> 11) as f64 * (0.5f64).powi(53))]),
        1 => {
            let up = check_int(vm, args, 0)?;
            if up == 0 {
                return Ok(smallvec![Value::Int(rv as i64)]);
            }
            (1, up)
        }
        2 => (check_int(vm, args, 0)?, check_int(vm, args, 1)?),
        _ => return Err(vm.native_error("wrong number of arguments")),
    };
    if low > up {
        return Err(vm.arg_error(1, "interval is empty"));
    }
    let r = project(rv, (up as u64).wrapping_sub(low as u64), &mut vm.rng);
    Ok(smallvec![Value::Int(r.wrapping_add(low as u64) as i64)])
}

fn floor_ceil(vm: &mut Vm, args: &[Value], ceil: bool) -> LResult<Rets> {
    match check_num(vm, args, 0)? {
        Value::Int(i) => Ok(smallvec![Value::Int(i)]),
        Value::Num(f) => {
            let r = if ceil { f.ceil() } else { f.floor() };
            Ok(smallvec![match float_to_int(r) {
                Some(i) => Value::Int(i),
                None => Value::Num(r),
            }])
        }
        _ => unreachable!(),
    }
}

fn minmax(vm: &mut Vm, args: &[Value], max: bool) -> LResult<Rets> {
    if args.is_empty() {
        return Err(vm.arg_error(1, "value expected"));
    }
    let mut best = check_num(vm, args, 0)?;
    for i in 1..args.len() {
        let v = check_num(vm, args, i)?;
        let better = if max {
            vm.less_than(&best, &v)?
        } else {
            vm.less_than(&v, &best)?
        };
        if better {
            best = v;
        }
    }
    Ok(smallvec![best])
}

fn f1(f: fn(f64) -> f64) -> crate::value::NativeFn {
    nf(move |vm, a| Ok(smallvec![Value::Num(f(check_f64(vm, a, 0)?))]))
}

/// Loads the math library.
pub fn open(vm: &mut Vm) {
    set_seed(&mut vm.rng, 0, 0);
    let t = register(
        vm,
        "math",
        vec![
            ("floor", nf(|vm, a| floor_ceil(vm, a, false))),
            ("ceil", nf(|vm, a| floor_ceil(vm, a, true))),
            (
                "abs",
                nf(|vm, a| {
                    Ok(smallvec![match check_num(vm, a, 0)? {
                        Value::Int(i) => Value::Int(i.wrapping_abs()),
                        Value::Num(f) => Value::Num(f.abs()),
                        _ => unreachable!(),
                    }])
                }),
            ),
            ("sqrt", f1(f64::sqrt)),
            ("rad", f1(f64::to_radians)),
            ("deg", f1(f64::to_degrees)),
            ("sin", f1(f64::sin)),
            ("cos", f1(f64::cos)),
            ("tan", f1(f64::tan)),
            ("asin", f1(f64::asin)),
            ("acos", f1(f64::acos)),
            ("exp", f1(f64::exp)),
            (
                "atan",
                nf(|vm, a| {
                    let y = check_f64(vm, a, 0)?;
                    let x = match arg(a, 1) {
                        Value::Nil => 1.0,
                        _ => check_f64(vm, a, 1)?,
                    };
                    Ok(smallvec![Value::Num(y.atan2(x))])
                }),
            ),
            (
                "log",
                nf(|vm, a| {
                    let x = check_f64(vm, a, 0)?;
                    let r = match arg(a, 1) {
                        Value::Nil => x.ln(),
                        _ => {
                            let b = check_f64(vm, a, 1)?;
                            if b == 2.0 {
                                x.log2()
                            } else if b == 10.0 {
                                x.log10()
                            } else {
                                x.ln() / b.ln()
                            }
                        }
                    };
                    Ok(smallvec![Value::Num(r)])
                }),
            ),
            (
                "fmod",
                nf(|vm, a| match (check_num(vm, a, 0)?, check_num(vm, a, 1)?) {
                    (Value::Int(x), Value::Int(y)) => {
                        if y == 0 {
                            return Err(vm.arg_error(2, "zero"));
                        }
                        Ok(smallvec![Value::Int(if y == -1 { 0 } else { x % y })])
                    }
                    (x, y) => Ok(smallvec![Value::Num(
                        x.as_f64().unwrap() % y.as_f64().unwrap()
                    )]),
                }),
            ),
            (
                "modf",
                nf(|vm, a| {
                    if let Value::Int(i) = check_num(vm, a, 0)? {
                        return Ok(smallvec![Value::Int(i), Value::Num(0.0)]);
                    }
                    let x = check_f64(vm, a, 0)?;
                    let ip = if x.is_infinite() { x } else { x.trunc() };
                    let fp = if x == ip { 0.0 } else { x - ip };
                    let ipv = float_to_int(ip).map(Value::Int).unwrap_or(Value::Num(ip));
                    Ok(smallvec![ipv, Value::Num(fp)])
                }),
            ),
            (
                "tointeger",
                nf(|_vm, a| {
                    Ok(smallvec![match arg(a, 0) {
                        Value::Int(i) => Value::Int(*i),
                        Value::Num(f) => float_to_int(*f).map(Value::Int).unwrap_or(Value::Nil),
                        Value::Str(_) => {
                            arg(a, 0).to_integer().map(Value::Int).unwrap_or(Value::Nil)
                        }
                        _ => Value::Nil,
                    }])
                }),
            ),
            (
                "type",
                nf(|vm, a| {
                    if a.is_empty() {
                        return Err(vm.arg_error(1, "value expected"));
                    }
                    Ok(smallvec![match &a[0] {
                        Value::Int(_) => Value::str("integer"),
                        Value::Num(_) => Value::str("float"),
                        _ => Value::Nil,
                    }])
                }),
            ),
            (
                "ult",
                nf(|vm, a| {
                    let x = check_int(vm, a, 0)?;
                    let y = check_int(vm, a, 1)?;
                    Ok(smallvec![Value::Boolean((x as u64) < (y as u64))])
                }),
            ),
            ("max", nf(|vm, a| minmax(vm, a, true))),
            ("min", nf(|vm, a| minmax(vm, a, false))),
            ("random", nf(random)),
            (
                "randomseed",
                nf(|vm, a| {
                    let n1 = match arg(a, 0) {
                        Value::Nil => 0x2545F4914F6CDD1D,
                        Value::Num(f) => float_to_int(*f).unwrap_or(f.to_bits() as i64),
                        _ => check_int(vm, a, 0)?,
                    };
                    let n2 = super::opt_int(vm, a, 1, 0)?;
                    set_seed(&mut vm.rng, n1 as u64, n2 as u64);
                    Ok(smallvec![Value::Int(n1), Value::Int(n2)])
                }),
            ),
        ],
    );
    let tb = t;
    tb.set(Value::interned("pi"), Value::Num(std::f64::consts::PI));
    tb.set(Value::interned("huge"), Value::Num(f64::INFINITY));
    tb.set(Value::interned("maxinteger"), Value::Int(i64::MAX));
    tb.set(Value::interned("mininteger"), Value::Int(i64::MIN));
}
