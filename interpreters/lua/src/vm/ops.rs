//! The slow paths of the VM's operations: metatables and metamethods (`__index`,
//! `__newindex`, arithmetic, comparison, `__concat`, `__len`, `__eq`, `__tostring`), with
//! PUC Lua's error messages. The dispatch loop calls these only when its fast path fails.

use super::arith::{arith, ArOp, ArithErr};
use super::debug::Desc;
use super::{LResult, LuaError, Vm};
use crate::value::{
    fmt_float, le_float_int, le_int_float, lt_float_int, lt_int_float, TRef, Value,
};

const ARITH_NAMES: [&str; 14] = [
    "add", "sub", "mul", "div", "mod", "pow", "idiv", "band", "bor", "bxor", "shl", "shr", "unm",
    "bnot",
];

impl Vm {
    /// The metatable of a value.
    pub fn metatable(&self, v: &Value) -> Option<TRef> {
        match v {
            Value::Tab(t) => t.meta.get(),
            Value::Str(_) => self.string_meta,
            _ => None,
        }
    }

    /// A metamethod of a value (nil if none).
    pub fn metamethod(&self, v: &Value, event: &Value) -> Value {
        match self.metatable(v) {
            Some(mt) => mt.get_str(event),
            None => Value::Nil,
        }
    }

    /// A type name honouring `__name`.
    pub fn type_name_of(&self, v: &Value) -> String {
        if let Value::Tab(_) = v {
            if let Value::Str(s) = self.metamethod(v, &self.tm.name) {
                return String::from_utf8_lossy(&s.bytes).into_owned();
            }
        }
        v.type_name().to_string()
    }

    /// "attempt to call a nil value (global 'f')" for the value at stack slot `func`.
    pub(crate) fn call_error(&self, func: usize) -> LuaError {
        let v = &self.stack[func];
        let info = match self.frames.last() {
            Some(f) if func >= f.base && func < f.base + f.cl.proto.maxstack as usize => {
                self.varinfo(Desc::Rk((func - f.base) as u16))
            }
            _ => String::new(),
        };
        self.rt_error(&format!(
            "attempt to call a {} value{}",
            self.type_name_of(v),
            info
        ))
    }

    /// `obj[key]` with `__index`.
    pub fn index(&mut self, obj: &Value, key: &Value, d: Desc) -> LResult<Value> {
        let mut o = *obj;
        for _ in 0..2000 {
            let h = if let Value::Tab(t) = &o {
                let v = t.get(key);
                if !matches!(v, Value::Nil) {
                    return Ok(v);
                }
                match t.meta.get() {
                    None => return Ok(Value::Nil),
                    Some(mt) => {
                        let h = mt.get_str(&self.tm.index);
                        if matches!(h, Value::Nil) {
                            return Ok(Value::Nil);
                        }
                        h
                    }
                }
            } else {
                let h = self.metamethod(&o, &self.tm.index);
                if matches!(h, Value::Nil) {
                    let info = if std::ptr::eq(&o, obj) || o.raw_eq(obj) {
                        self.varinfo(d)
                    } else {
                        String::new()
                    };
                    return Err(self.rt_error(&format!(
                        "attempt to index a {} value{}",
                        self.type_name_of(&o),
                        info
                    )));
                }
                h
            };
            if matches!(h, Value::LFunc(_) | Value::Builtin(_)) {
                return self.call1s(&h, &[o, *key]);
            }
            o = h;
        }
        Err(self.rt_error("'__index' chain too long; possible loop"))
    }

    /// `obj[key] = val` with `__newindex`.
    pub fn setindex(&mut self, obj: &Value, key: Value, val: Value, d: Desc) -> LResult<()> {
        let mut o = *obj;
        for _ in 0..2000 {
            let h = if let Value::Tab(t) = &o {
                let h = {
                    match t.meta.get() {
                        None => Value::Nil,
                        Some(mt) => {
                            let h = mt.get_str(&self.tm.newindex);
                            if matches!(h, Value::Nil) || !matches!(t.get(&key), Value::Nil) {
                                Value::Nil
                            } else {
                                h
                            }
                        }
                    }
                };
                if matches!(h, Value::Nil) {
                    return self.rawset(t, key, val);
                }
                h
            } else {
                let h = self.metamethod(&o, &self.tm.newindex);
                if matches!(h, Value::Nil) {
                    let info = if o.raw_eq(obj) {
                        self.varinfo(d)
                    } else {
                        String::new()
                    };
                    return Err(self.rt_error(&format!(
                        "attempt to index a {} value{}",
                        self.type_name_of(&o),
                        info
                    )));
                }
                h
            };
            if matches!(h, Value::LFunc(_) | Value::Builtin(_)) {
                self.call(&h, vec![o, key, val])?;
                return Ok(());
            }
            o = h;
        }
        Err(self.rt_error("'__newindex' chain too long; possible loop"))
    }

    /// `t[key] = val` without metamethods, rejecting nil and NaN keys.
    pub fn rawset(&mut self, t: &TRef, key: Value, val: Value) -> LResult<()> {
        match &key {
            Value::Nil => return Err(self.rt_error("table index is nil")),
            Value::Num(f) if f.is_nan() => return Err(self.rt_error("table index is NaN")),
            _ => {}
        }
        t.set(key, val);
        Ok(())
    }

    /// Arithmetic or bitwise `a op b` when the fast path failed: coercions, metamethods, errors.
    pub fn arith_slow(
        &mut self,
        op: ArOp,
        a: &Value,
        b: &Value,
        da: Desc,
        db: Desc,
    ) -> LResult<Value> {
        match arith(op, a, b) {
            Ok(v) => return Ok(v),
            Err(ArithErr::Msg(m)) => return Err(self.rt_error(m)),
            Err(_) => {}
        }
        let ev = self.tm.arith[op as usize];
        let ha = self.metamethod(a, &ev);
        let a_str = matches!(a, Value::Str(_));
        let b_str = matches!(b, Value::Str(_));
        if !op.is_bitwise() && (a_str || (matches!(ha, Value::Nil) && b_str)) {
            // The string library's arithmetic metamethods.
            let hb = self.metamethod(b, &ev);
            if a_str && !b_str && !matches!(hb, Value::Nil) {
                return self.call1s(&hb, &[*a, *b]);
            }
            let name = ARITH_NAMES[op as usize];
            return Err(self.rt_error(&format!(
                "attempt to {} a '{}' with a '{}'",
                name,
                self.type_name_of(a),
                self.type_name_of(b)
            )));
        }
        let h = if matches!(ha, Value::Nil) {
            self.metamethod(b, &ev)
        } else {
            ha
        };
        if !matches!(h, Value::Nil) {
            return self.call1s(&h, &[*a, *b]);
        }
        if op.is_bitwise() {
            let an = matches!(a, Value::Int(_) | Value::Num(_));
            let bn = matches!(b, Value::Int(_) | Value::Num(_));
            if an && bn {
                // As PUC Lua's luaG_tointerror: the first operand if it is the bad one.
                let d = if a.to_integer().is_none() { da } else { db };
                return Err(self.rt_error(&format!(
                    "number{} has no integer representation",
                    self.varinfo(d)
                )));
            }
            let (v, d) = if !an { (a, da) } else { (b, db) };
            return Err(self.rt_error(&format!(
                "attempt to perform bitwise operation on a {} value{}",
                self.type_name_of(v),
                self.varinfo(d)
            )));
        }
        let an = matches!(a, Value::Int(_) | Value::Num(_));
        let (v, d) = if !an { (a, da) } else { (b, db) };
        Err(self.rt_error(&format!(
            "attempt to perform arithmetic on a {} value{}",
            self.type_name_of(v),
            self.varinfo(d)
        )))
    }

    fn order_error(&self, a: &Value, b: &Value) -> LuaError {
        let (ta, tb) = (self.type_name_of(a), self.type_name_of(b));
        if ta == tb {
            self.rt_error(&format!("attempt to compare two {ta} values"))
        } else {
            self.rt_error(&format!("attempt to compare {ta} with {tb}"))
        }
    }

    /// `a < b`.
    pub fn less_than(&mut self, a: &Value, b: &Value) -> LResult<bool> {
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => Ok(x < y),
            (Value::Num(x), Value::Num(y)) => Ok(x < y),
            (Value::Int(x), Value::Num(y)) => Ok(lt_int_float(*x, *y)),
            (Value::Num(x), Value::Int(y)) => Ok(lt_float_int(*x, *y)),
            (Value::Str(x), Value::Str(y)) => Ok(x.bytes < y.bytes),
            _ => {
                let ev = self.tm.lt;
                self.order_tm(a, b, &ev)
            }
        }
    }

    /// `a <= b`.
    pub fn less_equal(&mut self, a: &Value, b: &Value) -> LResult<bool> {
        match (a, b) {
            (Value::Int(x), Value::Int(y)) => Ok(x <= y),
            (Value::Num(x), Value::Num(y)) => Ok(x <= y),
            (Value::Int(x), Value::Num(y)) => Ok(le_int_float(*x, *y)),
            (Value::Num(x), Value::Int(y)) => Ok(le_float_int(*x, *y)),
            (Value::Str(x), Value::Str(y)) => Ok(x.bytes <= y.bytes),
            _ => {
                let ev = self.tm.le;
                self.order_tm(a, b, &ev)
            }
        }
    }

    fn order_tm(&mut self, a: &Value, b: &Value, ev: &Value) -> LResult<bool> {
        let mut h = self.metamethod(a, ev);
        if matches!(h, Value::Nil) {
            h = self.metamethod(b, ev);
        }
        if matches!(h, Value::Nil) {
            return Err(self.order_error(a, b));
        }
        Ok(self.call1s(&h, &[*a, *b])?.truthy())
    }

    /// `a == b` with `__eq`.
    pub fn equals(&mut self, a: &Value, b: &Value) -> LResult<bool> {
        if a.raw_eq(b) {
            return Ok(true);
        }
        if let (Value::Tab(_), Value::Tab(_)) = (a, b) {
            let ev = self.tm.eq;
            let mut h = self.metamethod(a, &ev);
            if matches!(h, Value::Nil) {
                h = self.metamethod(b, &ev);
            }
            if !matches!(h, Value::Nil) {
                return Ok(self.call1s(&h, &[*a, *b])?.truthy());
            }
        }
        Ok(false)
    }

    /// `#v`.
    pub fn len_of(&mut self, v: &Value, d: Desc) -> LResult<Value> {
        match v {
            Value::Str(s) => Ok(Value::Int(s.bytes.len() as i64)),
            _ => {
                let h = self.metamethod(v, &self.tm.len);
                if !matches!(h, Value::Nil) {
                    return self.call1s(&h, std::slice::from_ref(v));
                }
                if let Value::Tab(t) = v {
                    return Ok(Value::Int(t.len()));
                }
                Err(self.rt_error(&format!(
                    "attempt to get length of a {} value{}",
                    self.type_name_of(v),
                    self.varinfo(d)
                )))
            }
        }
    }

    /// Concatenates `vals` (registers `first..`) as `a .. b .. c`, right to left, with
    /// `__concat`.
    pub fn concat(&mut self, mut vals: Vec<Value>, first: u16) -> LResult<Value> {
        let stringable = |v: &Value| matches!(v, Value::Str(_) | Value::Int(_) | Value::Num(_));
        while vals.len() > 1 {
            let n = vals.len();
            if stringable(&vals[n - 1]) && stringable(&vals[n - 2]) {
                let mut k = n - 2;
                while k > 0 && stringable(&vals[k - 1]) {
                    k -= 1;
                }
                let s = concat_plain(&vals[k..]);
                vals.truncate(k);
                vals.push(Value::Str(s));
            } else {
                let b = vals.pop().unwrap();
                let a = vals.pop().unwrap();
                let ev = self.tm.concat;
                let mut h = self.metamethod(&a, &ev);
                if matches!(h, Value::Nil) {
                    h = self.metamethod(&b, &ev);
                }
                if matches!(h, Value::Nil) {
                    let (bad, reg) = if stringable(&a) {
                        (&b, n - 1)
                    } else {
                        (&a, n - 2)
                    };
                    return Err(self.rt_error(&format!(
                        "attempt to concatenate a {} value{}",
                        self.type_name_of(bad),
                        self.varinfo(Desc::Rk(first + reg as u16))
                    )));
                }
                let r = self.call1s(&h, &[a, b])?;
                vals.push(r);
            }
        }
        Ok(vals.pop().unwrap_or_default())
    }

    /// `tostring(v)` with `__tostring` and `__name`.
    pub fn tostring(&mut self, v: &Value) -> LResult<Value> {
        let h = self.metamethod(v, &self.tm.tostring);
        if !matches!(h, Value::Nil) {
            let r = self.call1s(&h, std::slice::from_ref(v))?;
            if let Value::Int(_) | Value::Num(_) = r {
                return Ok(Value::bytes(&crate::value::to_str_bytes(&r).unwrap()));
            }
            if !matches!(r, Value::Str(_)) {
                return Err(self.native_error("'__tostring' must return a string"));
            }
            return Ok(r);
        }
        Ok(match v {
            Value::Str(_) => *v,
            Value::Nil => Value::str("nil"),
            Value::Boolean(b) => Value::str(if *b { "true" } else { "false" }),
            Value::Int(i) => Value::str(&i.to_string()),
            Value::Num(f) => Value::str(&fmt_float(*f)),
            Value::Tab(_) => {
                let name = self.type_name_of(v);
                Value::str(&format!("{}: {:#x}", name, v.ptr()))
            }
            Value::LFunc(_) => Value::str(&format!("function: {:#x}", v.ptr())),
            Value::Builtin(_) => Value::str(&format!("function: {:#x}", v.ptr())),
        })
    }
}

/// The concatenation of strings and numbers (no metamethod applies to them): a new string,
/// numbers written as `tostring` writes them.
pub(crate) fn concat_plain(vals: &[Value]) -> meta_jit::gc::Gc<crate::value::LStr> {
    let mut buf = Vec::new();
    for v in vals {
        match v {
            Value::Str(s) => buf.extend_from_slice(&s.bytes),
            Value::Int(i) => buf.extend_from_slice(i.to_string().as_bytes()),
            Value::Num(f) => buf.extend_from_slice(fmt_float(*f).as_bytes()),
            _ => unreachable!("concat_plain of a value that is no string or number"),
        }
    }
    crate::value::LStr::new(&buf)
}
