//! Lua values: nil, booleans, integers and floats (distinct subtypes), byte strings, tables and
//! functions, with the number <-> string conversions of Lua 5.4.
//!
//! Strings, tables and functions are objects of meta-jit's collected heap (`Gc`): a `Value`
//! is 16 `Copy` bytes that traced code can load and store whole. Interned strings are roots
//! for the thread's life ([`trace_interned`]). This module knows nothing about the VM's frames
//! or the libraries.

use crate::table::Table;
use meta_jit::gc::{Trace, Tracer};
use meta_jit::hints::*;
use std::hash::{Hash, Hasher};

/// A Lua string: immutable bytes with their hash computed once.
#[derive(Trace)]
pub struct LStr {
    /// The hash of the bytes.
    pub hash: u64,
    /// The bytes.
    pub bytes: Box<[u8]>,
    /// The one string object of these bytes (made by [`intern`]): an interned string equals
    /// another interned string exactly when it is the same object.
    pub interned: bool,
}

impl LStr {
    /// A string of these bytes. Strings of at most one byte are interned (see [`intern`]):
    /// `s:sub(i, i)` allocates nothing and compares with a constant by pointer.
    #[inline]
    pub fn new(bytes: &[u8]) -> Gc<LStr> {
        if bytes.len() <= 1 {
            return intern(bytes);
        }
        LStr::alloc(bytes, false)
    }

    /// A new string object of these bytes.
    fn alloc(bytes: &[u8], interned: bool) -> Gc<LStr> {
        let mut h: u64 = 0xcbf29ce484222325 ^ bytes.len() as u64;
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        // Finish so that both the low bits (a table's bucket) and the high bits (its tag) vary.
        h = (h ^ (h >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        Gc::new(LStr {
            hash: h,
            bytes: bytes.into(),
            interned,
        })
    }
}

/// The interned strings: those of at most one byte by their byte, the others by content.
#[derive(Default)]
struct Interned {
    /// Index 0: the empty string; 1 + b: the string of byte b.
    short: Vec<Option<Gc<LStr>>>,
    long: hashbrown::HashMap<Box<[u8]>, Gc<LStr>>,
}

thread_local! {
    static INTERNED: std::cell::RefCell<Interned> = Default::default();
}

/// The one string object of these bytes, for the strings of the program text (constants), the
/// names `type` returns and every string of at most one byte: so that a table key or an `==`
/// operand made by one compares with another by pointer. Interned strings live as long as the
/// thread (bounded by the code loaded, plus 257 short strings): every `Vm` reports them to
/// the collector as roots ([`trace_interned`]), so a string in the table is never freed and
/// the table never holds a dangling pointer.
pub fn intern(bytes: &[u8]) -> Gc<LStr> {
    INTERNED.with(|m| {
        let mut m = m.borrow_mut();
        if bytes.len() <= 1 {
            if m.short.is_empty() {
                m.short.resize(257, None);
            }
            let i = bytes.first().map_or(0, |&b| 1 + b as usize);
            return *m.short[i].get_or_insert_with(|| LStr::alloc(bytes, true));
        }
        if let Some(s) = m.long.get(bytes) {
            return *s;
        }
        let s = LStr::alloc(bytes, true);
        m.long.insert(bytes.into(), s);
        s
    })
}

/// Reports every interned string of this thread, and the shared empty array part of tables,
/// to `t`: roots for as long as the thread runs Lua.
pub fn trace_interned(t: &mut Tracer) {
    INTERNED.with(|m| {
        // `intern` holds its borrow only around `LStr::alloc`, which never collects; if it
        // were held, the collection would be abandoned rather than miss these roots.
        let Ok(m) = m.try_borrow() else {
            t.cannot_see();
            return;
        };
        for s in m.short.iter().flatten() {
            t.mark(*s);
        }
        for s in m.long.values() {
            t.mark(*s);
        }
    });
    crate::table::trace_empty_part(t);
}

/// A shared, mutable table.
pub type TRef = Gc<Table>;

/// A native (Rust) function's body.
pub type NativeFn = Box<dyn Fn(&mut crate::vm::Vm, &[Value]) -> crate::vm::LResult<Rets>>;

/// What a native returns: its results, the first two inline (most natives return one value,
/// and a call of one then allocates nothing for its results).
pub type Rets = smallvec::SmallVec<[Value; 2]>;

/// A native function with its name (for error messages).
pub struct Native {
    /// The name used in "bad argument ... to 'name'".
    pub name: String,
    /// The body.
    pub f: NativeFn,
    /// Every value the body captured (an iterator's subject, the `next` that `pairs`
    /// returns): the collector cannot look into the closure, so it traces these instead.
    pub keep: Vec<Value>,
}

// SAFETY: the `Gc`s a `Native` holds are the values its closure captured, and whoever builds
// one lists them all in `keep` (`Vm::native_keeping`), which is reported; `name` holds none.
// `Native` has no `Drop` of its own (the closure's drop glue reads no `Gc`).
unsafe impl Trace for Native {
    const NO_GC: bool = false;
    const INLINE: bool = false;
    fn trace(&self, t: &mut Tracer) {
        self.keep.trace(t);
    }
}

/// A Lua value: 16 bytes, `Copy`; the collector finds the objects it points to through
/// `Trace`, and traced code reads and writes its tag and payload (`JitLayout`).
///
/// The tag is a whole word (`u64`): with a `u8` tag, rustc copies a value as its tag byte and
/// the 15 bytes after it (the padding included) in overlapping 8-byte pieces, and a load of
/// the copy soon after stalled on them (nbody with `--no-jit` spent 17% more time than with
/// the reference-counted values, whose clone was one 16-byte move). With a word tag a copy is
/// two plain words.
#[derive(Clone, Copy, Default, JitLayout)]
#[repr(C, u64)]
pub enum Value {
    /// nil
    #[default]
    Nil,
    /// true or false
    Boolean(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Num(f64),
    /// A string.
    Str(Gc<LStr>),
    /// A table.
    Tab(TRef),
    /// A Lua function (closure).
    LFunc(Gc<crate::vm::Closure>),
    /// A native function.
    Builtin(Gc<Native>),
}

// SAFETY: the four pointer variants report their `Gc`, each one aligned word of the value;
// the others hold none. Written out (not derived) to be `#[inline]`: a table's array part
// traces its values in a loop, and on sieve the call per value (most of them booleans) was 6%
// of the instructions.
unsafe impl Trace for Value {
    const NO_GC: bool = false;
    const INLINE: bool = true;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        match *self {
            Value::Str(g) => t.mark(g),
            Value::Tab(g) => t.mark(g),
            Value::LFunc(g) => t.mark(g),
            Value::Builtin(g) => t.mark(g),
            Value::Nil | Value::Boolean(_) | Value::Int(_) | Value::Num(_) => {}
        }
    }
}

impl Value {
    /// A string value.
    pub fn str(s: &str) -> Value {
        Value::Str(LStr::new(s.as_bytes()))
    }
    /// The interned string value of `s` (see [`intern`]): for names the library and the VM
    /// use as table keys, so that tables keyed by them keep the pointer-only lookup.
    pub fn interned(s: &str) -> Value {
        Value::Str(intern(s.as_bytes()))
    }
    /// A string value from bytes.
    pub fn bytes(s: &[u8]) -> Value {
        Value::Str(LStr::new(s))
    }
    /// Lua truthiness: everything but nil and false.
    #[inline]
    pub fn truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Boolean(false))
    }
    /// `type(v)`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Boolean(_) => "boolean",
            Value::Int(_) | Value::Num(_) => "number",
            Value::Str(_) => "string",
            Value::Tab(_) => "table",
            Value::LFunc(_) | Value::Builtin(_) => "function",
        }
    }
    /// Raw equality (no metamethods).
    pub fn raw_eq(&self, o: &Value) -> bool {
        match (self, o) {
            (Value::Nil, Value::Nil) => true,
            (Value::Boolean(a), Value::Boolean(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Num(a), Value::Num(b)) => a == b,
            (Value::Int(a), Value::Num(b)) | (Value::Num(b), Value::Int(a)) => int_eq_float(*a, *b),
            (Value::Str(a), Value::Str(b)) => {
                Gc::ptr_eq(*a, *b) || (a.hash == b.hash && a.bytes == b.bytes)
            }
            (Value::Tab(a), Value::Tab(b)) => Gc::ptr_eq(*a, *b),
            (Value::LFunc(a), Value::LFunc(b)) => Gc::ptr_eq(*a, *b),
            (Value::Builtin(a), Value::Builtin(b)) => Gc::ptr_eq(*a, *b),
            _ => false,
        }
    }
    /// A number of either subtype as a float (strings are not converted).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Num(f) => Some(*f),
            _ => None,
        }
    }
    /// The value as a number, converting strings (`"10"` is 10).
    pub fn to_number(&self) -> Option<Value> {
        match self {
            Value::Int(_) | Value::Num(_) => Some(*self),
            Value::Str(s) => str_to_number(&s.bytes),
            _ => None,
        }
    }
    /// The value as an integer: integers, floats with an integral value and strings of those.
    pub fn to_integer(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Num(f) => float_to_int(*f),
            Value::Str(s) => match str_to_number(&s.bytes)? {
                Value::Int(i) => Some(i),
                Value::Num(f) => float_to_int(f),
                _ => None,
            },
            _ => None,
        }
    }
    /// A pointer identity for `%p`-like output of tables and functions.
    pub fn ptr(&self) -> usize {
        match self {
            Value::Tab(t) => t.as_ptr() as *const u8 as usize,
            Value::LFunc(f) => f.as_ptr() as *const u8 as usize,
            Value::Builtin(f) => f.as_ptr() as *const u8 as usize,
            Value::Str(s) => s.as_ptr() as *const u8 as usize,
            _ => 0,
        }
    }
}

/// The float `f` as an integer if it has an integral value in range.
pub fn float_to_int(f: f64) -> Option<i64> {
    if f.floor() == f && (-9.223372036854776e18..9.223372036854776e18).contains(&f) {
        Some(f as i64)
    } else {
        None
    }
}

/// `i == f` exactly.
pub fn int_eq_float(i: i64, f: f64) -> bool {
    float_to_int(f) == Some(i)
}

const TWO63: f64 = 9.223372036854776e18;

/// Whether the integer converts to a float exactly (|i| <= 2^53, PUC Lua's `l_intfitsf`):
/// then the comparisons below are one float comparison (NaN compares false, as it must).
#[inline(always)]
fn int_fits_float(i: i64) -> bool {
    const M: u64 = 1 << 53;
    (i as u64).wrapping_add(M) <= 2 * M
}

/// `i < f` exactly.
#[inline]
pub fn lt_int_float(i: i64, f: f64) -> bool {
    if int_fits_float(i) {
        return (i as f64) < f;
    }
    if f.is_nan() {
        false
    } else if f >= TWO63 {
        true
    } else if f > -TWO63 {
        i < f.ceil() as i64
    } else {
        false
    }
}

/// `i <= f` exactly.
#[inline]
pub fn le_int_float(i: i64, f: f64) -> bool {
    if int_fits_float(i) {
        return (i as f64) <= f;
    }
    if f.is_nan() {
        false
    } else if f >= TWO63 {
        true
    } else if f >= -TWO63 {
        i <= f.floor() as i64
    } else {
        false
    }
}

/// `f < i` exactly.
#[inline]
pub fn lt_float_int(f: f64, i: i64) -> bool {
    if int_fits_float(i) {
        return f < (i as f64);
    }
    if f.is_nan() || f >= TWO63 {
        false
    } else if f >= -TWO63 {
        (f.floor() as i64) < i
    } else {
        true
    }
}

/// `f <= i` exactly.
#[inline]
pub fn le_float_int(f: f64, i: i64) -> bool {
    if int_fits_float(i) {
        return f <= (i as f64);
    }
    if f.is_nan() || f >= TWO63 {
        false
    } else if f > -TWO63 {
        (f.ceil() as i64) <= i
    } else {
        true
    }
}

impl PartialEq for Value {
    fn eq(&self, o: &Value) -> bool {
        self.raw_eq(o)
    }
}
impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self {
            Value::Nil => 0u64.hash(h),
            Value::Boolean(b) => (*b as u64 + 1).hash(h),
            Value::Int(i) => i.hash(h),
            Value::Num(f) => match float_to_int(*f) {
                Some(i) => i.hash(h),
                None => f.to_bits().hash(h),
            },
            Value::Str(s) => s.hash.hash(h),
            _ => self.ptr().hash(h),
        }
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Converts a string to a number as Lua does (`tonumber(s)`, coercions): decimal and hex
/// integers (hex wraps), decimal and hex floats, surrounding spaces allowed.
pub fn str_to_number(s: &[u8]) -> Option<Value> {
    let mut a = 0;
    let mut b = s.len();
    while a < b && is_space(s[a]) {
        a += 1;
    }
    while b > a && is_space(s[b - 1]) {
        b -= 1;
    }
    let t = &s[a..b];
    if t.is_empty() {
        return None;
    }
    let (neg, body) = match t[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if body.len() >= 2 && body[0] == b'0' && (body[1] == b'x' || body[1] == b'X') {
        return hex_number(&body[2..], neg);
    }
    // decimal
    let mut i = 0;
    let mut digits = 0;
    while i < body.len() && body[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    let mut is_float = false;
    if i < body.len() && body[i] == b'.' {
        is_float = true;
        i += 1;
        while i < body.len() && body[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < body.len() && (body[i] == b'e' || body[i] == b'E') {
        is_float = true;
        i += 1;
        if i < body.len() && (body[i] == b'+' || body[i] == b'-') {
            i += 1;
        }
        let st = i;
        while i < body.len() && body[i].is_ascii_digit() {
            i += 1;
        }
        if i == st {
            return None;
        }
    }
    if i != body.len() {
        return None;
    }
    let txt = std::str::from_utf8(body).ok()?;
    if !is_float {
        let mut v: i64 = 0;
        let mut overflow = false;
        for c in body {
            match v
                .checked_mul(10)
                .and_then(|x| x.checked_add((c - b'0') as i64))
            {
                Some(x) => v = x,
                None => {
                    overflow = true;
                    break;
                }
            }
        }
        if !overflow {
            return Some(Value::Int(if neg { v.wrapping_neg() } else { v }));
        }
        if neg && txt == "9223372036854775808" {
            return Some(Value::Int(i64::MIN));
        }
    }
    let f: f64 = txt.parse().ok()?;
    Some(Value::Num(if neg { -f } else { f }))
}

fn hex_number(s: &[u8], neg: bool) -> Option<Value> {
    let mut i = 0;
    let mut mant: u64 = 0;
    let mut fmant: f64 = 0.0;
    let mut exp: i64 = 0;
    let mut any = false;
    let mut is_float = false;
    while i < s.len() && s[i].is_ascii_hexdigit() {
        let d = (s[i] as char).to_digit(16).unwrap() as u64;
        mant = mant.wrapping_mul(16).wrapping_add(d);
        fmant = fmant * 16.0 + d as f64;
        any = true;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' {
        is_float = true;
        i += 1;
        while i < s.len() && s[i].is_ascii_hexdigit() {
            let d = (s[i] as char).to_digit(16).unwrap() as u64;
            fmant = fmant * 16.0 + d as f64;
            exp -= 4;
            any = true;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < s.len() && (s[i] == b'p' || s[i] == b'P') {
        is_float = true;
        i += 1;
        let mut eneg = false;
        if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
            eneg = s[i] == b'-';
            i += 1;
        }
        let st = i;
        let mut e: i64 = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            e = (e * 10 + (s[i] - b'0') as i64).min(100000);
            i += 1;
        }
        if st == i {
            return None;
        }
        exp += if eneg { -e } else { e };
    }
    if i != s.len() {
        return None;
    }
    if is_float {
        let f = fmant * 2f64.powi(exp.clamp(-20000, 20000) as i32);
        Some(Value::Num(if neg { -f } else { f }))
    } else {
        let v = mant as i64;
        Some(Value::Int(if neg { v.wrapping_neg() } else { v }))
    }
}

/// Formats a float as Lua's `%.14g` (`1e+15`, `inf`, `-nan`), adding `.0` to integral values.
pub fn fmt_float(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    let mut s = crate::stdlib::format::fmt_g(f, 14, false, false);
    if !s
        .bytes()
        .any(|c| c == b'.' || c == b'e' || c == b'n' || c == b'i')
    {
        s.push_str(".0");
    }
    s
}

/// `tostring` without metamethods for numbers and strings; None for other types.
pub fn to_str_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Int(i) => Some(i.to_string().into_bytes()),
        Value::Num(f) => Some(fmt_float(*f).into_bytes()),
        Value::Str(s) => Some(s.bytes.to_vec()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mixed comparisons against an exact reference in 128-bit integers, at the edges of
    /// the one-float-comparison path (|i| = 2^53 and its neighbours) and beyond it.
    #[test]
    fn mixed_comparisons_are_exact() {
        let big = 1i64 << 53;
        let mut ints = vec![0, 1, -1, 3, i64::MAX, i64::MIN, i64::MAX - 1, i64::MIN + 1];
        for d in -2..=2 {
            ints.push(big + d);
            ints.push(-big + d);
        }
        let b = big as f64;
        let floats = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            3.0,
            b,
            -b,
            b + 2.0,
            -b - 2.0,
            b - 1.0,
            -b + 1.0,
            b - 0.5,
            -b + 0.5,
            TWO63,
            -TWO63,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e300,
            -1e300,
        ];
        // Exact for a finite float of magnitude below 2^100 (an integer there is exact in i128).
        let lim = 2f64.powi(100);
        for &i in &ints {
            for &f in &floats {
                let (lt, le, gt, ge) = if f.is_nan() {
                    (false, false, false, false)
                } else if f >= lim {
                    (true, true, false, false)
                } else if f <= -lim {
                    (false, false, true, true)
                } else {
                    let i = i as i128;
                    (
                        i < f.ceil() as i128,
                        i <= f.floor() as i128,
                        (f.floor() as i128) < i,
                        (f.ceil() as i128) <= i,
                    )
                };
                assert_eq!(lt_int_float(i, f), lt, "{i} < {f}");
                assert_eq!(le_int_float(i, f), le, "{i} <= {f}");
                assert_eq!(lt_float_int(f, i), gt, "{f} < {i}");
                assert_eq!(le_float_int(f, i), ge, "{f} <= {i}");
            }
        }
    }
}
