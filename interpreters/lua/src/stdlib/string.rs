//! The string library: len, sub, upper, lower, rep, reverse, byte, char, format, find, match,
//! gmatch, gsub, and the string metatable (`s:sub(...)`).

use super::pattern::{first_item, is_plain, Capture, Matcher};
use super::{arg, check_int, check_str, nf, opt_int, register, type_error};
use crate::value::Rets;
use crate::value::{LStr, Value};
use crate::vm::{LResult, Vm};
use smallvec::smallvec;
use std::cell::Cell;

/// Start index `i` (1-based, negative from the end) as a 0-based offset clamped to `0..=len`
/// (the rule the portal traces: `jit::sub_start`).
fn start_pos(i: i64, len: usize) -> usize {
    crate::jit::sub_start(i, len as i64) as usize
}

/// End index `j` (1-based, negative from the end) clamped to `0..=len` (exclusive end; the
/// rule the portal traces: `jit::sub_end`).
fn end_pos(j: i64, len: usize) -> usize {
    crate::jit::sub_end(j, len as i64) as usize
}

fn sub(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    let i = opt_int(vm, args, 1, 1)?;
    let j = opt_int(vm, args, 2, -1)?;
    let len = s.bytes.len();
    let a = start_pos(i, len);
    let b = end_pos(j, len);
    Ok(smallvec![if a < b {
        Value::bytes(&s.bytes[a..b])
    } else {
        Value::str("")
    }])
}

fn push_capture(m: &Matcher, src: &[u8], i: usize, s: usize, e: usize) -> Result<Value, String> {
    Ok(match m.capture(i, s, e)? {
        Capture::Str(st, len) => Value::bytes(&src[st..st + len]),
        Capture::Pos(p) => Value::Int(p as i64),
    })
}

fn captures(m: &Matcher, src: &[u8], s: usize, e: usize, whole: bool) -> Result<Rets, String> {
    let n = if m.level == 0 && whole { 1 } else { m.level };
    (0..n).map(|i| push_capture(m, src, i, s, e)).collect()
}

/// What [`find_in`] found: no match, a match `start..end` without captures (a plain find,
/// a pattern of one item), or a pattern's match `start..end` with the matcher that holds its
/// captures.
// The matcher (with its captures) moves once, to the caller that reads them.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Found<'a> {
    None,
    Span(usize, usize),
    Pattern(Matcher<'a>, usize, usize),
}

/// The search of `find` and `match` for `pat` in `src` from 1-based `init` (negative: from
/// the end): a plain search when `plain` (find's fourth argument, or a pattern without
/// special characters, which the caller decides), else the pattern matcher at each start
/// from `init` on (only at `init` for `^`). The one copy of the search, which the library's
/// `find`/`match` and the portal's `str_find` both run. Errors are a malformed pattern.
pub(crate) fn find_in<'a>(
    src: &'a [u8],
    pat: &'a [u8],
    init: i64,
    plain: bool,
) -> Result<Found<'a>, String> {
    let len = src.len();
    let init = if init > 0 {
        (init - 1) as u64
    } else if init == 0 || init.unsigned_abs() > len as u64 {
        0
    } else {
        (len - init.unsigned_abs() as usize) as u64
    };
    if init > len as u64 {
        return Ok(Found::None);
    }
    let init = init as usize;
    if plain {
        let pos = if pat.is_empty() {
            Some(init)
        } else {
            src[init..]
                .windows(pat.len())
                .position(|w| w == pat)
                .map(|x| x + init)
        };
        return Ok(match pos {
            Some(x) => Found::Span(x, x + pat.len()),
            None => Found::None,
        });
    }
    let (anchor, pstart) = if pat.first() == Some(&b'^') {
        (true, 1)
    } else {
        (false, 0)
    };
    let pat = &pat[pstart..];
    // A pattern whose first item must match one byte: starts where it does not are skipped
    // without a match attempt.
    let first = first_item(pat);
    if let Some((set, ep)) = first {
        let rest = &pat[ep..];
        // A pattern of that one item (`[^ \t]`, `%d`), or of it repeated (`%d+`): the match
        // is the first byte (the first run) in the set, with no matcher.
        if rest.is_empty() || rest == b"+" {
            let mut st = init;
            while st < len && !set.has(src[st]) {
                if anchor {
                    return Ok(Found::None);
                }
                st += 1;
            }
            if st >= len {
                return Ok(Found::None);
            }
            let mut e = st + 1;
            if !rest.is_empty() {
                while e < len && set.has(src[e]) {
                    e += 1;
                }
            }
            return Ok(Found::Span(st, e));
        }
    }
    let mut m = Matcher::new(src, pat);
    let mut st = init;
    loop {
        let try_here = match first {
            Some((set, _)) => st < len && set.has(src[st]),
            None => true,
        };
        if try_here {
            m.reset();
            if let Some(e) = m.do_match(st, 0)? {
                return Ok(Found::Pattern(m, st, e));
            }
        }
        st += 1;
        if anchor || st > src.len() {
            return Ok(Found::None);
        }
    }
}

fn find_aux(vm: &mut Vm, args: &[Value], find: bool) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    let p = check_str(vm, args, 1)?;
    let init = opt_int(vm, args, 2, 1)?;
    let src = &s.bytes[..];
    let pat = &p.bytes[..];
    let plain = find && (arg(args, 3).truthy() || is_plain(pat));
    match find_in(src, pat, init, plain).map_err(|e| vm.native_error(&e))? {
        Found::None => Ok(smallvec![Value::Nil]),
        Found::Span(st, e) if find => {
            Ok(smallvec![Value::Int(st as i64 + 1), Value::Int(e as i64)])
        }
        Found::Span(st, e) => Ok(smallvec![Value::bytes(&src[st..e])]),
        Found::Pattern(m, st, e) => {
            let caps = captures(&m, src, st, e, !find).map_err(|e| vm.native_error(&e))?;
            if find {
                let mut r: Rets = smallvec![Value::Int(st as i64 + 1), Value::Int(e as i64)];
                r.extend(caps);
                return Ok(r);
            }
            Ok(caps)
        }
    }
}

fn gmatch(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    let p = check_str(vm, args, 1)?;
    let init = opt_int(vm, args, 2, 1)?;
    let len = s.bytes.len();
    let start = start_pos(init, len);
    let pos = Cell::new(if init > len as i64 + 1 {
        len + 1
    } else {
        start
    });
    let last: Cell<Option<usize>> = Cell::new(None);
    let keep = vec![Value::Str(s), Value::Str(p)];
    let f = Vm::native_keeping("gmatch_iter", keep, move |vm, _args| {
        let src = &s.bytes[..];
        let mut m = Matcher::new(src, &p.bytes);
        let mut st = pos.get();
        while st <= src.len() {
            m.reset();
            match m.do_match(st, 0) {
                Err(e) => return Err(vm.native_error(&e)),
                Ok(Some(e)) if Some(e) != last.get() => {
                    pos.set(e);
                    last.set(Some(e));
                    return captures(&m, src, st, e, true).map_err(|e| vm.native_error(&e));
                }
                _ => {}
            }
            st += 1;
        }
        pos.set(src.len() + 1);
        Ok(smallvec![])
    });
    Ok(smallvec![f])
}

fn add_value(
    vm: &mut Vm,
    m: &Matcher,
    src: &[u8],
    s: usize,
    e: usize,
    repl: &Value,
    out: &mut Vec<u8>,
) -> LResult<()> {
    let v = match repl {
        Value::Str(r) => {
            let r = &r.bytes;
            let mut i = 0;
            while i < r.len() {
                let c = r[i];
                i += 1;
                if c != b'%' {
                    out.push(c);
                    continue;
                }
                let d = r.get(i).copied().unwrap_or(0);
                i += 1;
                if d == b'%' {
                    out.push(b'%');
                } else if d.is_ascii_digit() {
                    let v = if d == b'0' {
                        Value::bytes(&src[s..e])
                    } else {
                        push_capture(m, src, (d - b'1') as usize, s, e)
                            .map_err(|e| vm.native_error(&e))?
                    };
                    match v {
                        Value::Str(x) => out.extend_from_slice(&x.bytes),
                        Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
                        _ => {}
                    }
                } else {
                    return Err(vm.native_error("invalid use of '%' in replacement string"));
                }
            }
            return Ok(());
        }
        Value::Int(_) | Value::Num(_) => {
            out.extend_from_slice(&crate::value::to_str_bytes(repl).unwrap());
            return Ok(());
        }
        Value::Tab(_) => {
            let k = push_capture(m, src, 0, s, e).map_err(|e| vm.native_error(&e))?;
            vm.index(repl, &k, crate::vm::debug_none())?
        }
        _ => {
            let caps = captures(m, src, s, e, true).map_err(|e| vm.native_error(&e))?;
            vm.call1(repl, caps.into_vec())?
        }
    };
    match &v {
        Value::Nil | Value::Boolean(false) => out.extend_from_slice(&src[s..e]),
        Value::Str(x) => out.extend_from_slice(&x.bytes),
        Value::Int(_) | Value::Num(_) => {
            out.extend_from_slice(&crate::value::to_str_bytes(&v).unwrap())
        }
        _ => {
            return Err(vm.native_error(&format!("invalid replacement value (a {})", v.type_name())))
        }
    }
    Ok(())
}

fn gsub(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    let p = check_str(vm, args, 1)?;
    let repl = *arg(args, 2);
    if !matches!(
        repl,
        Value::Str(_)
            | Value::Int(_)
            | Value::Num(_)
            | Value::Tab(_)
            | Value::LFunc(_)
            | Value::Builtin(_)
    ) {
        return Err(type_error(vm, args, 2, "string/function/table"));
    }
    let max_n = match arg(args, 3) {
        Value::Nil => i64::MAX,
        _ => check_int(vm, args, 3)?,
    };
    let src = &s.bytes[..];
    let pat = &p.bytes[..];
    let (anchor, pstart) = if pat.first() == Some(&b'^') {
        (true, 1)
    } else {
        (false, 0)
    };
    let mut m = Matcher::new(src, &pat[pstart..]);
    let first = first_item(&pat[pstart..]).map(|(set, _)| set);
    // The bytes of `src` from `pend` up to `st` are copied to `out` only at the next match
    // (or the end): a subject without a match is returned as it is, with no new string.
    let mut out = Vec::new();
    let mut pend = 0;
    let mut st = 0;
    let mut n = 0;
    let mut last = None;
    while n < max_n {
        // No match can start where the pattern's first item (one byte) does not match.
        if let Some(set) = first {
            if !anchor && st < src.len() && !set.has(src[st]) {
                st += 1;
                while st < src.len() && !set.has(src[st]) {
                    st += 1;
                }
                continue;
            }
        }
        m.reset();
        let r = m.do_match(st, 0).map_err(|e| vm.native_error(&e))?;
        match r {
            Some(e) if Some(e) != last => {
                n += 1;
                if out.capacity() == 0 {
                    out.reserve(src.len());
                }
                out.extend_from_slice(&src[pend..st]);
                add_value(vm, &m, src, st, e, &repl, &mut out)?;
                st = e;
                pend = e;
                last = Some(e);
            }
            _ if st < src.len() => st += 1,
            _ => break,
        }
        if anchor {
            break;
        }
    }
    if n == 0 {
        return Ok(smallvec![Value::Str(s), Value::Int(0)]);
    }
    out.extend_from_slice(&src[pend..]);
    Ok(smallvec![Value::bytes(&out), Value::Int(n)])
}

fn rep(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    let n = check_int(vm, args, 1)?;
    let sep = super::opt_str(vm, args, 2)?;
    if n <= 0 {
        return Ok(smallvec![Value::str("")]);
    }
    let seplen = sep.as_ref().map(|x| x.bytes.len()).unwrap_or(0);
    let total = (s.bytes.len() as u128 + seplen as u128) * n as u128;
    if total >= (1u128 << 31) {
        return Err(vm.native_error("resulting string too large"));
    }
    let mut out = Vec::with_capacity(total as usize);
    for i in 0..n {
        if i > 0 {
            if let Some(sep) = &sep {
                out.extend_from_slice(&sep.bytes);
            }
        }
        out.extend_from_slice(&s.bytes);
    }
    Ok(smallvec![Value::bytes(&out)])
}

fn byte(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    let i = opt_int(vm, args, 1, 1)?;
    let j = opt_int(vm, args, 2, i)?;
    let len = s.bytes.len();
    let a = start_pos(i, len);
    let b = end_pos(j, len);
    Ok((a..b.max(a))
        .map(|k| Value::Int(s.bytes[k] as i64))
        .collect())
}

fn char_(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let mut out = Vec::with_capacity(args.len());
    for i in 0..args.len() {
        let c = check_int(vm, args, i)?;
        if !(0..=255).contains(&c) {
            return Err(vm.arg_error(i + 1, "value out of range"));
        }
        out.push(c as u8);
    }
    Ok(smallvec![Value::bytes(&out)])
}

fn map_bytes(vm: &mut Vm, args: &[Value], f: fn(&[u8]) -> Vec<u8>) -> LResult<Rets> {
    let s = check_str(vm, args, 0)?;
    Ok(smallvec![Value::Str(LStr::new(&f(&s.bytes)))])
}

/// Loads the string library and the string metatable.
pub fn open(vm: &mut Vm) {
    let t = register(
        vm,
        "string",
        vec![
            (
                "len",
                nf(|vm, a| {
                    Ok(smallvec![Value::Int(
                        check_str(vm, a, 0)?.bytes.len() as i64
                    )])
                }),
            ),
            ("sub", nf(sub)),
            (
                "upper",
                nf(|vm, a| map_bytes(vm, a, |b| b.to_ascii_uppercase())),
            ),
            (
                "lower",
                nf(|vm, a| map_bytes(vm, a, |b| b.to_ascii_lowercase())),
            ),
            (
                "reverse",
                nf(|vm, a| map_bytes(vm, a, |b| b.iter().rev().copied().collect())),
            ),
            ("rep", nf(rep)),
            ("byte", nf(byte)),
            ("char", nf(char_)),
            ("format", nf(super::format::format)),
            ("find", nf(|vm, a| find_aux(vm, a, true))),
            ("match", nf(|vm, a| find_aux(vm, a, false))),
            ("gmatch", nf(gmatch)),
            ("gsub", nf(gsub)),
        ],
    );
    let meta = super::new_table();
    meta.set(Value::interned("__index"), Value::Tab(t));
    vm.string_meta = Some(meta);
}
