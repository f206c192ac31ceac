//! Names of values for error messages (`(local 'x')`, `(global 'f')`, `(field 'y')`), found
//! from the bytecode as PUC Lua does, error positions and tracebacks.

use super::Vm;
use crate::proto::{Op, Proto, RK_CONST};
use crate::value::Value;

/// What an operand of the failing instruction was, for `varinfo`.
#[derive(Clone, Copy, Debug)]
pub enum Desc {
    /// Nothing known.
    None,
    /// A register or RK constant of the running function.
    Rk(u16),
    /// An upvalue of the running function.
    Up(u16),
}

fn kstr(p: &Proto, k: usize) -> String {
    match p.consts.get(k) {
        Some(Value::Str(s)) => String::from_utf8_lossy(&s.bytes).into_owned(),
        _ => "?".into(),
    }
}

/// The kind and name of register `reg` at instruction `pc`, as PUC Lua's `getobjname`.
pub fn reg_name(p: &Proto, pc: usize, reg: u16) -> Option<(&'static str, String)> {
    if let Some(l) = p
        .locvars
        .iter()
        .rev()
        .find(|l| l.reg == reg && (l.start as usize) <= pc && pc < l.end as usize)
    {
        if !l.name.starts_with('(') {
            return Some(("local", l.name.clone()));
        }
        return None;
    }
    // The last instruction before pc that set reg.
    let mut setter = None;
    let mut jmp_target = 0usize;
    for (i, op) in p.code[..pc.min(p.code.len())].iter().enumerate() {
        let sets = match *op {
            Op::Mov(a, _)
            | Op::LoadK(a, _)
            | Op::LoadInt(a, _)
            | Op::LoadBool(a, _)
            | Op::LoadFalseSkip(a)
            | Op::GetUpval(a, _)
            | Op::GetTabUp(a, _, _)
            | Op::GetTable(a, _, _)
            | Op::GetStr(a, _, _)
            | Op::NewTable(a, _, _)
            | Op::Add(a, _, _)
            | Op::Sub(a, _, _)
            | Op::Mul(a, _, _)
            | Op::Div(a, _, _)
            | Op::Mod(a, _, _)
            | Op::Pow(a, _, _)
            | Op::IDiv(a, _, _)
            | Op::BAnd(a, _, _)
            | Op::BOr(a, _, _)
            | Op::BXor(a, _, _)
            | Op::Shl(a, _, _)
            | Op::Shr(a, _, _)
            | Op::Unm(a, _)
            | Op::Not(a, _)
            | Op::Len(a, _)
            | Op::BNot(a, _)
            | Op::Concat(a, _)
            | Op::MkClosure(a, _) => a == reg,
            Op::LoadNil(a, n) => reg >= a && reg < a + n,
            Op::SelfOp(a, _, _) => reg == a || reg == a + 1,
            Op::CallV(a, _, _) | Op::TailCall(a, _) | Op::Vararg(a, _) => reg >= a,
            Op::TForCall(a, _) => reg >= a,
            Op::Jmp(_, off) => {
                let t = (i as i64 + 1 + off as i64) as usize;
                if t <= pc && t > jmp_target {
                    jmp_target = t;
                }
                false
            }
            _ => false,
        };
        if sets {
            setter = Some(if i < jmp_target { None } else { Some(i) });
        }
    }
    let i = setter??;
    match p.code[i] {
        Op::Mov(_, b) if b < reg => reg_name(p, i, b),
        Op::GetTabUp(_, up, k) => {
            let is_env = p
                .upvals
                .get(up as usize)
                .map(|u| u.name == "_ENV")
                .unwrap_or(false);
            Some((if is_env { "global" } else { "field" }, kstr(p, k as usize)))
        }
        Op::GetStr(_, t, k) => {
            let is_env = matches!(reg_name(p, i, t), Some((_, ref n)) if n == "_ENV");
            Some((if is_env { "global" } else { "field" }, kstr(p, k as usize)))
        }
        Op::GetTable(_, _, k) if k >= RK_CONST => {
            let k = (k - RK_CONST) as usize;
            match p.consts.get(k) {
                Some(Value::Str(_)) => Some(("field", kstr(p, k))),
                _ => None,
            }
        }
        Op::GetUpval(_, u) => p
            .upvals
            .get(u as usize)
            .map(|u| ("upvalue", u.name.clone())),
        Op::LoadK(_, k) => match p.consts.get(k as usize) {
            Some(Value::Str(_)) => Some(("constant", kstr(p, k as usize))),
            _ => None,
        },
        Op::SelfOp(a, _, k) if reg == a => Some(("method", kstr(p, k as usize))),
        _ => None,
    }
}

impl Vm {
    /// ` (local 'x')` for an operand of the running instruction, or "".
    pub fn varinfo(&self, d: Desc) -> String {
        let Some(f) = self.frames.last() else {
            return String::new();
        };
        let p = &f.cl.proto;
        let pc = f.pc.saturating_sub(1);
        let named = match d {
            Desc::None => None,
            Desc::Up(u) => p
                .upvals
                .get(u as usize)
                .map(|u| ("upvalue", u.name.clone())),
            Desc::Rk(r) if r >= RK_CONST => match p.consts.get((r - RK_CONST) as usize) {
                Some(Value::Str(_)) => Some(("constant", kstr(p, (r - RK_CONST) as usize))),
                _ => None,
            },
            Desc::Rk(r) => reg_name(p, pc, r),
        };
        match named {
            Some((kind, name)) => format!(" ({kind} '{name}')"),
            None => String::new(),
        }
    }

    /// `chunk:line: ` of the Lua function `level` levels up (1: the running one), or "".
    pub fn where_(&self, level: usize) -> String {
        let n = self.frames.len();
        if level == 0 || level > n {
            return String::new();
        }
        // A frame entered from native code has a native caller we do not keep a frame for.
        for i in 0..level - 1 {
            if self.frames[n - 1 - i].from_native {
                return String::new();
            }
        }
        let f = &self.frames[n - level];
        let p = &f.cl.proto;
        let pc = f.pc.saturating_sub(1);
        let line = p.lines.get(pc).copied().unwrap_or(0);
        format!("{}:{}: ", p.source, line)
    }

    fn frame_desc(&self, i: usize) -> String {
        let f = &self.frames[i];
        if f.cl.proto.line == 0 {
            return "in main chunk".into();
        }
        if i > 0 && !f.boundary {
            let c = &self.frames[i - 1];
            let pc = c.pc.saturating_sub(1);
            if let Some(Op::CallV(a, _, _) | Op::TailCall(a, _)) = c.cl.proto.code.get(pc) {
                if let Some((kind, name)) = reg_name(c.cl.proto, pc, *a) {
                    return match kind {
                        "global" => format!("in function '{name}'"),
                        "method" => format!("in method '{name}'"),
                        "field" => format!("in field '{name}'"),
                        _ => format!("in {kind} '{name}'"),
                    };
                }
            }
        }
        format!("in function <{}:{}>", f.cl.proto.source, f.cl.proto.line)
    }

    /// A traceback of the guest frames, as PUC Lua prints it.
    pub fn traceback(&self) -> String {
        let mut s = String::from("stack traceback:");
        if let (Some(n), true) = &self.cur_native {
            s.push_str(&format!("\n\t[C]: in function '{}'", n.name));
        }
        let n = self.frames.len();
        for (k, i) in (0..n).rev().enumerate() {
            if n > 22 && k == 10 {
                s.push_str(&format!("\n\t...\t(skipping {} levels)", n - 21));
            }
            if n > 22 && k >= 10 && k < n - 11 {
                continue;
            }
            let f = &self.frames[i];
            let pc = f.pc.saturating_sub(1);
            let line = f.cl.proto.lines.get(pc).copied().unwrap_or(0);
            s.push_str(&format!(
                "\n\t{}:{}: {}",
                f.cl.proto.source,
                line,
                self.frame_desc(i)
            ));
            if f.boundary && i > 0 {
                s.push_str("\n\t[C]: in ?");
            }
        }
        s.push_str("\n\t[C]: in ?");
        s
    }
}
