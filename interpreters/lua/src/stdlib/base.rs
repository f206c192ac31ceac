//! The base library: print, type, tostring, tonumber, pairs, ipairs, next, select, raw*,
//! assert, error, pcall, xpcall, load, require, unpack, setmetatable, getmetatable.

use super::{arg, check_int, check_table, new_table, opt_int, type_error};
use crate::value::Rets;
use crate::value::{str_to_number, Value};
use crate::vm::{LResult, Vm};
use smallvec::smallvec;
use std::io::Write;

/// PUC Lua's `luaO_chunkid`: how a chunk name shows in messages.
pub fn chunk_id(source: &[u8]) -> String {
    if let Some(rest) = source.strip_prefix(b"=") {
        return String::from_utf8_lossy(&rest[..rest.len().min(59)]).into_owned();
    }
    if let Some(rest) = source.strip_prefix(b"@") {
        return String::from_utf8_lossy(rest).into_owned();
    }
    let nl = source.iter().position(|&c| c == b'\n');
    let bufflen = 45;
    let mut out = String::from("[string \"");
    if source.len() < bufflen && nl.is_none() {
        out.push_str(&String::from_utf8_lossy(source));
    } else {
        let mut len = nl.unwrap_or(source.len());
        if len > bufflen {
            len = bufflen;
        }
        out.push_str(&String::from_utf8_lossy(&source[..len]));
        out.push_str("...");
    }
    out.push_str("\"]");
    out
}

fn def(vm: &mut Vm, name: &str, f: impl Fn(&mut Vm, &[Value]) -> LResult<Rets> + 'static) -> Value {
    def_keeping(vm, name, vec![], f)
}

/// [`def`] for a body that captured the values in `keep` (see `Vm::native_keeping`).
fn def_keeping(
    vm: &mut Vm,
    name: &str,
    keep: Vec<Value>,
    f: impl Fn(&mut Vm, &[Value]) -> LResult<Rets> + 'static,
) -> Value {
    let v = Vm::native_keeping(name, keep, f);
    vm.set_global(name, v);
    v
}

fn ipairs_iter(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let i = match arg(args, 1) {
        Value::Int(i) => i.wrapping_add(1),
        _ => 1,
    };
    let t = arg(args, 0);
    let v = match t {
        Value::Tab(tb) if tb.meta.get().is_none() => tb.get_int(i),
        _ => vm.index(t, &Value::Int(i), crate::vm::debug_none())?,
    };
    if matches!(v, Value::Nil) {
        Ok(smallvec![Value::Nil])
    } else {
        Ok(smallvec![Value::Int(i), v])
    }
}

fn next(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = check_table(vm, args, 0)?;
    let r = t.next(arg(args, 1));
    match r {
        Ok(Some((k, v))) => Ok(smallvec![k, v]),
        Ok(None) => Ok(smallvec![Value::Nil]),
        Err(()) => Err(vm.native_error("invalid key to 'next'")),
    }
}

fn tonumber(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    if matches!(arg(args, 1), Value::Nil) {
        if args.is_empty() {
            return Err(vm.arg_error(1, "value expected"));
        }
        return Ok(smallvec![match arg(args, 0) {
            v @ (Value::Int(_) | Value::Num(_)) => *v,
            Value::Str(s) => str_to_number(&s.bytes).unwrap_or(Value::Nil),
            _ => Value::Nil,
        }]);
    }
    let base = check_int(vm, args, 1)?;
    let s = match arg(args, 0) {
        Value::Str(s) => *s,
        _ => return Err(type_error(vm, args, 0, "string")),
    };
    if !(2..=36).contains(&base) {
        return Err(vm.arg_error(2, "base out of range"));
    }
    let txt = String::from_utf8_lossy(&s.bytes);
    let t = txt.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    if digits.is_empty() {
        return Ok(smallvec![Value::Nil]);
    }
    let mut n: i64 = 0;
    for c in digits.chars() {
        match c.to_digit(base as u32) {
            Some(d) => n = n.wrapping_mul(base).wrapping_add(d as i64),
            None => return Ok(smallvec![Value::Nil]),
        }
    }
    Ok(smallvec![Value::Int(if neg {
        n.wrapping_neg()
    } else {
        n
    })])
}

fn select(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let n = args.len() as i64 - 1;
    if let Value::Str(s) = arg(args, 0) {
        if &*s.bytes == b"#" {
            return Ok(smallvec![Value::Int(n)]);
        }
    }
    let i = check_int(vm, args, 0)?;
    if i < 0 {
        if -i > n {
            return Err(vm.arg_error(1, "index out of range"));
        }
        return Ok(Rets::from_slice(&args[(n + i + 1) as usize..]));
    }
    if i == 0 {
        return Err(vm.arg_error(1, "index out of range"));
    }
    Ok(args.iter().skip(i as usize).cloned().collect())
}

fn error(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let v = *arg(args, 0);
    let level = opt_int(vm, args, 1, 1)?;
    let v = match (&v, level) {
        (Value::Str(s), l) if l > 0 => {
            let pos = if vm.cur_native.1 {
                vm.where_(l as usize)
            } else {
                String::new()
            };
            let mut b = pos.into_bytes();
            b.extend_from_slice(&s.bytes);
            Value::bytes(&b)
        }
        _ => v,
    };
    Err(vm.error_value(v))
}

fn pcall(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    if args.is_empty() {
        return Err(vm.arg_error(1, "value expected"));
    }
    let mut it = args.iter();
    let f = it.next().unwrap();
    vm.pcall_depth += 1;
    // Uses nothing of its own after the call (its arguments stay on the stack anyway).
    let r = vm.call_rooted(f, it.cloned().collect());
    vm.pcall_depth -= 1;
    Ok(match r {
        Ok(mut v) => {
            v.insert(0, Value::Boolean(true));
            v.into()
        }
        Err(e) => smallvec![Value::Boolean(false), e.value],
    })
}

fn xpcall(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let mut it = args.iter().cloned();
    let f = it.next().unwrap_or_default();
    let h = it.next().unwrap_or_default();
    if !matches!(h, Value::LFunc(_) | Value::Builtin(_)) {
        let a = [f, h];
        let a = if matches!(h, Value::Nil) {
            &a[..1]
        } else {
            &a[..]
        };
        return Err(type_error(vm, a, 1, "function"));
    }
    vm.pcall_depth += 1;
    // `h` is used after the call; it is also this native's argument, which stays in its
    // stack slot (a root) while the native runs.
    let r = vm.call_rooted(&f, it.collect());
    let out = match r {
        Ok(mut v) => {
            v.insert(0, Value::Boolean(true));
            Ok(v.into())
        }
        Err(e) => match vm.call_rooted(&h, vec![e.value]) {
            Ok(mut v) => {
                v.insert(0, Value::Boolean(false));
                Ok(v.into())
            }
            Err(e2) => Ok(smallvec![Value::Boolean(false), e2.value]),
        },
    };
    vm.pcall_depth -= 1;
    out
}

fn load(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let src: Vec<u8> = match arg(args, 0) {
        Value::Str(s) => s.bytes.to_vec(),
        f @ (Value::LFunc(_) | Value::Builtin(_)) => {
            let f = *f;
            let mut buf = Vec::new();
            loop {
                match vm.call1(&f, vec![])? {
                    Value::Str(s) if !s.bytes.is_empty() => buf.extend_from_slice(&s.bytes),
                    Value::Nil | Value::Str(_) => break,
                    _ => {
                        return Ok(smallvec![
                            Value::Nil,
                            Value::str("reader function must return a string"),
                        ])
                    }
                }
            }
            buf
        }
        _ => return Err(type_error(vm, args, 0, "string")),
    };
    let name = match arg(args, 1) {
        Value::Str(s) => chunk_id(&s.bytes),
        _ => match arg(args, 0) {
            Value::Str(_) => chunk_id(&src),
            _ => "(load)".to_string(),
        },
    };
    match vm.load(&src, &name) {
        Ok(f) => {
            if let (Value::LFunc(cl), env @ Value::Tab(_)) = (&f, arg(args, 3)) {
                cl.upvals[0].v.set(crate::vm::Up::Shut(*env));
            }
            Ok(smallvec![f])
        }
        Err(e) => Ok(smallvec![Value::Nil, Value::str(&e)]),
    }
}

fn require(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let name = super::check_str(vm, args, 0)?;
    let name_s = String::from_utf8_lossy(&name.bytes).into_owned();
    let package = match vm.get_global("package") {
        Value::Tab(t) => t,
        _ => return Err(vm.native_error("'package' is not a table")),
    };
    let loaded = match package.get(&Value::str("loaded")) {
        Value::Tab(t) => t,
        _ => return Err(vm.native_error("'package.loaded' must be a table")),
    };
    let have = loaded.get(&Value::Str(name));
    if have.truthy() {
        return Ok(smallvec![have]);
    }
    let path = match package.get(&Value::str("path")) {
        Value::Str(s) => String::from_utf8_lossy(&s.bytes).into_owned(),
        _ => return Err(vm.native_error("'package.path' must be a string")),
    };
    let file_part = name_s.replace('.', "/");
    let mut tried = format!("module '{name_s}' not found:\n\tno field package.preload['{name_s}']");
    for templ in path.split(';') {
        let file = templ.replace('?', &file_part);
        match std::fs::read(&file) {
            Ok(src) => {
                let f = match vm.load(&src, &file) {
                    Ok(f) => f,
                    Err(e) => {
                        return Err(vm.native_error(&format!(
                            "error loading module '{name_s}' from file '{file}':\n\t{e}"
                        )))
                    }
                };
                let r = vm.call1(&f, vec![Value::Str(name), Value::str(&file)])?;
                let r = if matches!(r, Value::Nil) {
                    match loaded.get(&Value::Str(name)) {
                        Value::Nil => Value::Boolean(true),
                        v => v,
                    }
                } else {
                    r
                };
                loaded.set(Value::Str(name), r);
                return Ok(smallvec![r, Value::str(&file)]);
            }
            Err(_) => tried.push_str(&format!("\n\tno file '{file}'")),
        }
    }
    Err(vm.native_error(&tried))
}

/// `table.unpack` / `unpack`.
pub fn unpack(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = *arg(args, 0);
    let i = opt_int(vm, args, 1, 1)?;
    let j = match arg(args, 2) {
        Value::Nil => match vm.len_of(&t, crate::vm::debug_none())? {
            Value::Int(n) => n,
            _ => 0,
        },
        _ => check_int(vm, args, 2)?,
    };
    if i > j {
        return Ok(smallvec![]);
    }
    let n = (j as i128 - i as i128 + 1) as u128;
    if n >= 1_000_000 {
        return Err(vm.native_error("too many results to unpack"));
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut k = i;
    loop {
        let v = match &t {
            Value::Tab(tb) if tb.meta.get().is_none() => tb.get_int(k),
            _ => vm.index(&t, &Value::Int(k), crate::vm::debug_none())?,
        };
        out.push(v);
        if k == j {
            break;
        }
        k += 1;
    }
    Ok(out.into())
}

/// Loads the base library.
pub fn open(vm: &mut Vm) {
    let g = Value::Tab(vm.globals);
    vm.set_global("_G", g);
    vm.set_global("_VERSION", Value::str("Lua 5.4"));
    def(vm, "print", |vm, args| {
        let mut line = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                line.push(b'\t');
            }
            match vm.tostring(a)? {
                Value::Str(s) => line.extend_from_slice(&s.bytes),
                _ => unreachable!(),
            }
        }
        line.push(b'\n');
        let _ = vm.out.write_all(&line);
        Ok(smallvec![])
    });
    def(vm, "type", |vm, args| {
        if args.is_empty() {
            return Err(vm.arg_error(1, "value expected"));
        }
        Ok(smallvec![Value::Str(crate::value::intern(
            args[0].type_name().as_bytes(),
        ))])
    });
    def(vm, "tostring", |vm, args| {
        if args.is_empty() {
            return Err(vm.arg_error(1, "value expected"));
        }
        Ok(smallvec![vm.tostring(&args[0])?])
    });
    def(vm, "tonumber", tonumber);
    let next_fn = def(vm, "next", next);
    def_keeping(vm, "pairs", vec![next_fn], move |vm, args| {
        if args.is_empty() {
            return Err(vm.arg_error(1, "value expected"));
        }
        let h = vm.metamethod(&args[0], &Value::str("__pairs"));
        if !matches!(h, Value::Nil) {
            let mut r = vm.call(&h, vec![args[0]])?;
            r.resize(3, Value::Nil);
            return Ok(r.into());
        }
        check_table(vm, args, 0)?;
        Ok(smallvec![next_fn, args[0], Value::Nil])
    });
    let iter = Vm::native("ipairs_iter", ipairs_iter);
    def_keeping(vm, "ipairs", vec![iter], move |vm, args| {
        if args.is_empty() {
            return Err(vm.arg_error(1, "value expected"));
        }
        Ok(smallvec![iter, args[0], Value::Int(0)])
    });
    def(vm, "select", select);
    def(vm, "rawget", |vm, args| {
        let t = check_table(vm, args, 0)?;
        let v = t.get(arg(args, 1));
        Ok(smallvec![v])
    });
    def(vm, "rawset", |vm, args| {
        let t = check_table(vm, args, 0)?;
        vm.rawset(&t, *arg(args, 1), *arg(args, 2))?;
        Ok(smallvec![args[0]])
    });
    def(vm, "rawequal", |_vm, args| {
        Ok(smallvec![Value::Boolean(arg(args, 0).raw_eq(arg(args, 1)))])
    });
    def(vm, "rawlen", |vm, args| match arg(args, 0) {
        Value::Tab(t) => Ok(smallvec![Value::Int(t.len())]),
        Value::Str(s) => Ok(smallvec![Value::Int(s.bytes.len() as i64)]),
        _ => Err(type_error(vm, args, 0, "table or string")),
    });
    def(vm, "assert", |vm, args| {
        if args.is_empty() {
            return Err(vm.arg_error(1, "value expected"));
        }
        if args[0].truthy() {
            return Ok(Rets::from_slice(args));
        }
        let m = if args.len() >= 2 {
            args[1]
        } else {
            Value::str("assertion failed!")
        };
        error(vm, &[m])
    });
    def(vm, "error", error);
    def(vm, "pcall", pcall);
    def(vm, "xpcall", xpcall);
    def(vm, "load", load);
    def(vm, "require", require);
    def(vm, "setmetatable", |vm, args| {
        let t = check_table(vm, args, 0)?;
        let mt = match arg(args, 1) {
            Value::Nil => None,
            Value::Tab(m) => Some(*m),
            _ => return Err(type_error(vm, args, 1, "nil or table")),
        };
        if let Some(old) = t.meta.get() {
            if !matches!(old.get_str(&vm.tm.metatable), Value::Nil) {
                return Err(vm.native_error("cannot change a protected metatable"));
            }
        }
        t.meta.set(mt);
        Ok(smallvec![args[0]])
    });
    def(vm, "getmetatable", |vm, args| {
        let Some(mt) = vm.metatable(arg(args, 0)) else {
            return Ok(smallvec![Value::Nil]);
        };
        let protected = mt.get_str(&vm.tm.metatable);
        if !matches!(protected, Value::Nil) {
            return Ok(smallvec![protected]);
        }
        Ok(smallvec![Value::Tab(mt)])
    });
    def(vm, "collectgarbage", |_vm, args| {
        let opt = match arg(args, 0) {
            Value::Str(s) => String::from_utf8_lossy(&s.bytes).into_owned(),
            _ => "collect".into(),
        };
        Ok(smallvec![match opt.as_str() {
            "count" => Value::Num(0.0),
            "isrunning" => Value::Boolean(true),
            _ => Value::Int(0),
        }])
    });
    // package
    let package = new_table();
    let loaded = new_table();
    package.set(Value::interned("loaded"), Value::Tab(loaded));
    package.set(Value::interned("path"), Value::str("./?.lua;./?/init.lua"));
    package.set(Value::interned("cpath"), Value::str(""));
    package.set(Value::interned("preload"), Value::Tab(new_table()));
    vm.set_global("package", Value::Tab(package));
}

/// Records the loaded libraries in `package.loaded` (after all libraries are open).
pub fn fill_loaded(vm: &mut Vm) {
    let Value::Tab(package) = vm.get_global("package") else {
        return;
    };
    let Value::Tab(loaded) = package.get(&Value::str("loaded")) else {
        return;
    };
    for name in ["string", "table", "math", "io", "os", "package"] {
        let v = vm.get_global(name);
        loaded.set(Value::str(name), v);
    }
    loaded.set(Value::interned("_G"), Value::Tab(vm.globals));
}
