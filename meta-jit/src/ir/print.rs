//! The printer of the text form. The same text is the language of every optimizer and backend
//! test and of the JIT log, and [`super::parse`] reads it back.
//!
//! Values are renamed as they are printed: inputs and ops that define a value are numbered in
//! order (`i0`, `p1`, `f2`, ...), so two traces that are equal modulo renaming print the same
//! text. That is how tests compare an optimized trace with the expected one.

use super::{Access, Const, DescrKind, OpRef, Opcode, PendingStore, Resume, Trace, Type, Value};
use std::fmt::Write;

/// Prints a whole trace: descriptor declarations, the input header, then one op per line.
pub fn print(trace: &Trace) -> String {
    let names = Names::new(trace);
    let mut out = String::new();
    for d in &trace.descrs {
        let _ = writeln!(out, "descr {} = {}", d.name, descr_text(trace, &d.kind));
    }
    let inputs: Vec<String> = trace.inputs().map(|r| names.value(trace, r)).collect();
    let _ = writeln!(out, "[{}]", inputs.join(", "));
    for i in trace.num_inputs()..trace.ops.len() {
        out.push_str(&names.op_line(trace, i));
        out.push('\n');
    }
    out
}

/// Prints a trace for the JIT log and the trace viewer: like [`print()`], but every guard shows
/// its number (`guard_true(i3, id=7) [...]`, which the parser reads back), and before op `at`
/// of each `(at, text)` of `marks` (in increasing order) comes a comment line `# text`: the
/// guest position the ops below come from (PyPy's `debug_merge_point`).
pub fn listing(trace: &Trace, marks: &[(usize, String)]) -> String {
    let names = Names::new(trace);
    let mut out = String::new();
    for d in &trace.descrs {
        let _ = writeln!(out, "descr {} = {}", d.name, descr_text(trace, &d.kind));
    }
    let inputs: Vec<String> = trace.inputs().map(|r| names.value(trace, r)).collect();
    let _ = writeln!(out, "[{}]", inputs.join(", "));
    let mut marks = marks.iter().peekable();
    for i in trace.num_inputs()..trace.ops.len() {
        while let Some((_, text)) = marks.next_if(|m| m.0 <= i) {
            let _ = writeln!(out, "# {text}");
        }
        out.push_str(&names.op_line_numbered(trace, i, true));
        out.push('\n');
    }
    out
}

/// The names a printed trace gives its values.
pub struct Names {
    names: Vec<Option<u32>>,
}

impl Names {
    /// Numbers the value-defining ops of `trace` in order.
    pub fn new(trace: &Trace) -> Names {
        let mut n = 0;
        let names = trace
            .ops
            .iter()
            .map(|op| {
                (op.ty() != Type::Void).then(|| {
                    n += 1;
                    n - 1
                })
            })
            .collect();
        Names { names }
    }

    /// The text of a value: a name for an op, the literal for a constant, `vN` for a virtual.
    pub fn value(&self, trace: &Trace, r: OpRef) -> String {
        if r.is_virtual() {
            return format!("v{}", r.index());
        }
        if let Some(c) = trace.const_of(r) {
            return const_text(c);
        }
        let ty = trace.ops.get(r.index()).map_or(Type::Void, |op| op.ty());
        match self.names.get(r.index()).copied().flatten() {
            Some(n) => format!("{}{}", ty.letter(), n),
            None => format!("<bad ref {:?}>", r),
        }
    }

    /// The line of op `i` (without a newline).
    pub fn op_line(&self, trace: &Trace, i: usize) -> String {
        self.op_line_numbered(trace, i, false)
    }

    /// The line of op `i`, with the guard's number (`id=N`) when `ids` and the op is a guard.
    pub fn op_line_numbered(&self, trace: &Trace, i: usize, ids: bool) -> String {
        let op = &trace.ops[i];
        let mut s = String::new();
        if op.ty() != Type::Void {
            let _ = write!(s, "{} = ", self.value(trace, OpRef::op(i)));
        }
        s.push_str(op.opcode.name());
        s.push('(');
        let mut parts: Vec<String> = op.args.iter().map(|&a| self.value(trace, a)).collect();
        if let Some(d) = op.descr {
            parts.push(format!("descr={}", trace.get_descr(d).name));
        }
        if let (true, Some(r)) = (ids, &op.resume) {
            parts.push(format!("id={}", r.id));
        }
        s.push_str(&parts.join(", "));
        s.push(')');
        if let Some(r) = &op.resume {
            s.push(' ');
            s.push_str(&self.resume(trace, r));
        }
        if i + 1 == trace.ops.len() && op.opcode == Opcode::Jump && !trace.loop_stores.is_empty()
        {
            s.push(' ');
            s.push_str(&self.stores(trace, &trace.loop_stores));
        }
        s
    }

    /// Pending stores: `<descr(base)=value, descr(base, index)=value>`.
    fn stores(&self, trace: &Trace, stores: &[PendingStore]) -> String {
        let ss: Vec<String> = stores
            .iter()
            .map(|st| {
                let d = &trace.get_descr(st.descr).name;
                let at = match st.index {
                    Some(i) => format!("{}, {}", self.value(trace, st.base), self.value(trace, i)),
                    None => self.value(trace, st.base),
                };
                format!("{d}({at})={}", self.value(trace, st.value))
            })
            .collect();
        format!("<{}>", ss.join(", "))
    }

    fn resume(&self, trace: &Trace, r: &Resume) -> String {
        let mut s = String::from("[");
        let simple = r.frames.len() == 1 && r.frames[0].code == 0 && r.frames[0].pc == 0;
        let mut at = 0;
        for (k, f) in r.frames.iter().enumerate() {
            if k > 0 {
                s.push_str(" | ");
            }
            if !simple {
                let _ = write!(s, "{}@{}:", f.code, f.pc);
                if f.len > 0 {
                    s.push(' ');
                }
            }
            let vals = &r.values[at..at + f.len as usize];
            at += f.len as usize;
            let vals: Vec<String> = vals.iter().map(|&v| self.value(trace, v)).collect();
            s.push_str(&vals.join(", "));
        }
        s.push(']');
        if !r.virtuals.is_empty() {
            let vs: Vec<String> = r
                .virtuals
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let d = trace.get_descr(v.descr);
                    if matches!(d.kind, DescrKind::Array(_)) {
                        let items: Vec<String> =
                            v.fields.iter().map(|f| self.value(trace, f.1)).collect();
                        format!("v{k} = {}[{}]", d.name, items.join(", "))
                    } else {
                        let fs: Vec<String> = v
                            .fields
                            .iter()
                            .map(|f| {
                                let fname = &trace.get_descr(f.0).name;
                                format!("{fname}={}", self.value(trace, f.1))
                            })
                            .collect();
                        format!("v{k} = {}({})", d.name, fs.join(", "))
                    }
                })
                .collect();
            let _ = write!(s, " {{{}}}", vs.join(", "));
        }
        if !r.stores.is_empty() {
            s.push(' ');
            s.push_str(&self.stores(trace, &r.stores));
        }
        s
    }
}

/// The text of a constant.
pub fn const_text(c: &Const) -> String {
    match c {
        Const::Func { name, .. } => format!("ConstFn({name})"),
        Const::Value(Value::Int(i)) => i.to_string(),
        Const::Value(Value::Ref(p)) => format!("ConstPtr({p:#x})"),
        Const::Value(Value::Float(f)) => float_text(*f),
    }
}

fn float_text(f: f64) -> String {
    if f.is_nan() {
        format!("nan({:#x})", f.to_bits())
    } else {
        format!("{f:?}")
    }
}

fn descr_text(trace: &Trace, k: &DescrKind) -> String {
    let flag = |b: bool, name: &str| {
        if b {
            format!(", {name}")
        } else {
            String::new()
        }
    };
    let alias = |a: &Option<String>| match a {
        Some(name) => format!(", alias={name}"),
        None => String::new(),
    };
    match k {
        DescrKind::Field(f) => format!(
            "field(offset={}, size={}, kind={}{}{}{}{}{}{})",
            f.offset,
            f.size,
            f.kind.letter(),
            flag(f.signed, "signed"),
            flag(f.immutable, "immutable"),
            flag(f.quasi_immutable, "quasi_immutable"),
            flag(f.vable, "vable"),
            flag(f.length, "length"),
            alias(&f.alias),
        ),
        DescrKind::Array(a) => format!(
            "array(base={}, item={}, kind={}{}{}{})",
            a.base,
            a.item_size,
            a.kind.letter(),
            flag(a.signed, "signed"),
            flag(a.vable, "vable"),
            alias(&a.alias),
        ),
        DescrKind::Size(s) => format!("size(size={}, align={})", s.size, s.align),
        DescrKind::Call(c) => {
            let args: String = c.args.iter().map(|t| t.letter()).collect();
            format!(
                "call(args={}, ret={}, reads={}, writes={}{}{}{})",
                if args.is_empty() {
                    "-".to_string()
                } else {
                    args
                },
                c.ret.letter(),
                access_text(trace, &c.effects.reads),
                access_text(trace, &c.effects.writes),
                flag(c.effects.elidable, "elidable"),
                flag(c.effects.can_invalidate, "can_invalidate"),
                flag(c.effects.loop_invariant, "loop_invariant"),
            )
        }
        DescrKind::Target(t) => format!("target({t})"),
    }
}

fn access_text(trace: &Trace, a: &Access) -> String {
    match a {
        Access::Nothing => "none".to_string(),
        Access::Everything => "*".to_string(),
        Access::Descrs(ds) => {
            let names: Vec<&str> = ds
                .iter()
                .map(|&d| trace.get_descr(d).name.as_str())
                .collect();
            format!("[{}]", names.join(" "))
        }
    }
}
