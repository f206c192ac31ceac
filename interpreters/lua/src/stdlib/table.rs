//! The table library: insert, remove, concat, sort (PUC Lua's quicksort, so that an invalid
//! order function is detected the same way), pack, unpack, move.

use super::{arg, check_int, check_table, nf, opt_int, register, type_error};
use crate::table::Table;
use crate::value::Rets;
use crate::value::{LStr, TRef, Value};
use crate::vm::{debug_none, LResult, Vm};
use meta_jit::hints::Gc;
use smallvec::smallvec;

fn geti(vm: &mut Vm, t: &TRef, i: i64) -> LResult<Value> {
    if t.meta.get().is_none() {
        return Ok(t.get_int(i));
    }
    vm.index(&Value::Tab(*t), &Value::Int(i), debug_none())
}

fn seti(vm: &mut Vm, t: &TRef, i: i64, v: Value) -> LResult<()> {
    if t.meta.get().is_none() {
        t.set_int(i, v);
        return Ok(());
    }
    vm.setindex(&Value::Tab(*t), Value::Int(i), v, debug_none())
}

fn len(vm: &mut Vm, t: &TRef) -> LResult<i64> {
    if t.meta.get().is_none() {
        return Ok(t.len());
    }
    match vm.len_of(&Value::Tab(*t), debug_none())? {
        Value::Int(n) => Ok(n),
        _ => Err(vm.native_error("object length is not an integer")),
    }
}

fn insert(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = check_table(vm, args, 0)?;
    let e = len(vm, &t)?.wrapping_add(1);
    match args.len() {
        2 => seti(vm, &t, e, args[1])?,
        3 => {
            let pos = check_int(vm, args, 1)?;
            if (pos as u64).wrapping_sub(1) >= e as u64 {
                return Err(vm.arg_error(2, "position out of bounds"));
            }
            let all_in_array = t.arr_len() as i64 == e - 1;
            if all_in_array && t.insert_at(pos, args[2]) {
                return Ok(smallvec![]);
            }
            let mut i = e;
            while i > pos {
                let v = geti(vm, &t, i - 1)?;
                seti(vm, &t, i, v)?;
                i -= 1;
            }
            seti(vm, &t, pos, args[2])?;
        }
        _ => return Err(vm.native_error("wrong number of arguments to 'insert'")),
    }
    Ok(smallvec![])
}

fn remove(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = check_table(vm, args, 0)?;
    let size = len(vm, &t)?;
    let mut pos = opt_int(vm, args, 1, size)?;
    if args.len() > 1 && pos != size && (pos as u64).wrapping_sub(1) > size as u64 {
        return Err(vm.arg_error(1, "position out of bounds"));
    }
    let all_in_array = t.arr_len() as i64 == size;
    if all_in_array {
        let removed = t.remove_at(pos);
        if let Some(r) = removed {
            return Ok(smallvec![r]);
        }
    }
    let r = geti(vm, &t, pos)?;
    while pos < size {
        let v = geti(vm, &t, pos + 1)?;
        seti(vm, &t, pos, v)?;
        pos += 1;
    }
    seti(vm, &t, pos, Value::Nil)?;
    Ok(smallvec![r])
}

/// `table.concat(t, sep)` of the items `1..=#t` of a table without a metatable (so no
/// `__index` and no `__len`), when each is a string or a number: the string, sized before it
/// is built (one string item is the result as it is). None otherwise (the library's `concat` then raises the error or calls the
/// metamethods). `table.concat` without bounds and the JIT's `concat_list` run it.
pub(crate) fn concat_plain(t: Gc<Table>, sep: Option<Gc<LStr>>) -> Option<Gc<LStr>> {
    if t.meta.get().is_some() {
        return None;
    }
    let n = t.len();
    // One string: the string itself (strings are values; nothing tells two equal ones
    // apart), with no copy.
    if n == 1 {
        if let Value::Str(s) = t.get_int(1) {
            return Some(s);
        }
    }
    let mut size = 0;
    for k in 1..=n {
        match t.get_int(k) {
            Value::Str(s) => size += s.bytes.len(),
            // A number's text is at most 40 bytes (`%.14g`, an integer's digits).
            Value::Int(_) | Value::Num(_) => size += 40,
            _ => return None,
        }
    }
    let seps = sep.map_or(0, |s| s.bytes.len() * (n.max(1) - 1) as usize);
    let mut out = Vec::with_capacity(size + seps);
    for k in 1..=n {
        match t.get_int(k) {
            Value::Str(s) => out.extend_from_slice(&s.bytes),
            v => out.extend_from_slice(&crate::value::to_str_bytes(&v).unwrap()),
        }
        if k < n {
            if let Some(s) = sep {
                out.extend_from_slice(&s.bytes);
            }
        }
    }
    Some(LStr::new(&out))
}

fn concat(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = check_table(vm, args, 0)?;
    let sep = super::opt_str(vm, args, 1)?;
    if matches!(arg(args, 2), Value::Nil) && matches!(arg(args, 3), Value::Nil) {
        if let Some(s) = concat_plain(t, sep) {
            return Ok(smallvec![Value::Str(s)]);
        }
    }
    let i = opt_int(vm, args, 2, 1)?;
    let j = match arg(args, 3) {
        Value::Nil => len(vm, &t)?,
        _ => check_int(vm, args, 3)?,
    };
    let mut out = Vec::new();
    let mut k = i;
    while k <= j {
        let v = geti(vm, &t, k)?;
        match &v {
            Value::Str(s) => out.extend_from_slice(&s.bytes),
            Value::Int(_) | Value::Num(_) => {
                out.extend_from_slice(&crate::value::to_str_bytes(&v).unwrap())
            }
            _ => {
                return Err(vm.native_error(&format!(
                    "invalid value ({}) at index {} in table for 'concat'",
                    vm.type_name_of(&v),
                    k
                )))
            }
        }
        if k < j {
            if let Some(s) = &sep {
                out.extend_from_slice(&s.bytes);
            }
        }
        if k == i64::MAX {
            break;
        }
        k += 1;
    }
    Ok(smallvec![Value::bytes(&out)])
}

fn sort_lt(vm: &mut Vm, cmp: &Value, a: &Value, b: &Value) -> LResult<bool> {
    if matches!(cmp, Value::Nil) {
        vm.less_than(a, b)
    } else {
        Ok(vm.call1(cmp, vec![*a, *b])?.truthy())
    }
}

fn auxsort(vm: &mut Vm, a: &mut [Value], mut lo: i64, mut up: i64, cmp: &Value) -> LResult<()> {
    let bad = |vm: &Vm| vm.native_error("invalid order function for sorting");
    while lo < up {
        if sort_lt(vm, cmp, &a[up as usize], &a[lo as usize])? {
            a.swap(lo as usize, up as usize);
        }
        if up - lo == 1 {
            break;
        }
        let p = lo + (up - lo) / 2;
        if sort_lt(vm, cmp, &a[p as usize], &a[lo as usize])? {
            a.swap(p as usize, lo as usize);
        } else if sort_lt(vm, cmp, &a[up as usize], &a[p as usize])? {
            a.swap(p as usize, up as usize);
        }
        if up - lo == 2 {
            break;
        }
        let pivot = a[p as usize];
        a.swap(p as usize, (up - 1) as usize);
        let mut i = lo;
        let mut j = up - 1;
        loop {
            i += 1;
            while sort_lt(vm, cmp, &a[i as usize], &pivot)? {
                if i == up - 1 {
                    return Err(bad(vm));
                }
                i += 1;
            }
            j -= 1;
            while sort_lt(vm, cmp, &pivot, &a[j as usize])? {
                if j < i {
                    return Err(bad(vm));
                }
                j -= 1;
            }
            if j < i {
                break;
            }
            a.swap(i as usize, j as usize);
        }
        a.swap((up - 1) as usize, i as usize);
        if i - lo < up - i {
            auxsort(vm, a, lo, i - 1, cmp)?;
            lo = i + 1;
        } else {
            auxsort(vm, a, i + 1, up, cmp)?;
            up = i - 1;
        }
    }
    Ok(())
}

fn sort(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = check_table(vm, args, 0)?;
    let n = len(vm, &t)?;
    let cmp = *arg(args, 1);
    if !matches!(cmp, Value::Nil | Value::LFunc(_) | Value::Builtin(_)) {
        return Err(type_error(vm, args, 1, "function"));
    }
    if n > 1 {
        let mut items = Vec::with_capacity(n as usize);
        for i in 1..=n {
            items.push(geti(vm, &t, i)?);
        }
        let r = auxsort(vm, &mut items, 0, n - 1, &cmp);
        // Write back even on error, as the in-place sort would have left the table.
        for (i, v) in items.into_iter().enumerate() {
            seti(vm, &t, i as i64 + 1, v)?;
        }
        r?;
    }
    Ok(smallvec![])
}

fn pack(_vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let t = super::new_table();
    let n = args.len();
    {
        let tb = t;
        for (i, v) in args.iter().enumerate() {
            tb.set_int(i as i64 + 1, *v);
        }
        tb.set(Value::interned("n"), Value::Int(n as i64));
    }
    Ok(smallvec![Value::Tab(t)])
}

fn move_(vm: &mut Vm, args: &[Value]) -> LResult<Rets> {
    let a1 = check_table(vm, args, 0)?;
    let f = check_int(vm, args, 1)?;
    let e = check_int(vm, args, 2)?;
    let tpos = check_int(vm, args, 3)?;
    let a2 = match arg(args, 4) {
        Value::Nil => a1,
        _ => check_table(vm, args, 4)?,
    };
    if e >= f {
        if !(f > 0 || e < i64::MAX + f) {
            return Err(vm.arg_error(3, "too many elements to move"));
        }
        if tpos > i64::MAX - (e - f) {
            return Err(vm.arg_error(4, "destination wrap around"));
        }
        if tpos > e || tpos <= f || !meta_jit::hints::Gc::ptr_eq(a1, a2) {
            for i in 0..=(e - f) {
                let v = geti(vm, &a1, f + i)?;
                seti(vm, &a2, tpos + i, v)?;
            }
        } else {
            let mut i = e - f;
            loop {
                let v = geti(vm, &a1, f + i)?;
                seti(vm, &a2, tpos + i, v)?;
                if i == 0 {
                    break;
                }
                i -= 1;
            }
        }
    }
    Ok(smallvec![Value::Tab(a2)])
}

/// Loads the table library.
pub fn open(vm: &mut Vm) {
    let t = register(
        vm,
        "table",
        vec![
            ("insert", nf(insert)),
            ("remove", nf(remove)),
            ("concat", nf(concat)),
            ("sort", nf(sort)),
            ("pack", nf(pack)),
            ("unpack", nf(super::base::unpack)),
            ("move", nf(move_)),
        ],
    );
    let u = t.get(&Value::str("unpack"));
    vm.set_global("unpack", u);
}
