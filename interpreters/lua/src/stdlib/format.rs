//! C-style number formatting (`%e %f %g %a` with flags, width and precision) and
//! `string.format`. Lua's own `tostring` of floats uses [`fmt_g`] with precision 14.

use super::{arg, check_f64, check_int, check_str};
use crate::value::Rets;
use crate::value::Value;
use crate::vm::{LResult, Vm};
use smallvec::smallvec;

/// `%.{prec}e` as C prints it (`1.5e+02`).
pub fn fmt_e(x: f64, prec: usize, upper: bool) -> String {
    if !x.is_finite() {
        return non_finite(x, upper);
    }
    let s = format!("{:.*e}", prec, x);
    let (m, e) = s.split_once('e').unwrap();
    let e: i32 = e.parse().unwrap();
    let r = format!("{}e{}{:02}", m, if e < 0 { '-' } else { '+' }, e.abs());
    if upper {
        r.to_uppercase()
    } else {
        r
    }
}

fn non_finite(x: f64, upper: bool) -> String {
    let s = if x.is_nan() {
        if x.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
    } else if x < 0.0 {
        "-inf"
    } else {
        "inf"
    };
    if upper {
        s.to_uppercase()
    } else {
        s.to_string()
    }
}

/// `%.{prec}f`.
pub fn fmt_f(x: f64, prec: usize, upper: bool) -> String {
    if !x.is_finite() {
        return non_finite(x, upper);
    }
    format!("{:.*}", prec, x)
}

/// `%.{prec}g` (`alt`: the `#` flag keeps trailing zeros).
pub fn fmt_g(x: f64, prec: usize, alt: bool, upper: bool) -> String {
    if !x.is_finite() {
        return non_finite(x, upper);
    }
    let p = if prec == 0 { 1 } else { prec };
    let es = format!("{:.*e}", p - 1, x);
    let exp: i32 = es.split_once('e').unwrap().1.parse().unwrap();
    let mut s = if (exp as i64) < p as i64 && exp >= -4 {
        format!("{:.*}", (p as i64 - 1 - exp as i64) as usize, x)
    } else {
        fmt_e(x, p - 1, upper)
    };
    if !alt {
        // Strip trailing zeros of the fraction.
        let (mant, rest) = match s.find(['e', 'E']) {
            Some(i) => (s[..i].to_string(), s[i..].to_string()),
            None => (s.clone(), String::new()),
        };
        if mant.contains('.') {
            let m = mant.trim_end_matches('0').trim_end_matches('.');
            s = format!("{m}{rest}");
        }
    }
    s
}

/// `%a`: a hexadecimal float as C prints it (`0x1.8p+1`).
pub fn fmt_a(x: f64, prec: Option<usize>, upper: bool) -> String {
    if !x.is_finite() {
        return non_finite(x, upper);
    }
    let bits = x.to_bits();
    let neg = bits >> 63 != 0;
    let exp_bits = ((bits >> 52) & 0x7ff) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    let (lead, exp) = if exp_bits == 0 {
        if mant == 0 {
            (0, 0)
        } else {
            (0, -1022)
        }
    } else {
        (1, exp_bits - 1023)
    };
    let mut lead = lead;
    let mut digits = format!("{:013x}", mant);
    if let Some(p) = prec {
        if p < 13 {
            // Round to p hex digits (half to even).
            let shift = (13 - p) * 4;
            let rem = mant & ((1u64 << shift) - 1);
            let half = 1u64 << (shift - 1);
            mant >>= shift;
            if rem > half || (rem == half && mant & 1 == 1) {
                mant += 1;
                if p == 0 || mant >> (p * 4) != 0 {
                    lead += 1;
                    mant &= if p == 0 { 0 } else { (1u64 << (p * 4)) - 1 };
                }
            }
            digits = if p == 0 {
                String::new()
            } else {
                format!("{:0width$x}", mant, width = p)
            };
        } else {
            digits.push_str(&"0".repeat(p - 13));
        }
    } else {
        digits = digits.trim_end_matches('0').to_string();
    }
    let s = format!(
        "{}0x{}{}{}p{}{}",
        if neg { "-" } else { "" },
        lead,
        if digits.is_empty() { "" } else { "." },
        digits,
        if exp < 0 { "-" } else { "+" },
        exp.abs()
    );
    if upper {
        s.to_uppercase()
    } else {
        s
    }
}

struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

fn pad(spec: &Spec, body: String, numeric: bool) -> String {
    if body.len() >= spec.width {
        return body;
    }
    let fill = spec.width - body.len();
    if spec.minus {
        format!("{body}{}", " ".repeat(fill))
    } else if spec.zero && numeric {
        let (sign, rest) = if body.starts_with(['-', '+', ' ']) {
            body.split_at(1)
        } else {
            ("", body.as_str())
        };
        let (pfx, rest) = if rest.starts_with("0x") || rest.starts_with("0X") {
            rest.split_at(2)
        } else {
            ("", rest)
        };
        format!("{sign}{pfx}{}{rest}", "0".repeat(fill))
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}

fn sign(spec: &Spec, neg: bool) -> &'static str {
    if neg {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    }
}

fn quote(vm: &mut Vm, v: &Value, out: &mut Vec<u8>) -> LResult<()> {
    match v {
        Value::Str(s) => {
            out.push(b'"');
            let b = &s.bytes;
            for (i, &c) in b.iter().enumerate() {
                match c {
                    b'"' => out.extend_from_slice(b"\\\""),
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\n' => out.extend_from_slice(b"\\\n"),
                    0 => {
                        if b.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                            out.extend_from_slice(b"\\000")
                        } else {
                            out.extend_from_slice(b"\\0")
                        }
                    }
                    c if c < 32 || c == 127 => {
                        if b.get(i + 1).is_some_and(|d| d.is_ascii_digit()) {
                            out.extend_from_slice(format!("\\{:03}", c).as_bytes())
                        } else {
                            out.extend_from_slice(format!("\\{}", c).as_bytes())
                        }
                    }
                    c => out.push(c),
                }
            }
            out.push(b'"');
        }
        Value::Int(i) => {
            if *i == i64::MIN {
                out.extend_from_slice(b"0x8000000000000000");
            } else {
                out.extend_from_slice(i.to_string().as_bytes());
            }
        }
        Value::Num(f) => {
            let s = if f.is_infinite() {
                if *f > 0.0 {
                    "1e9999".to_string()
                } else {
                    "-1e9999".to_string()
                }
            } else if f.is_nan() {
                "(0/0)".to_string()
            } else {
                fmt_a(*f, None, false)
            };
            out.extend_from_slice(s.as_bytes());
        }
        Value::Nil | Value::Boolean(_) => {
            let s = vm.tostring(v)?;
            if let Value::Str(s) = s {
                out.extend_from_slice(&s.bytes);
            }
        }
        _ => return Err(vm.arg_error(2, "value has no literal form")),
    }
    Ok(())
}

/// A buffer for [`itoa`]: room for the 20 digits and the sign of any `i64`.
fn itoa_buf() -> [u8; 20] {
    [0; 20]
}

/// The decimal digits of `n`, with a `-` if negative, written at the end of `buf`.
pub(crate) fn itoa(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut u = n.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// `string.format(fmt, v)` of a format with one conversion, `%d` of an integer or `%g` /
/// `%.Ng` of a finite float, and no flags or width (json's `%d` and `%.14g`, `tostring`'s
/// form): the text, as [`format`] makes it. None for anything else ([`format`] then does it
/// all). `string.format` and the JIT's `format_one` run it first.
pub(crate) fn format_one(fmt: &[u8], v: &Value) -> Option<Vec<u8>> {
    let i = fmt.iter().position(|&c| c == b'%')?;
    let rest = &fmt[i + 1..];
    let (prec, conv_at) = match rest.first()? {
        b'.' => {
            let nd = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if nd == 0 || nd > 2 {
                return None;
            }
            let p = rest[1..1 + nd]
                .iter()
                .fold(0, |p, &d| p * 10 + (d - b'0') as usize);
            (Some(p), 1 + nd)
        }
        _ => (None, 0),
    };
    let conv = *rest.get(conv_at)?;
    let tail = &rest[conv_at + 1..];
    if tail.contains(&b'%') {
        return None;
    }
    let mut out = Vec::with_capacity(fmt.len() + 24);
    out.extend_from_slice(&fmt[..i]);
    match (conv, v, prec) {
        (b'd', Value::Int(n), None) => {
            let mut buf = itoa_buf();
            out.extend_from_slice(itoa(*n, &mut buf));
        }
        (b'g', Value::Num(x), _) if x.is_finite() => {
            if x.is_sign_negative() {
                out.push(b'-');
            }
            out.extend_from_slice(fmt_g(x.abs(), prec.unwrap_or(6), false, false).as_bytes());
        }
        _ => return None,
    }
    out.extend_from_slice(tail);
    Some(out)
}

/// `string.format`.
pub fn format(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let f = check_str(vm, args, 0)?;
    let fmt = &f.bytes;
    if args.len() == 2 {
        if let Some(out) = format_one(fmt, &args[1]) {
            return Ok(smallvec![Value::bytes(&out)]);
        }
    }
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut i = 0;
    let mut argn = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        if i < fmt.len() && fmt[i] == b'%' {
            out.push(b'%');
            i += 1;
            continue;
        }
        let span = fmt[i..]
            .iter()
            .take_while(|c| b"-+ #0123456789.".contains(c))
            .count();
        let conv = fmt.get(i + span).copied().unwrap_or(0);
        // The conversion's text, for the error messages only.
        let form =
            || String::from_utf8_lossy(&fmt[i - 1..(i + span + 1).min(fmt.len())]).into_owned();
        if span + 1 >= 22 {
            return Err(vm.native_error("invalid format string to 'format'"));
        }
        let (flags, precision): (&[u8], bool) = match conv {
            b'c' => (b"-", false),
            b'd' | b'i' | b'u' => (b"-+0 ", true),
            b'a' | b'A' | b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => (b"-+ #0", true),
            b'o' | b'x' | b'X' => (b"-#0", true),
            b's' => (b"-", true),
            b'q' => {
                if span > 0 {
                    return Err(vm.native_error("specifier '%q' cannot have modifiers"));
                }
                (b"", false)
            }
            _ => {
                return Err(vm.native_error(&format!("invalid conversion '{}' to 'format'", form())))
            }
        };
        let mut spec = Spec {
            minus: false,
            plus: false,
            space: false,
            alt: false,
            zero: false,
            width: 0,
            prec: None,
        };
        let body = &fmt[i..i + span];
        let mut k = 0;
        while k < body.len() && flags.contains(&body[k]) {
            match body[k] {
                b'-' => spec.minus = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                _ => spec.zero = true,
            }
            k += 1;
        }
        if k < body.len() && body[k] != b'0' {
            let mut nd = 0;
            while k < body.len() && body[k].is_ascii_digit() && nd < 2 {
                spec.width = spec.width * 10 + (body[k] - b'0') as usize;
                k += 1;
                nd += 1;
            }
            if k < body.len() && body[k] == b'.' && precision {
                k += 1;
                let mut p = 0;
                let mut nd = 0;
                while k < body.len() && body[k].is_ascii_digit() && nd < 2 {
                    p = p * 10 + (body[k] - b'0') as usize;
                    k += 1;
                    nd += 1;
                }
                spec.prec = Some(p);
            }
        }
        if k != body.len() {
            return Err(vm.native_error(&format!("invalid conversion specification: '{}'", form())));
        }
        i += span + 1;
        argn += 1;
        if argn >= args.len() && conv != b'%' {
            return Err(vm.arg_error(argn + 1, "no value"));
        }
        match conv {
            b'd' | b'i' if span == 0 => {
                // `%d` with no flags, width or precision: the digits, with no string between.
                let n = check_int(vm, args, argn)?;
                let mut buf = itoa_buf();
                out.extend_from_slice(itoa(n, &mut buf));
            }
            b'd' | b'i' | b'u' => {
                let n = check_int(vm, args, argn)?;
                let neg = conv != b'u' && n < 0;
                let mut digits = if conv == b'u' {
                    (n as u64).to_string()
                } else {
                    n.unsigned_abs().to_string()
                };
                if let Some(p) = spec.prec {
                    if digits.len() < p {
                        digits = "0".repeat(p - digits.len()) + &digits;
                    }
                    if p == 0 && n == 0 {
                        digits.clear();
                    }
                }
                let body = format!("{}{}", sign(&spec, neg), digits);
                out.extend_from_slice(pad(&spec, body, spec.prec.is_none()).as_bytes());
            }
            b'c' => {
                let n = check_int(vm, args, argn)?;
                let mut v = vec![n as u8];
                if spec.width > 1 {
                    let fill = vec![b' '; spec.width - 1];
                    if spec.minus {
                        v.extend(fill);
                    } else {
                        v = [fill, v].concat();
                    }
                }
                out.extend(v);
            }
            b'x' | b'X' | b'o' => {
                let n = check_int(vm, args, argn)? as u64;
                let mut digits = match conv {
                    b'x' => format!("{:x}", n),
                    b'X' => format!("{:X}", n),
                    _ => format!("{:o}", n),
                };
                if let Some(p) = spec.prec {
                    if digits.len() < p {
                        digits = "0".repeat(p - digits.len()) + &digits;
                    }
                }
                if spec.alt && n != 0 {
                    digits = match conv {
                        b'x' => format!("0x{digits}"),
                        b'X' => format!("0X{digits}"),
                        _ => format!("0{digits}"),
                    };
                }
                out.extend_from_slice(pad(&spec, digits, spec.prec.is_none()).as_bytes());
            }
            b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' => {
                let x = check_f64(vm, args, argn)?;
                let upper = conv.is_ascii_uppercase();
                let body = match conv {
                    b'e' | b'E' => fmt_e(x.abs(), spec.prec.unwrap_or(6), upper),
                    b'f' | b'F' => fmt_f(x.abs(), spec.prec.unwrap_or(6), upper),
                    b'a' | b'A' => fmt_a(x.abs(), spec.prec, upper),
                    _ => fmt_g(x.abs(), spec.prec.unwrap_or(6), spec.alt, upper),
                };
                let body = if x.is_nan() {
                    let s = fmt_g(x, 1, false, upper);
                    if s.starts_with('-') {
                        s
                    } else {
                        format!("{}{}", sign(&spec, false), s)
                    }
                } else {
                    format!("{}{}", sign(&spec, x.is_sign_negative()), body)
                };
                let body =
                    if spec.alt && !body.contains('.') && matches!(conv, b'f' | b'F' | b'e' | b'E')
                    {
                        match body.find(['e', 'E']) {
                            Some(p) => format!("{}.{}", &body[..p], &body[p..]),
                            None => format!("{body}."),
                        }
                    } else {
                        body
                    };
                out.extend_from_slice(pad(&spec, body, x.is_finite()).as_bytes());
            }
            b'q' => {
                quote(vm, &args[argn].clone(), &mut out)?;
            }
            b's' => {
                let s = match vm.tostring(arg(args, argn))? {
                    Value::Str(s) => s.bytes.to_vec(),
                    _ => vec![],
                };
                if span > 0 && s.contains(&0) {
                    return Err(vm.arg_error(argn + 1, "string contains zeros"));
                }
                let s = match spec.prec {
                    Some(p) if p < s.len() => s[..p].to_vec(),
                    _ => s,
                };
                if s.len() < spec.width {
                    let fill = vec![b' '; spec.width - s.len()];
                    if spec.minus {
                        out.extend(s);
                        out.extend(fill);
                    } else {
                        out.extend(fill);
                        out.extend(s);
                    }
                } else {
                    out.extend(s);
                }
            }
            _ => unreachable!(),
        }
    }
    Ok(smallvec![Value::bytes(&out)])
}
