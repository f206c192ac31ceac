//! The parser of the text form written by [`super::print`]. Values may have any names (their
//! first letter says their type: `i`, `f`, `p`); descriptors are declared at the top with
//! `descr NAME = ...` lines; functions are named by `ConstFn(name)` and looked up in an
//! [`Env`]. A trace that parses is also verified ([`super::verify`]).
//!
//! ```text
//! descr x = field(offset=8, size=8, kind=i, signed)
//! descr y = field(offset=0, size=8, kind=i, alias=i64)
//! [p0, i1]
//! i2 = getfield_i(p0, descr=x)
//! i3 = int_add(i2, i1)
//! guard_true(i3) [p0, i3]
//! finish(i3)
//! ```

use super::*;

/// What a trace text may name that the text cannot define: functions.
#[derive(Clone, Debug, Default)]
pub struct Env {
    funcs: HashMap<String, usize>,
}

impl Env {
    /// An empty environment.
    pub fn new() -> Env {
        Env::default()
    }

    /// Makes `ConstFn(name)` mean the function at `addr`.
    pub fn func(mut self, name: &str, addr: usize) -> Env {
        self.funcs.insert(name.to_string(), addr);
        self
    }
}

/// A parse (or verification) error, with its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The line of the text (0 for errors found by the verifier after parsing).
    pub line: usize,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for ParseError {}

/// Parses a trace with no function names.
pub fn parse(text: &str) -> Result<Trace, ParseError> {
    parse_with(text, &Env::new())
}

/// Parses a trace whose `ConstFn`s are looked up in `env`.
pub fn parse_with(text: &str, env: &Env) -> Result<Trace, ParseError> {
    let mut p = Parser {
        trace: Trace::new(),
        names: HashMap::new(),
        env,
        guards: 0,
    };
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    // Descriptors first, in two steps so that effect lists may name later descriptors.
    let decls: Vec<(usize, &str)> = lines
        .iter()
        .copied()
        .filter(|(_, l)| l.starts_with("descr "))
        .collect();
    for &(n, l) in &decls {
        let name = l["descr ".len()..].split('=').next().unwrap_or("").trim();
        if name.is_empty() || p.trace.descrs.iter().any(|d| d.name == name) {
            return Err(ParseError {
                line: n,
                msg: format!("bad or repeated descriptor `{name}`"),
            });
        }
        p.trace.descrs.push(Descr {
            name: name.to_string(),
            kind: DescrKind::Target(0),
        });
    }
    for (k, &(n, l)) in decls.iter().enumerate() {
        let body = l.split_once('=').map(|x| x.1).unwrap_or("");
        let kind = p
            .descr_kind(body)
            .map_err(|msg| ParseError { line: n, msg })?;
        p.trace.descrs[k].kind = kind;
    }
    let mut header = false;
    for &(n, l) in lines.iter().filter(|(_, l)| !l.starts_with("descr ")) {
        let r = if !header {
            header = true;
            p.header(l)
        } else {
            p.op_line(l)
        };
        r.map_err(|msg| ParseError { line: n, msg })?;
    }
    if !header {
        return Err(ParseError {
            line: 0,
            msg: "no input header `[...]`".into(),
        });
    }
    verify::verify(&p.trace).map_err(|e| ParseError {
        line: 0,
        msg: e.to_string(),
    })?;
    Ok(p.trace)
}

struct Parser<'e> {
    trace: Trace,
    names: HashMap<String, OpRef>,
    env: &'e Env,
    guards: u32,
}

type R<T> = Result<T, String>;

/// A cursor over one line.
struct Cur<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cur<'a> {
    fn new(s: &'a str) -> Cur<'a> {
        Cur { s, pos: 0 }
    }
    fn skip_ws(&mut self) {
        while self.rest().starts_with(' ') || self.rest().starts_with('\t') {
            self.pos += 1;
        }
    }
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }
    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.rest().chars().next()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> R<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{c}` at `{}`", self.rest()))
        }
    }
    /// A word: letters, digits and `_ . - + @` (names, numbers, opcode names).
    fn word(&mut self) -> R<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let ok = |c: char| c.is_ascii_alphanumeric() || "_.-+".contains(c);
        while self.rest().chars().next().is_some_and(ok) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(format!("expected a name or number at `{}`", self.rest()));
        }
        Ok(&self.s[start..self.pos])
    }
    fn end(&mut self) -> R<()> {
        self.skip_ws();
        if self.rest().is_empty() {
            Ok(())
        } else {
            Err(format!("unexpected `{}`", self.rest()))
        }
    }
}

impl Parser<'_> {
    fn header(&mut self, l: &str) -> R<()> {
        let mut c = Cur::new(l);
        c.expect('[')?;
        if !c.eat(']') {
            loop {
                let name = c.word()?;
                let ty = name_type(name)?;
                let r = self.trace.input(ty);
                self.define(name, r)?;
                if c.eat(']') {
                    break;
                }
                c.expect(',')?;
            }
        }
        c.end()
    }

    fn define(&mut self, name: &str, r: OpRef) -> R<()> {
        if self.names.insert(name.to_string(), r).is_some() {
            return Err(format!("`{name}` is defined twice"));
        }
        Ok(())
    }

    fn op_line(&mut self, l: &str) -> R<()> {
        let mut c = Cur::new(l);
        let first = c.word()?;
        let (result, opname) = if c.eat('=') {
            (Some(first), c.word()?)
        } else {
            (None, first)
        };
        let opcode = Opcode::from_name(opname).ok_or(format!("unknown operation `{opname}`"))?;
        if opcode.is_input() {
            return Err("inputs are declared in the header".into());
        }
        c.expect('(')?;
        let mut args = OpArgs::new();
        let mut descr = None;
        let mut id = None;
        if !c.eat(')') {
            loop {
                if c.rest().trim_start().starts_with("descr=") {
                    c.skip_ws();
                    c.pos += "descr=".len();
                    descr = Some(self.descr_ref(c.word()?)?);
                } else if opcode.is_guard() && c.rest().trim_start().starts_with("id=") {
                    // A guard's number, as the JIT log prints it.
                    c.skip_ws();
                    c.pos += "id=".len();
                    let w = c.word()?;
                    id = Some(
                        w.parse::<u32>()
                            .map_err(|_| format!("bad guard id `{w}`"))?,
                    );
                } else {
                    args.push(self.value(&mut c, &mut Vec::new())?);
                }
                if c.eat(')') {
                    break;
                }
                c.expect(',')?;
            }
        }
        let mut op = Op {
            opcode,
            args,
            descr,
            resume: None,
        };
        if opcode.is_guard() {
            let mut r = if c.peek() == Some('[') {
                self.resume(&mut c)?
            } else {
                Resume::default()
            };
            if r.frames.is_empty() {
                r.frames.push(FrameInfo {
                    code: 0,
                    pc: 0,
                    len: 0,
                });
            }
            r.id = id.unwrap_or(self.guards);
            self.guards = self.guards.max(r.id) + 1;
            op.resume = Some(Box::new(r));
        }
        if opcode == Opcode::Jump && c.peek() == Some('<') {
            // The stores the loop leaves pending (only the last op may be a jump).
            let mut none = Vec::new();
            self.trace.loop_stores = self.stores(&mut c, &mut none)?;
            if !none.is_empty() {
                return Err("a loop's pending stores name no virtual object".into());
            }
        }
        c.end()?;
        let ty = op.ty();
        let r = self.trace.push(op);
        match (result, ty) {
            (None, Type::Void) => Ok(()),
            (Some(name), ty) if ty != Type::Void => {
                if name_type(name)? != ty {
                    return Err(format!("`{name}` names a {ty:?} value by its first letter"));
                }
                self.define(name, r)
            }
            (None, _) => Err(format!("`{opname}` defines a value: name it")),
            (Some(_), _) => Err(format!("`{opname}` defines no value")),
        }
    }

    fn resume(&mut self, c: &mut Cur) -> R<Resume> {
        c.expect('[')?;
        let mut r = Resume::default();
        let mut virtual_names = Vec::new();
        if !c.eat(']') {
            loop {
                let mut info = FrameInfo {
                    code: 0,
                    pc: 0,
                    len: 0,
                };
                // An optional `code@pc:` prefix.
                let save = c.pos;
                if let Ok(w) = c.word() {
                    if c.eat('@') {
                        info.code = w.parse().map_err(|_| format!("bad jitcode number `{w}`"))?;
                        let pc = c.word()?;
                        info.pc = pc.parse().map_err(|_| format!("bad pc `{pc}`"))?;
                        c.expect(':')?;
                    } else {
                        c.pos = save;
                    }
                }
                while !matches!(c.peek(), Some('|') | Some(']')) {
                    r.values.push(self.value(c, &mut virtual_names)?);
                    info.len += 1;
                    if !c.eat(',') {
                        break;
                    }
                }
                r.frames.push(info);
                if c.eat(']') {
                    break;
                }
                c.expect('|')?;
            }
        }
        if c.eat('{') {
            loop {
                let vname = c.word()?;
                let k = vindex(vname)?;
                c.expect('=')?;
                let dname = c.word()?;
                let descr = self.descr_ref(dname)?;
                let mut fields = Vec::new();
                if c.eat('[') {
                    if !c.eat(']') {
                        loop {
                            fields.push((descr, self.value(c, &mut virtual_names)?));
                            if c.eat(']') {
                                break;
                            }
                            c.expect(',')?;
                        }
                    }
                } else {
                    c.expect('(')?;
                    if !c.eat(')') {
                        loop {
                            let f = self.descr_ref(c.word()?)?;
                            c.expect('=')?;
                            fields.push((f, self.value(c, &mut virtual_names)?));
                            if c.eat(')') {
                                break;
                            }
                            c.expect(',')?;
                        }
                    }
                }
                if r.virtuals.len() <= k {
                    r.virtuals.resize(
                        k + 1,
                        Virtual {
                            descr,
                            fields: vec![],
                        },
                    );
                }
                r.virtuals[k] = Virtual { descr, fields };
                if c.eat('}') {
                    break;
                }
                c.expect(',')?;
            }
        }
        r.stores = self.stores(c, &mut virtual_names)?;
        if let Some(&k) = virtual_names.iter().find(|&&k| k >= r.virtuals.len()) {
            return Err(format!("v{k} is not described"));
        }
        Ok(r)
    }

    /// Pending stores, if any: `<descr(base)=value, descr(base, index)=value>`.
    fn stores(&mut self, c: &mut Cur, virtual_names: &mut Vec<usize>) -> R<Vec<PendingStore>> {
        let mut out = Vec::new();
        if !c.eat('<') {
            return Ok(out);
        }
        loop {
            let descr = self.descr_ref(c.word()?)?;
            c.expect('(')?;
            let base = self.value(c, virtual_names)?;
            let index = if c.eat(',') {
                Some(self.value(c, virtual_names)?)
            } else {
                None
            };
            c.expect(')')?;
            c.expect('=')?;
            let value = self.value(c, virtual_names)?;
            out.push(PendingStore {
                descr,
                base,
                index,
                value,
            });
            if c.eat('>') {
                return Ok(out);
            }
            c.expect(',')?;
        }
    }

    /// A value: a name, a number, `ConstPtr(..)`, `ConstFn(..)`, `nan(..)`, or (in resume
    /// data, where `virtuals` collects them) `vN`.
    fn value(&mut self, c: &mut Cur, virtuals: &mut Vec<usize>) -> R<OpRef> {
        let w = c.word()?;
        fn inner<'a>(c: &mut Cur<'a>) -> R<&'a str> {
            c.expect('(')?;
            let x = c.word()?;
            c.expect(')')?;
            Ok(x)
        }
        match w {
            "ConstPtr" => {
                let x = inner(c)?;
                Ok(self.trace.ptr(parse_int(x)? as usize))
            }
            "ConstFn" => {
                let x = inner(c)?;
                let addr = *self
                    .env
                    .funcs
                    .get(x)
                    .ok_or(format!("unknown function `{x}`"))?;
                Ok(self.trace.func(x, addr))
            }
            "nan" => {
                let x = inner(c)?;
                Ok(self.trace.float(f64::from_bits(parse_int(x)? as u64)))
            }
            _ if w.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-' || ch == '+') => {
                if w.contains(['.', 'e', 'E']) || w.ends_with("inf") {
                    let f: f64 = w.parse().map_err(|_| format!("bad float `{w}`"))?;
                    Ok(self.trace.float(f))
                } else {
                    Ok(self.trace.int(parse_int(w)?))
                }
            }
            "inf" => Ok(self.trace.float(f64::INFINITY)),
            _ if w.starts_with('v') && w[1..].chars().all(|ch| ch.is_ascii_digit()) => {
                let k = vindex(w)?;
                virtuals.push(k);
                Ok(OpRef::virtual_obj(k))
            }
            _ => self
                .names
                .get(w)
                .copied()
                .ok_or(format!("`{w}` is not defined")),
        }
    }

    fn descr_ref(&self, name: &str) -> R<DescrId> {
        self.trace
            .descrs
            .iter()
            .position(|d| d.name == name)
            .map(|i| DescrId(i as u32))
            .ok_or(format!("unknown descriptor `{name}`"))
    }

    fn descr_kind(&self, body: &str) -> R<DescrKind> {
        let body = body.trim();
        let (kind, rest) = body.split_once('(').ok_or("expected `kind(...)`")?;
        let rest = rest.strip_suffix(')').ok_or("expected `)` at the end")?;
        let mut kv: HashMap<&str, &str> = HashMap::new();
        let mut flags = Vec::new();
        for part in split_top(rest) {
            match part.split_once('=') {
                Some((k, v)) => {
                    kv.insert(k.trim(), v.trim());
                }
                None => flags.push(part.trim()),
            }
        }
        let num = |k: &str| -> R<u32> {
            let v = kv.get(k).ok_or(format!("missing `{k}=`"))?;
            v.parse().map_err(|_| format!("bad number `{v}` for `{k}`"))
        };
        let ty = |k: &str| -> R<Type> {
            let v = kv.get(k).ok_or(format!("missing `{k}=`"))?;
            let mut cs = v.chars();
            match (cs.next().and_then(Type::from_letter), cs.next()) {
                (Some(t), None) => Ok(t),
                _ => Err(format!("bad kind `{v}`")),
            }
        };
        let has = |f: &str| flags.contains(&f);
        let alias = || -> R<Option<String>> {
            match kv.get("alias") {
                None => Ok(None),
                Some(v)
                    if !v.is_empty()
                        && v.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_.:@".contains(c))
                        && v.matches(':').count() <= 1
                        && !v.starts_with(':')
                        && !v.ends_with(':')
                        && v.matches('@').count() <= 1
                        && match v.split_once(':') {
                            Some((w, p)) => {
                                !w.contains('@') && !p.starts_with('@') && !p.ends_with('@')
                            }
                            None => !v.contains('@'),
                        } =>
                {
                    Ok(Some(v.to_string()))
                }
                Some(v) => Err(format!(
                    "bad alias class `{v}` (letters, digits, `_` and `.`, one `:` between a \
                     wide class and a path, and in the path at most one `@` before where an \
                     enum lies)"
                )),
            }
        };
        let size8 = |n: u32| -> R<u8> {
            if matches!(n, 1 | 2 | 4 | 8) {
                Ok(n as u8)
            } else {
                Err(format!("size {n} is not 1, 2, 4 or 8"))
            }
        };
        Ok(match kind.trim() {
            "field" => DescrKind::Field(FieldDescr {
                offset: num("offset")?,
                size: size8(num("size")?)?,
                signed: has("signed"),
                kind: ty("kind")?,
                immutable: has("immutable"),
                quasi_immutable: has("quasi_immutable"),
                vable: has("vable"),
                length: has("length"),
                alias: alias()?,
            }),
            "array" => DescrKind::Array(ArrayDescr {
                base: num("base")?,
                item_size: size8(num("item")?)?,
                signed: has("signed"),
                kind: ty("kind")?,
                vable: has("vable"),
                alias: alias()?,
            }),
            "size" => DescrKind::Size(SizeDescr {
                size: num("size")?,
                align: num("align")?,
            }),
            "target" => DescrKind::Target(rest.trim().parse().map_err(|_| "bad target number")?),
            "call" => {
                let args = kv.get("args").ok_or("missing `args=`")?;
                let args = if *args == "-" {
                    vec![]
                } else {
                    args.chars()
                        .map(|ch| Type::from_letter(ch).ok_or(format!("bad argument kind `{ch}`")))
                        .collect::<R<Vec<_>>>()?
                };
                let access = |k: &str| -> R<Access> {
                    match kv.get(k).copied() {
                        None | Some("*") => Ok(Access::Everything),
                        Some("none") => Ok(Access::Nothing),
                        Some(v) => {
                            let v = v.trim_start_matches('[').trim_end_matches(']');
                            let ds = v
                                .split_whitespace()
                                .map(|n| self.descr_ref(n))
                                .collect::<R<Vec<_>>>()?;
                            Ok(Access::Descrs(ds))
                        }
                    }
                };
                DescrKind::Call(CallDescr {
                    args,
                    ret: ty("ret")?,
                    effects: Effects {
                        elidable: has("elidable"),
                        reads: access("reads")?,
                        writes: access("writes")?,
                        can_invalidate: has("can_invalidate"),
                        loop_invariant: has("loop_invariant"),
                    },
                })
            }
            k => return Err(format!("unknown descriptor kind `{k}`")),
        })
    }
}

/// Splits on commas outside brackets.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in s.char_indices() {
        match ch {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(&s[start..]);
    }
    out
}

fn name_type(name: &str) -> R<Type> {
    match name.chars().next().and_then(Type::from_letter) {
        Some(t) if t != Type::Void => Ok(t),
        _ => Err(format!("`{name}`: a value's name starts with i, f or p")),
    }
}

fn vindex(w: &str) -> R<usize> {
    w.strip_prefix('v')
        .and_then(|n| n.parse().ok())
        .ok_or(format!("bad virtual name `{w}`"))
}

fn parse_int(w: &str) -> R<i64> {
    let (neg, digits) = match w.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, w.strip_prefix('+').unwrap_or(w)),
    };
    let v = if let Some(h) = digits.strip_prefix("0x") {
        u64::from_str_radix(h, 16).map(|v| v as i64)
    } else {
        digits.parse::<u64>().map(|v| v as i64)
    }
    .map_err(|_| format!("bad integer `{w}`"))?;
    if !neg {
        if !digits.starts_with("0x") && v < 0 {
            return Err(format!("integer `{w}` is out of range"));
        }
        Ok(v)
    } else if v == i64::MIN || v >= 0 {
        Ok(v.wrapping_neg())
    } else {
        Err(format!("integer `{w}` is out of range"))
    }
}
