//! The standard libraries (base, string, table, math, os, io) and the argument-checking
//! helpers they share. Each library registers native functions into the globals; they know
//! the VM only through `Vm::call`, `Vm::index` and the error helpers.

pub mod base;
pub mod format;
pub mod io;
pub mod math;
pub mod pattern;
pub mod string;
pub mod table;

use crate::value::{LStr, TRef, Value};
use crate::vm::{LResult, LuaError, Vm};
use meta_jit::hints::Gc;

/// Loads every library into the VM's globals.
pub fn open_libs(vm: &mut Vm) {
    base::open(vm);
    string::open(vm);
    table::open(vm);
    math::open(vm);
    io::open(vm);
}

/// A new empty table value.
pub fn new_table() -> TRef {
    crate::table::Table::new_gc(0, 0)
}

/// Registers `funcs` as fields of a new global table `lib`.
pub fn register(vm: &mut Vm, lib: &str, funcs: Vec<(&str, crate::value::NativeFn)>) -> TRef {
    let t = new_table();
    for (name, f) in funcs {
        let v = Value::Builtin(Gc::new(crate::value::Native {
            name: format!("{lib}.{name}"),
            f,
            keep: vec![],
        }));
        t.set(Value::interned(name), v);
    }
    vm.set_global(lib, Value::Tab(t));
    t
}

/// Argument `i` (0-based), nil if missing.
pub fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Nil)
}

fn got(args: &[Value], i: usize) -> &'static str {
    match args.get(i) {
        None => "no value",
        Some(v) => v.type_name(),
    }
}

/// `bad argument #i+1 to 'f' (T expected, got X)`.
pub fn type_error(vm: &Vm, args: &[Value], i: usize, expected: &str) -> LuaError {
    let g = match args.get(i) {
        Some(v @ Value::Tab(_)) => vm.type_name_of(v),
        _ => got(args, i).to_string(),
    };
    vm.arg_error(i + 1, &format!("{expected} expected, got {g}"))
}

/// A table argument.
pub fn check_table(vm: &Vm, args: &[Value], i: usize) -> LResult<TRef> {
    match args.get(i) {
        Some(Value::Tab(t)) => Ok(*t),
        _ => Err(type_error(vm, args, i, "table")),
    }
}

/// An integer argument (floats with integral values and numeric strings accepted).
pub fn check_int(vm: &Vm, args: &[Value], i: usize) -> LResult<i64> {
    let v = arg(args, i);
    match v.to_integer() {
        Some(n) => Ok(n),
        None => {
            if v.to_number().is_some() {
                Err(vm.arg_error(i + 1, "number has no integer representation"))
            } else {
                Err(type_error(vm, args, i, "number"))
            }
        }
    }
}

/// An optional integer argument.
pub fn opt_int(vm: &Vm, args: &[Value], i: usize, def: i64) -> LResult<i64> {
    match arg(args, i) {
        Value::Nil => Ok(def),
        _ => check_int(vm, args, i),
    }
}

/// A number argument (numeric strings converted).
pub fn check_num(vm: &Vm, args: &[Value], i: usize) -> LResult<Value> {
    match arg(args, i).to_number() {
        Some(n) => Ok(n),
        None => Err(type_error(vm, args, i, "number")),
    }
}

/// A number argument as a float.
pub fn check_f64(vm: &Vm, args: &[Value], i: usize) -> LResult<f64> {
    Ok(check_num(vm, args, i)?.as_f64().unwrap())
}

/// A string argument (numbers converted).
pub fn check_str(vm: &Vm, args: &[Value], i: usize) -> LResult<Gc<LStr>> {
    match arg(args, i) {
        Value::Str(s) => Ok(*s),
        v @ (Value::Int(_) | Value::Num(_)) => {
            Ok(LStr::new(&crate::value::to_str_bytes(v).unwrap()))
        }
        _ => Err(type_error(vm, args, i, "string")),
    }
}

/// An optional string argument.
pub fn opt_str(vm: &Vm, args: &[Value], i: usize) -> LResult<Option<Gc<LStr>>> {
    match arg(args, i) {
        Value::Nil => Ok(None),
        _ => Ok(Some(check_str(vm, args, i)?)),
    }
}

/// Boxes a native body.
pub fn nf(
    f: impl Fn(&mut Vm, &[Value]) -> LResult<crate::value::Rets> + 'static,
) -> crate::value::NativeFn {
    Box::new(f)
}
