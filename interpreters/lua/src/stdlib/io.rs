//! The io and os libraries: `io.write`, `io.read` ("l", "L", "n", "a", byte counts),
//! `io.lines`, `io.stdout:write`, and `os.clock`, `os.time`, `os.getenv`, `os.exit`.

use super::{arg, check_int, nf, register};
use crate::value::Rets;
use crate::value::{str_to_number, Value};
use crate::vm::{LResult, Vm};
use smallvec::smallvec;
use std::io::{BufRead, Read, Write};

fn write_values(vm: &mut Vm, args: &[Value], skip: usize, to_err: bool) -> LResult<()> {
    for (i, v) in args.iter().enumerate().skip(skip) {
        let bytes = match v {
            Value::Str(s) => s.bytes.to_vec(),
            Value::Int(i) => i.to_string().into_bytes(),
            Value::Num(f) => crate::stdlib::format::fmt_g(*f, 14, false, false).into_bytes(),
            _ => {
                return Err(super::type_error(vm, args, i, "string"));
            }
        };
        if to_err {
            let _ = vm.out.flush();
            let _ = std::io::stderr().write_all(&bytes);
        } else {
            let _ = vm.out.write_all(&bytes);
        }
    }
    Ok(())
}

fn read_line(keep_nl: bool) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let n = std::io::stdin().lock().read_until(b'\n', &mut buf).ok()?;
    if n == 0 {
        return None;
    }
    if !keep_nl && buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Some(buf)
}

fn read_number() -> Value {
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    // Skip whitespace.
    loop {
        let buf = match lock.fill_buf() {
            Ok(b) => b,
            Err(_) => return Value::Nil,
        };
        if buf.is_empty() {
            return Value::Nil;
        }
        let n = buf.iter().take_while(|c| c.is_ascii_whitespace()).count();
        let all = n == buf.len();
        lock.consume(n);
        if !all {
            break;
        }
    }
    let mut s = Vec::new();
    while let Ok(buf) = lock.fill_buf() {
        if buf.is_empty() {
            break;
        }
        let c = buf[0];
        let ok = c.is_ascii_hexdigit()
            || matches!(c, b'x' | b'X' | b'.' | b'p' | b'P')
            || ((c == b'+' || c == b'-')
                && (s.is_empty() || matches!(s.last(), Some(b'e' | b'E' | b'p' | b'P'))));
        if !ok || s.len() >= 200 {
            break;
        }
        s.push(c);
        lock.consume(1);
    }
    str_to_number(&s).unwrap_or(Value::Nil)
}

fn read(vm: &mut Vm, args: &[Value], skip: usize) -> LResult<Rets> {
    let _ = vm.out.flush();
    let formats: Vec<Value> = if args.len() <= skip {
        vec![Value::str("l")]
    } else {
        args[skip..].to_vec()
    };
    let mut out = Vec::new();
    for (i, f) in formats.iter().enumerate() {
        let v = match f {
            Value::Int(_) | Value::Num(_) => {
                let n = check_int(vm, &formats, i)?;
                let mut buf = vec![0u8; n.max(0) as usize];
                let mut got = 0;
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                while got < buf.len() {
                    match lock.read(&mut buf[got..]) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => got += k,
                    }
                }
                if got == 0 && n > 0 {
                    Value::Nil
                } else if n == 0 {
                    if lock.fill_buf().map(|b| b.is_empty()).unwrap_or(true) {
                        Value::Nil
                    } else {
                        Value::str("")
                    }
                } else {
                    Value::bytes(&buf[..got])
                }
            }
            Value::Str(s) => {
                let fmt = s.bytes.strip_prefix(b"*").unwrap_or(&s.bytes);
                match fmt.first() {
                    Some(b'l') => read_line(false)
                        .map(|b| Value::bytes(&b))
                        .unwrap_or_default(),
                    Some(b'L') => read_line(true)
                        .map(|b| Value::bytes(&b))
                        .unwrap_or_default(),
                    Some(b'n') => read_number(),
                    Some(b'a') => {
                        let mut buf = Vec::new();
                        let _ = std::io::stdin().lock().read_to_end(&mut buf);
                        Value::bytes(&buf)
                    }
                    _ => return Err(vm.arg_error(i + 1 + skip, "invalid format")),
                }
            }
            _ => return Err(vm.arg_error(i + 1 + skip, "invalid format")),
        };
        let stop = matches!(v, Value::Nil);
        out.push(v);
        if stop {
            break;
        }
    }
    Ok(out.into())
}

fn file_object(to_err: bool) -> Value {
    let t = super::new_table();
    let meta = super::new_table();
    let methods = super::new_table();
    let name = if to_err {
        "file (stderr)"
    } else {
        "file (stdout)"
    };
    methods.set(
        Value::interned("write"),
        Vm::native("write", move |vm, args| {
            write_values(vm, args, 1, to_err)?;
            Ok(smallvec![args[0]])
        }),
    );
    methods.set(
        Value::interned("read"),
        Vm::native("read", |vm, args| read(vm, args, 1)),
    );
    methods.set(
        Value::interned("flush"),
        Vm::native("flush", |vm, args| {
            let _ = vm.out.flush();
            Ok(smallvec![*arg(args, 0)])
        }),
    );
    methods.set(
        Value::interned("close"),
        Vm::native("close", |_vm, _a| Ok(smallvec![Value::Boolean(true)])),
    );
    methods.set(
        Value::interned("setvbuf"),
        Vm::native("setvbuf", |_vm, _a| Ok(smallvec![Value::Boolean(true)])),
    );
    meta.set(Value::interned("__index"), Value::Tab(methods));
    meta.set(Value::interned("__name"), Value::str("FILE*"));
    meta.set(
        Value::interned("__tostring"),
        Vm::native("tostring", move |_vm, _a| Ok(smallvec![Value::str(name)])),
    );
    t.meta.set(Some(meta));
    Value::Tab(t)
}

/// Loads io and os.
pub fn open(vm: &mut Vm) {
    let stdout = file_object(false);
    let stderr = file_object(true);
    let stdin = file_object(false);
    let out2 = stdout;
    let io = register(
        vm,
        "io",
        vec![
            ("read", nf(|vm, args| read(vm, args, 0))),
            (
                "lines",
                nf(|vm, args| {
                    if !args.is_empty() {
                        return Err(vm.native_error("io.lines with a file name is not supported"));
                    }
                    Ok(smallvec![Vm::native("lines_iter", |_vm, _a| {
                        Ok(smallvec![read_line(false)
                            .map(|b| Value::bytes(&b))
                            .unwrap_or_default()])
                    })])
                }),
            ),
            (
                "open",
                nf(|vm, _args| Err(vm.native_error("io.open is not supported"))),
            ),
        ],
    );
    // `io.write` returns `io.stdout` as it was at startup: the native keeps it.
    let write = Vm::native_keeping("io.write", vec![out2], move |vm, args| {
        write_values(vm, args, 0, false)?;
        Ok(smallvec![out2])
    });
    io.set(Value::interned("write"), write);
    io.set(Value::interned("stdout"), stdout);
    io.set(Value::interned("stderr"), stderr);
    io.set(Value::interned("stdin"), stdin);
    let start = std::time::Instant::now();
    register(
        vm,
        "os",
        vec![
            (
                "clock",
                nf(move |_vm, _a| Ok(smallvec![Value::Num(start.elapsed().as_secs_f64())])),
            ),
            (
                "time",
                nf(|_vm, _a| {
                    let t = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs() as i64)
                        .unwrap_or(0);
                    Ok(smallvec![Value::Int(t)])
                }),
            ),
            (
                "getenv",
                nf(|vm, a| {
                    let k = super::check_str(vm, a, 0)?;
                    let k = String::from_utf8_lossy(&k.bytes).into_owned();
                    Ok(smallvec![std::env::var(k)
                        .map(|v| Value::str(&v))
                        .unwrap_or_default()])
                }),
            ),
            (
                "exit",
                nf(|vm, a| {
                    let code = match arg(a, 0) {
                        Value::Nil | Value::Boolean(true) => 0,
                        Value::Boolean(false) => 1,
                        _ => check_int(vm, a, 0)? as i32,
                    };
                    let _ = vm.out.flush();
                    std::process::exit(code);
                }),
            ),
        ],
    );
    super::base::fill_loaded(vm);
}
