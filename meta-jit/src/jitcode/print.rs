//! The text form of jitcode, for tests, debugging and the JIT log.
//!
//! Owns: printing. One op per line, `pc: op operands`, registers as `%i3`/`%f0`/`%r2`, constants
//! inline as `$5`/`$1.5`/`$0x1000`, and the guard points' live sets in brackets.
//! Must not know: how jitcode is built or run.
#![deny(unsafe_code)]

use std::fmt;

use super::format::{JitCode, Op, Register, Value};

impl JitCode {
    fn reg(&self, r: Register) -> String {
        match self.const_value(r) {
            Some(Value::Int(v)) => format!("${v}"),
            Some(Value::Float(v)) => format!("${v:?}"),
            Some(Value::Ref(v)) => format!("$0x{v:x}"),
            None => format!("%{}{}", r.kind.letter(), r.index),
        }
    }
    fn regs(&self, rs: &[Register]) -> String {
        rs.iter()
            .map(|&r| self.reg(r))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for JitCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "jitcode {}({})", self.name, self.regs(&self.args))?;
        for (pc, op) in self.ops.iter().enumerate() {
            let r = |x: &Register| self.reg(*x);
            let text = match op {
                Op::Move { dst, src } => format!("{} = move {}", r(dst), r(src)),
                Op::IntBinary {
                    op,
                    ty,
                    overflow,
                    dst,
                    a,
                    b,
                } => {
                    format!(
                        "{} = int_{op:?}.{}.{overflow:?} {}, {}",
                        r(dst),
                        ty.name(),
                        r(a),
                        r(b)
                    )
                }
                Op::IntUnary {
                    op,
                    ty,
                    overflow,
                    dst,
                    a,
                } => {
                    format!(
                        "{} = int_{op:?}.{}.{overflow:?} {}",
                        r(dst),
                        ty.name(),
                        r(a)
                    )
                }
                Op::IntCompare {
                    cmp,
                    signed,
                    dst,
                    a,
                    b,
                } => {
                    let u = if *signed { "int" } else { "uint" };
                    format!("{} = {u}_{cmp:?} {}, {}", r(dst), r(a), r(b))
                }
                Op::IntCast { from, to, dst, src } => format!(
                    "{} = int_cast.{}.{} {}",
                    r(dst),
                    from.name(),
                    to.name(),
                    r(src)
                ),
                Op::FloatBinary { op, dst, a, b } => {
                    format!("{} = float_{op:?} {}, {}", r(dst), r(a), r(b))
                }
                Op::FloatUnary { op, dst, a } => format!("{} = float_{op:?} {}", r(dst), r(a)),
                Op::FloatCompare { cmp, dst, a, b } => {
                    format!("{} = float_{cmp:?} {}, {}", r(dst), r(a), r(b))
                }
                Op::IntToFloat { from, dst, src } => {
                    format!("{} = cast_int_to_float.{} {}", r(dst), from.name(), r(src))
                }
                Op::FloatToInt { to, dst, src } => {
                    format!("{} = cast_float_to_int.{} {}", r(dst), to.name(), r(src))
                }
                Op::RefCompare { eq, dst, a, b } => {
                    format!(
                        "{} = {} {}, {}",
                        r(dst),
                        if *eq { "ptr_eq" } else { "ptr_ne" },
                        r(a),
                        r(b)
                    )
                }
                Op::RefAddr {
                    dst,
                    base,
                    index,
                    offset,
                } => match index {
                    Some((i, size)) => format!(
                        "{} = ref_addr {} + {}*{size} + {offset}",
                        r(dst),
                        r(base),
                        r(i)
                    ),
                    None => format!("{} = ref_addr {} + {offset}", r(dst), r(base)),
                },
                Op::New { dst, descr } => format!(
                    "{} = new <{} size {} align {}>",
                    r(dst),
                    descr.name,
                    descr.size,
                    descr.align
                ),
                Op::GetField { dst, base, descr } => format!(
                    "{} = getfield {}, <{} @{}>",
                    r(dst),
                    r(base),
                    descr.name,
                    descr.offset
                ),
                Op::SetField { base, src, descr } => format!(
                    "setfield {}, {}, <{} @{}>",
                    r(base),
                    r(src),
                    descr.name,
                    descr.offset
                ),
                Op::GetArrayItem {
                    dst,
                    base,
                    index,
                    descr,
                } => format!(
                    "{} = getarrayitem {}, {}, <{} *{} @{}>",
                    r(dst),
                    r(base),
                    r(index),
                    descr.item.name,
                    descr.item_size,
                    descr.item.offset
                ),
                Op::SetArrayItem {
                    base,
                    index,
                    src,
                    descr,
                } => format!(
                    "setarrayitem {}, {}, {}, <{} *{} @{}>",
                    r(base),
                    r(index),
                    r(src),
                    descr.item.name,
                    descr.item_size,
                    descr.item.offset
                ),
                Op::CheckIndex { index, len } => format!("check_index {}, {}", r(index), r(len)),
                Op::Goto { target } => format!("goto {target}"),
                Op::GotoIfNot { cond, target } => format!("goto_if_not {}, {target}", r(cond)),
                Op::Switch {
                    value,
                    cases,
                    default,
                } => {
                    let cs: Vec<String> = cases.iter().map(|(v, t)| format!("{v}: {t}")).collect();
                    format!(
                        "switch {}, {{{}}}, default {default}",
                        r(value),
                        cs.join(", ")
                    )
                }
                Op::Call { descr, args, dst } => {
                    let d = dst.map(|d| format!("{} = ", r(&d))).unwrap_or_default();
                    format!(
                        "{d}call.{:?} {}({})",
                        descr.effect,
                        descr.name,
                        self.regs(args)
                    )
                }
                Op::InlineCall { callee, args, dsts } => {
                    format!(
                        "[{}] = inline_call {}({})",
                        self.regs(dsts),
                        callee.name,
                        self.regs(args)
                    )
                }
                Op::Return { values } => format!("return {}", self.regs(values)),
                Op::Panic { message } => format!("panic {message:?}"),
                Op::JitMergePoint { greens, reds } => {
                    format!(
                        "jit_merge_point greens[{}] reds[{}]",
                        self.regs(greens),
                        self.regs(reds)
                    )
                }
                Op::CanEnterJit { greens, reds } => {
                    format!(
                        "can_enter_jit greens[{}] reds[{}]",
                        self.regs(greens),
                        self.regs(reds)
                    )
                }
                Op::Promote { reg } => format!("promote {}", r(reg)),
                Op::RecordKnownResult {
                    result,
                    descr,
                    args,
                    ..
                } => {
                    format!(
                        "record_known_result {}, {}({})",
                        r(result),
                        descr.name,
                        self.regs(args)
                    )
                }
                Op::RecordExactValue { reg, value, .. } => {
                    format!("record_exact_value {}, {}", r(reg), r(value))
                }
            };
            write!(f, "{pc:4}: {text}")?;
            if let Some(live) = self.live_at(pc) {
                let l: Vec<String> = live.iter().map(|x| self.reg(x)).collect();
                write!(f, "  [{}]", l.join(", "))?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
