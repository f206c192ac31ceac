//! Expression code: into a given register, into any register, as an RK operand, as a
//! conditional jump, and calls with fixed or open result counts.

use super::{CResult, Compiler};
use crate::ast::{BinOp, Expr, Field, UnOp};
use crate::proto::{Op, FIELDS_PER_FLUSH};
use crate::value::Value;

/// A multi-valued expression's result count when it is open (`...`, `f()` last in a list).
pub const MULTI: i32 = -1;

impl Compiler {
    /// Compiles `e` so that its value ends up in register `dst`.
    pub(super) fn expr_to(&mut self, e: &Expr, dst: u16) -> CResult<()> {
        let save = self.fs().freereg;
        match e {
            Expr::CallExpr(..) | Expr::Method(..) if dst == save => {
                self.call(e, 1)?;
                self.fs().freereg = save;
                return Ok(());
            }
            Expr::Vararg if dst == save => {
                self.reserve(1)?;
                self.emit(Op::Vararg(dst, 2));
                self.fs().freereg = save;
                return Ok(());
            }
            _ => {}
        }
        if dst >= save {
            self.reserve(dst - save + 1)?;
        }
        self.expr_to_inner(e, dst)?;
        self.fs().freereg = save;
        Ok(())
    }

    fn expr_to_inner(&mut self, e: &Expr, dst: u16) -> CResult<()> {
        match e {
            Expr::Nil => {
                self.emit(Op::LoadNil(dst, 1));
            }
            Expr::True => {
                self.emit(Op::LoadBool(dst, true));
            }
            Expr::False => {
                self.emit(Op::LoadBool(dst, false));
            }
            Expr::Int(i) => {
                if let Ok(v) = i32::try_from(*i) {
                    self.emit(Op::LoadInt(dst, v));
                } else {
                    let k = self.add_const(Value::Int(*i))?;
                    self.emit(Op::LoadK(dst, k));
                }
            }
            Expr::Num(f) => {
                let k = self.add_const(Value::Num(*f))?;
                self.emit(Op::LoadK(dst, k));
            }
            Expr::Str(s) => {
                let k = self.str_const(s)?;
                self.emit(Op::LoadK(dst, k));
            }
            Expr::Vararg => {
                let save = self.fs().freereg;
                let base = self.reserve(1)?;
                self.emit(Op::Vararg(base, 2));
                self.emit(Op::Mov(dst, base));
                self.fs().freereg = save;
            }
            Expr::FuncDef(body) => {
                let p = self.function(body, false)?;
                let fs = self.fs();
                fs.proto.protos.push(Box::leak(Box::new(p)));
                let idx = fs.proto.protos.len() as u32 - 1;
                self.emit(Op::MkClosure(dst, idx));
            }
            Expr::Name(n) => {
                let level = self.funcs.len() - 1;
                match self.resolve(level, n) {
                    Some(Ok(reg)) => {
                        if reg != dst {
                            self.emit(Op::Mov(dst, reg));
                        }
                    }
                    Some(Err(up)) => {
                        self.emit(Op::GetUpval(dst, up));
                    }
                    None => self.global_get(n, dst)?,
                }
            }
            Expr::Idx(obj, key, line) => {
                let t = self.expr_any(obj)?;
                self.line = *line;
                if let Expr::Str(s) = &**key {
                    if let Some(k) = self.str_k16(s)? {
                        self.emit(Op::GetStr(dst, t, k));
                        return Ok(());
                    }
                }
                let k = self.expr_rk(key)?;
                self.line = *line;
                self.emit(Op::GetTable(dst, t, k));
            }
            Expr::CallExpr(..) | Expr::Method(..) => {
                let save = self.fs().freereg;
                let base = self.call(e, 1)?;
                self.emit(Op::Mov(dst, base));
                self.fs().freereg = save;
            }
            Expr::Parens(inner) => self.expr_to_inner(inner, dst)?,
            Expr::Ctor(fields, line) => self.table(fields, *line, dst)?,
            Expr::Un(op, x, line) => {
                if *op == UnOp::Not {
                    let r = self.expr_any(x)?;
                    self.emit(Op::Not(dst, r));
                    return Ok(());
                }
                let r = self.expr_any(x)?;
                self.line = *line;
                self.emit(match op {
                    UnOp::Neg => Op::Unm(dst, r),
                    UnOp::Len => Op::Len(dst, r),
                    UnOp::BNot => Op::BNot(dst, r),
                    UnOp::Not => unreachable!(),
                });
            }
            Expr::Bin(op, a, b, line) => self.binary(*op, a, b, *line, dst)?,
        }
        Ok(())
    }

    fn global_get(&mut self, name: &str, dst: u16) -> CResult<()> {
        let level = self.funcs.len() - 1;
        let k = self.str_k16(name.as_bytes())?;
        match (self.resolve(level, "_ENV"), k) {
            (Some(Err(up)), Some(k)) => {
                self.emit(Op::GetTabUp(dst, up, k));
            }
            (Some(Ok(reg)), Some(k)) => {
                self.emit(Op::GetStr(dst, reg, k));
            }
            _ => return Err(self.err("too many constants")),
        }
        Ok(())
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, line: u32, dst: u16) -> CResult<()> {
        match op {
            BinOp::And | BinOp::Or => {
                self.expr_to(a, dst)?;
                self.emit(Op::TestJ(dst, op == BinOp::Or));
                let j = self.emit_jmp();
                self.expr_to(b, dst)?;
                self.patch_here(vec![j]);
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let e = Expr::Bin(op, Box::new(a.clone()), Box::new(b.clone()), line);
                let jumps = self.cond_jump(&e, true)?;
                self.emit(Op::LoadFalseSkip(dst));
                self.patch_here(jumps);
                self.emit(Op::LoadBool(dst, true));
            }
            BinOp::Concat => {
                // Collect the right-associative chain into consecutive registers.
                let save = self.fs().freereg;
                let mut items = vec![a];
                let mut rest = b;
                while let Expr::Bin(BinOp::Concat, x, y, _) = rest {
                    items.push(x);
                    rest = y;
                }
                items.push(rest);
                let base = self.fs().freereg;
                for it in &items {
                    let r = self.reserve(1)?;
                    self.expr_to(it, r)?;
                }
                self.line = line;
                self.emit(Op::Concat(base, items.len() as u16));
                if dst != base {
                    self.emit(Op::Mov(dst, base));
                }
                self.fs().freereg = save;
            }
            _ => {
                let save = self.fs().freereg;
                let rb = self.expr_rk(a)?;
                let rc = self.expr_rk(b)?;
                self.line = line;
                self.emit(match op {
                    BinOp::Add => Op::Add(dst, rb, rc),
                    BinOp::Sub => Op::Sub(dst, rb, rc),
                    BinOp::Mul => Op::Mul(dst, rb, rc),
                    BinOp::Div => Op::Div(dst, rb, rc),
                    BinOp::Mod => Op::Mod(dst, rb, rc),
                    BinOp::Pow => Op::Pow(dst, rb, rc),
                    BinOp::IDiv => Op::IDiv(dst, rb, rc),
                    BinOp::BAnd => Op::BAnd(dst, rb, rc),
                    BinOp::BOr => Op::BOr(dst, rb, rc),
                    BinOp::BXor => Op::BXor(dst, rb, rc),
                    BinOp::Shl => Op::Shl(dst, rb, rc),
                    BinOp::Shr => Op::Shr(dst, rb, rc),
                    _ => unreachable!(),
                });
                self.fs().freereg = save;
            }
        }
        Ok(())
    }

    /// The register holding `e`: a local's own register, or a new temporary.
    pub(super) fn expr_any(&mut self, e: &Expr) -> CResult<u16> {
        if let Expr::Name(n) = e {
            let level = self.funcs.len() - 1;
            if let Some(Ok(reg)) = self.resolve(level, n) {
                return Ok(reg);
            }
        }
        if let Expr::CallExpr(..) | Expr::Method(..) = e {
            // A call at the first free register leaves its result there: that register is the
            // new temporary (no `Mov` out of the call's slot, no second register).
            return self.call(e, 1);
        }
        let r = self.reserve(1)?;
        self.expr_to(e, r)?;
        Ok(r)
    }

    /// `e` as an RK operand: a constant for number and string literals, else a register.
    pub(super) fn expr_rk(&mut self, e: &Expr) -> CResult<u16> {
        let v = match e {
            Expr::Int(i) => Some(Value::Int(*i)),
            Expr::Num(f) => Some(Value::Num(*f)),
            Expr::Str(s) => Some(Value::bytes(s)),
            _ => None,
        };
        if let Some(v) = v {
            if let Some(rk) = self.rk_const(v)? {
                return Ok(rk);
            }
        }
        self.expr_any(e)
    }

    /// `e` as the RK operand of a value to store (`SetTable`, `SetStr`, `SetTabUp`): as
    /// [`Compiler::expr_rk`], and `true` and `false` as constants too (no `LoadBool` before
    /// `t[i] = true`). Only stores take boolean constants: an arithmetic or comparison operand
    /// stays a register, so that the instructions that read numbers from `RK` never meet one.
    pub(super) fn expr_rk_store(&mut self, e: &Expr) -> CResult<u16> {
        match self.literal_rk_store(e)? {
            Some(rk) => Ok(rk),
            None => self.expr_rk(e),
        }
    }

    /// A literal boolean, number or string as the RK constant of a stored value, if it is one
    /// and its index fits.
    pub(super) fn literal_rk_store(&mut self, e: &Expr) -> CResult<Option<u16>> {
        let v = match e {
            Expr::True => Value::Boolean(true),
            Expr::False => Value::Boolean(false),
            Expr::Int(i) => Value::Int(*i),
            Expr::Num(f) => Value::Num(*f),
            Expr::Str(s) => Value::bytes(s),
            _ => return Ok(None),
        };
        self.rk_const(v)
    }

    /// Emits code that jumps when the truth of `e` is `jump_if` and falls through otherwise;
    /// returns the jumps to patch.
    pub(super) fn cond_jump(&mut self, e: &Expr, jump_if: bool) -> CResult<Vec<usize>> {
        let save = self.fs().freereg;
        let r = self.cond_jump_inner(e, jump_if);
        self.fs().freereg = save;
        r
    }

    fn cond_jump_inner(&mut self, e: &Expr, jump_if: bool) -> CResult<Vec<usize>> {
        match e {
            Expr::True | Expr::Int(_) | Expr::Num(_) | Expr::Str(_) => Ok(if jump_if {
                vec![self.emit_jmp()]
            } else {
                vec![]
            }),
            Expr::Nil | Expr::False => Ok(if jump_if {
                vec![]
            } else {
                vec![self.emit_jmp()]
            }),
            Expr::Un(UnOp::Not, x, _) => self.cond_jump(x, !jump_if),
            Expr::Parens(x) => self.cond_jump(x, jump_if),
            Expr::Bin(BinOp::And, a, b, _) | Expr::Bin(BinOp::Or, a, b, _) => {
                let is_and = matches!(e, Expr::Bin(BinOp::And, ..));
                if is_and != jump_if {
                    // and/false or or/true: either side decides.
                    let mut j = self.cond_jump(a, jump_if)?;
                    j.extend(self.cond_jump(b, jump_if)?);
                    Ok(j)
                } else {
                    let skip = self.cond_jump(a, !jump_if)?;
                    let j = self.cond_jump(b, jump_if)?;
                    self.patch_here(skip);
                    Ok(j)
                }
            }
            Expr::Bin(
                op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
                a,
                b,
                line,
            ) => {
                let ra = self.expr_rk(a)?;
                let rb = self.expr_rk(b)?;
                self.line = *line;
                let op = match op {
                    BinOp::Eq => Op::Eq(ra, rb, jump_if),
                    BinOp::Ne => Op::Eq(ra, rb, !jump_if),
                    BinOp::Lt => Op::Lt(ra, rb, jump_if),
                    BinOp::Le => Op::Le(ra, rb, jump_if),
                    BinOp::Gt => Op::Lt(rb, ra, jump_if),
                    _ => Op::Le(rb, ra, jump_if),
                };
                self.emit(op);
                Ok(vec![self.emit_jmp()])
            }
            _ => {
                let r = self.expr_any(e)?;
                self.emit(Op::TestJ(r, jump_if));
                Ok(vec![self.emit_jmp()])
            }
        }
    }

    /// Compiles a call at `freereg` with `nres` results (or [`MULTI`]); returns the base
    /// register where the results start. `freereg` ends just past the fixed results.
    pub(super) fn call(&mut self, e: &Expr, nres: i32) -> CResult<u16> {
        let base = self.fs().freereg;
        let (args, line) = match e {
            Expr::CallExpr(f, args, line) => {
                let r = self.reserve(1)?;
                self.expr_to(f, r)?;
                (args, *line)
            }
            Expr::Method(obj, name, args, line) => {
                let o = self.expr_any(obj)?;
                self.fs().freereg = base;
                self.reserve(2)?;
                self.line = *line;
                let k = self
                    .str_k16(name.as_bytes())?
                    .ok_or_else(|| self.err("too many constants"))?;
                self.emit(Op::SelfOp(base, o, k));
                (args, *line)
            }
            _ => unreachable!("call of a non-call"),
        };
        let nargs = self.explist(args, MULTI)?;
        self.line = line;
        let b = if nargs == MULTI {
            0
        } else {
            self.fs().freereg - base
        };
        self.emit(Op::CallV(base, b, (nres + 1) as u16));
        self.fs().freereg = base;
        if nres > 0 {
            self.reserve(nres as u16)?;
        }
        Ok(base)
    }

    /// Compiles a list of expressions into consecutive registers from `freereg`. With `want`
    /// = [`MULTI`] a multi-valued last expression stays open (returns MULTI in that case);
    /// otherwise exactly `want` values are produced (nil-padded, extra ones evaluated and
    /// dropped). Returns the number of values produced, or MULTI.
    pub(super) fn explist(&mut self, exprs: &[Expr], want: i32) -> CResult<i32> {
        self.explist_skip(exprs, want, &[])
    }

    /// [`Compiler::explist`], leaving the registers of the expressions `skip` marks reserved
    /// but unwritten (the caller stores those values from constants).
    pub(super) fn explist_skip(
        &mut self,
        exprs: &[Expr],
        want: i32,
        skip: &[bool],
    ) -> CResult<i32> {
        let base = self.fs().freereg;
        let n = exprs.len();
        for (i, e) in exprs.iter().enumerate() {
            let last = i + 1 == n;
            if last && e.is_multi() {
                let have = i as i32;
                let need = if want == MULTI {
                    MULTI
                } else {
                    (want - have).max(0)
                };
                if need == MULTI {
                    self.multi(e, MULTI)?;
                    return Ok(MULTI);
                }
                if need == 0 {
                    let r = self.reserve(1)?;
                    self.expr_to(e, r)?;
                    self.fs().freereg = r;
                } else {
                    self.multi(e, need)?;
                }
                break;
            }
            let r = self.reserve(1)?;
            if !skip.get(i).copied().unwrap_or(false) {
                self.expr_to(e, r)?;
            }
        }
        if want != MULTI {
            let have = (self.fs().freereg - base) as i32;
            if have < want {
                let r = self.reserve((want - have) as u16)?;
                self.emit(Op::LoadNil(r, (want - have) as u16));
            } else if have > want {
                self.fs().freereg = base + want as u16;
            }
            return Ok(want);
        }
        Ok((self.fs().freereg - base) as i32)
    }

    /// A call or `...` at `freereg` with `n` results or MULTI.
    fn multi(&mut self, e: &Expr, n: i32) -> CResult<()> {
        match e {
            Expr::Vararg => {
                let base = self.fs().freereg;
                self.emit(Op::Vararg(base, (n + 1) as u16));
                if n > 0 {
                    self.reserve(n as u16)?;
                }
            }
            _ => {
                self.call(e, n)?;
            }
        }
        Ok(())
    }

    fn table(&mut self, fields: &[Field], line: u32, dst: u16) -> CResult<()> {
        let save = self.fs().freereg;
        let npos = fields.iter().filter(|f| matches!(f, Field::Pos(_))).count();
        let nhash = fields.len() - npos;
        self.line = line;
        let t = self.reserve(1)?;
        self.emit(Op::NewTable(
            t,
            npos.min(u16::MAX as usize) as u16,
            nhash.min(u16::MAX as usize) as u16,
        ));
        let mut pending = 0u16;
        let mut block = 0u16;
        for (i, f) in fields.iter().enumerate() {
            match f {
                Field::Pos(e) => {
                    let last = i + 1 == fields.len();
                    if last && e.is_multi() {
                        self.multi(e, MULTI)?;
                        self.line = line;
                        self.emit(Op::SetList(t, 0, block));
                        pending = 0;
                        break;
                    }
                    let r = self.reserve(1)?;
                    self.expr_to(e, r)?;
                    pending += 1;
                    if pending == FIELDS_PER_FLUSH {
                        self.line = line;
                        self.emit(Op::SetList(t, pending, block));
                        block += 1;
                        pending = 0;
                        self.fs().freereg = t + 1;
                    }
                }
                Field::Keyed(k, v) => {
                    let inner = self.fs().freereg;
                    if let Expr::Str(s) = k {
                        if let Some(kk) = self.str_k16(s)? {
                            let rv = self.expr_rk_store(v)?;
                            self.emit(Op::SetStr(t, kk, rv));
                            self.fs().freereg = inner;
                            continue;
                        }
                    }
                    let rk = self.expr_rk(k)?;
                    let rv = self.expr_rk_store(v)?;
                    self.line = line;
                    self.emit(Op::SetTable(t, rk, rv));
                    self.fs().freereg = inner;
                }
            }
        }
        if pending > 0 {
            self.line = line;
            self.emit(Op::SetList(t, pending, block));
        }
        if dst != t {
            self.emit(Op::Mov(dst, t));
        }
        self.fs().freereg = save;
        Ok(())
    }
}
