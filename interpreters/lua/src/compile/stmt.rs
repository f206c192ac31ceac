//! Statement code: assignments, control flow, loops, gotos and returns.

use super::expr::MULTI;
use super::{CResult, Compiler, Goto, Label};
use crate::ast::{Block, Expr, Stat};
use crate::proto::{Op, NO_CLOSE};

impl Compiler {
    pub(super) fn block_body(&mut self, b: &Block) -> CResult<()> {
        for (i, s) in b.iter().enumerate() {
            let at_end = b[i + 1..]
                .iter()
                .all(|s| matches!(s, Stat::Lbl(..) | Stat::End(_)));
            self.stat(s, at_end)?;
            let n = self.nactive_regs();
            self.fs().freereg = n;
        }
        Ok(())
    }

    fn scoped_block(&mut self, b: &Block, is_loop: bool) -> CResult<()> {
        self.open_block(is_loop);
        self.block_body(b)?;
        self.close_block()
    }

    fn stat(&mut self, s: &Stat, at_end: bool) -> CResult<()> {
        match s {
            Stat::Loc(names, exprs, line) => {
                self.line = *line;
                let base = self.fs().freereg;
                self.explist(exprs, names.len() as i32)?;
                self.fs().freereg = base;
                for (n, c) in names {
                    self.add_local(n.clone(), *c)?;
                }
            }
            Stat::LocalFunction(name, body, line) => {
                self.line = *line;
                self.add_local(name.clone(), false)?;
                let reg = self.nactive_regs() - 1;
                self.expr_to(&Expr::FuncDef(body.clone()), reg)?;
            }
            Stat::Set(targets, exprs, line) => {
                self.line = *line;
                self.assign(targets, exprs)?;
            }
            Stat::CallStat(e, line) => {
                self.line = *line;
                self.call(e, 0)?;
            }
            Stat::Do(b) => self.scoped_block(b, false)?,
            Stat::WhileDo(cond, body, line) => {
                self.line = *line;
                let start = self.pc();
                self.open_block(true);
                let exit = self.cond_jump(cond, false)?;
                self.scoped_block(body, false)?;
                let j = self.emit_jmp();
                self.patch(j, start);
                self.patch_here(exit);
                self.close_block()?;
            }
            Stat::RepeatUntil(body, cond, line) => {
                self.line = *line;
                let start = self.pc();
                self.open_block(true);
                self.open_block(false);
                self.block_body(body)?;
                // The condition sees the body's locals.
                let back = self.cond_jump(cond, false)?;
                let nact = self.fs().blocks.last().unwrap().nactive;
                for j in back {
                    self.set_jump(j, start, nact);
                }
                self.close_block()?;
                self.close_block()?;
            }
            Stat::If(arms, els, line) => {
                self.line = *line;
                let mut ends = vec![];
                for (i, (cond, body)) in arms.iter().enumerate() {
                    let next = self.cond_jump(cond, false)?;
                    self.scoped_block(body, false)?;
                    let last = i + 1 == arms.len() && els.is_none();
                    if !last {
                        ends.push(self.emit_jmp());
                    }
                    self.patch_here(next);
                }
                if let Some(b) = els {
                    self.scoped_block(b, false)?;
                }
                self.patch_here(ends);
            }
            Stat::NumFor(var, a, b, c, body, line) => {
                self.line = *line;
                self.open_block(true);
                let base = self.fs().freereg;
                self.explist(std::slice::from_ref(a), 1)?;
                self.explist(std::slice::from_ref(b), 1)?;
                match c {
                    Some(c) => {
                        self.explist(std::slice::from_ref(c), 1)?;
                    }
                    None => {
                        let r = self.reserve(1)?;
                        self.emit(Op::LoadInt(r, 1));
                    }
                }
                self.add_local("(for state)".into(), false)?;
                self.add_local("(for state)".into(), false)?;
                self.add_local("(for state)".into(), false)?;
                self.line = *line;
                let prep = self.emit(Op::ForPrep(base, 0));
                self.open_block(false);
                self.add_local(var.clone(), false)?;
                self.block_body(body)?;
                self.close_block()?;
                self.line = *line;
                let lp = self.emit(Op::ForStep(base, 0));
                let fs = self.fs();
                fs.proto.code[prep] = Op::ForPrep(base, (lp - prep) as i32);
                fs.proto.code[lp] = Op::ForStep(base, prep as i32 - lp as i32);
                self.close_block()?;
            }
            Stat::GenFor(names, exprs, body, line) => {
                self.line = *line;
                self.open_block(true);
                let base = self.fs().freereg;
                self.explist(exprs, 3)?;
                self.fs().freereg = base;
                for _ in 0..3 {
                    self.add_local("(for state)".into(), false)?;
                }
                let j = self.emit_jmp();
                let body_start = self.pc();
                self.open_block(false);
                for n in names {
                    self.add_local(n.clone(), false)?;
                }
                self.block_body(body)?;
                self.close_block()?;
                self.patch_here(vec![j]);
                self.line = *line;
                self.emit(Op::TForCall(base, names.len() as u16));
                let lp = self.pc();
                self.emit(Op::TForLoop(base, body_start as i32 - lp as i32 - 1));
                self.close_block()?;
            }
            Stat::Ret(exprs, line) => {
                self.line = *line;
                self.ret(exprs)?;
            }
            Stat::Brk(line) => {
                self.line = *line;
                let j = self.emit_jmp();
                let fs = self.fs();
                match fs.blocks.iter_mut().rev().find(|b| b.is_loop) {
                    Some(b) => b.breaks.push(j),
                    None => {
                        if fs.bad_break.is_none() {
                            fs.bad_break = Some(*line);
                        }
                    }
                }
            }
            Stat::GoTo(name, line) => {
                self.line = *line;
                let j = self.emit_jmp();
                let nactive = self.fs().actives.len();
                let found = self
                    .fs()
                    .labels
                    .iter()
                    .rev()
                    .find(|l| &l.name == name)
                    .map(|l| (l.pc, l.nactive));
                match found {
                    Some((pc, lact)) => {
                        let close = if nactive > lact {
                            lact as u16
                        } else {
                            NO_CLOSE
                        };
                        let fs = self.fs();
                        fs.proto.code[j] = Op::Jmp(close, pc as i32 - j as i32 - 1);
                    }
                    None => self.fs().gotos.push(Goto {
                        name: name.clone(),
                        pc: j,
                        line: *line,
                        nactive,
                    }),
                }
            }
            Stat::End(line) => self.line = *line,
            Stat::Lbl(name, line) => {
                self.line = *line;
                if let Some(l) = self.fs().labels.iter().find(|l| &l.name == name) {
                    let msg = format!("label '{}' already defined on line {}", name, l.line);
                    return Err(self.err(&msg));
                }
                let nactive = if at_end {
                    self.fs().blocks.last().unwrap().nactive
                } else {
                    self.fs().actives.len()
                };
                let first = self.fs().blocks.last().unwrap().first_goto;
                let fs = self.fs();
                if let Some(g) = fs.gotos[first..]
                    .iter()
                    .find(|g| &g.name == name && g.nactive < nactive)
                {
                    let msg = format!(
                        "<goto {}> at line {} jumps into the scope of local '{}'",
                        g.name, g.line, fs.actives[g.nactive].name
                    );
                    return Err(self.err(&msg));
                }
                let pc = self.pc();
                self.fs().labels.push(Label {
                    name: name.clone(),
                    pc,
                    nactive,
                    line: *line,
                });
            }
        }
        Ok(())
    }

    fn ret(&mut self, exprs: &[Expr]) -> CResult<()> {
        let base = self.fs().freereg;
        if exprs.len() == 1 {
            if let Expr::CallExpr(..) | Expr::Method(..) = &exprs[0] {
                // A tail call.
                self.call(&exprs[0], MULTI)?;
                let code = &mut self.fs().proto.code;
                if let Some(Op::CallV(a, b, _)) = code.last().copied() {
                    *code.last_mut().unwrap() = Op::TailCall(a, b);
                }
                self.emit(Op::Ret(base, 0));
                return Ok(());
            }
            if let Expr::Name(_) = &exprs[0] {
                let r = self.expr_any(&exprs[0])?;
                self.emit(Op::Ret(r, 2));
                return Ok(());
            }
        }
        let n = self.explist(exprs, MULTI)?;
        let b = if n == MULTI { 0 } else { n as u16 + 1 };
        self.emit(Op::Ret(base, b));
        Ok(())
    }

    fn assign(&mut self, targets: &[Expr], exprs: &[Expr]) -> CResult<()> {
        for t in targets {
            if let Expr::Name(n) = t {
                let level = self.funcs.len() - 1;
                let is_local = self.resolve(level, n).is_some();
                if is_local && self.is_const_local(n) {
                    return Err(self.err(&format!("attempt to assign to const variable '{}'", n)));
                }
            }
        }
        if targets.len() == 1 && exprs.len() == 1 {
            // Single assignment: straight into a local when safe.
            if let Expr::Name(n) = &targets[0] {
                let level = self.funcs.len() - 1;
                if let Some(Ok(reg)) = self.resolve(level, n) {
                    let direct = writes_late(&exprs[0]);
                    if direct {
                        self.expr_to(&exprs[0], reg)?;
                        return Ok(());
                    }
                }
            }
            let save = self.fs().freereg;
            let tgt = self.target(&targets[0])?;
            let v = match tgt {
                Target::Keyed(..) | Target::Global(..) => self.expr_rk_store(&exprs[0])?,
                _ => self.expr_rk(&exprs[0])?,
            };
            self.store(&tgt, v);
            self.fs().freereg = save;
            return Ok(());
        }
        // Evaluate the targets' table and key operands, then all values, then store right to
        // left (as PUC Lua does).
        let mut tgts = vec![];
        for t in targets {
            tgts.push(self.target(t)?);
        }
        // A literal stored into a table field or a global is stored from its constant: no
        // register load (a literal has no effect whose order could matter).
        let mut konst = vec![None; tgts.len()];
        for (i, t) in tgts.iter().enumerate() {
            if let (Target::Keyed(..) | Target::Global(..), Some(e)) = (t, exprs.get(i)) {
                konst[i] = self.literal_rk_store(e)?;
            }
        }
        let skip: Vec<bool> = konst.iter().map(Option::is_some).collect();
        let base = self.fs().freereg;
        self.explist_skip(exprs, targets.len() as i32, &skip)?;
        for (i, t) in tgts.iter().enumerate().rev() {
            self.store(t, konst[i].unwrap_or(base + i as u16));
        }
        Ok(())
    }

    fn target(&mut self, t: &Expr) -> CResult<Target> {
        match t {
            Expr::Name(n) => {
                let level = self.funcs.len() - 1;
                Ok(match self.resolve(level, n) {
                    Some(Ok(reg)) => Target::Reg(reg),
                    Some(Err(up)) => Target::Upval(up),
                    None => {
                        let k = self
                            .str_k16(n.as_bytes())?
                            .ok_or_else(|| self.err("too many constants"))?;
                        match self.resolve(level, "_ENV") {
                            Some(Err(up)) => Target::Global(up, k),
                            Some(Ok(reg)) => Target::Keyed(reg, k + crate::proto::RK_CONST),
                            None => unreachable!("_ENV always resolves"),
                        }
                    }
                })
            }
            Expr::Idx(obj, key, line) => {
                let o = self.expr_any(obj)?;
                let k = self.expr_rk(key)?;
                self.line = *line;
                Ok(Target::Keyed(o, k))
            }
            _ => Err(self.err("syntax error")),
        }
    }

    fn store(&mut self, t: &Target, v: u16) {
        match *t {
            Target::Reg(r) => {
                if v >= crate::proto::RK_CONST {
                    let k = (v - crate::proto::RK_CONST) as u32;
                    self.emit(Op::LoadK(r, k));
                } else if r != v {
                    self.emit(Op::Mov(r, v));
                }
            }
            Target::Upval(u) => {
                let v = self.rk_in_reg(v);
                self.emit(Op::SetUpval(v, u));
            }
            Target::Global(up, k) => {
                self.emit(Op::SetTabUp(up, k, v));
            }
            Target::Keyed(o, k) => {
                if k >= crate::proto::RK_CONST {
                    let kv = &self.fs().proto.consts[(k - crate::proto::RK_CONST) as usize];
                    if matches!(kv, crate::value::Value::Str(_)) {
                        self.emit(Op::SetStr(o, k - crate::proto::RK_CONST, v));
                        return;
                    }
                }
                self.emit(Op::SetTable(o, k, v));
            }
        }
    }

    fn rk_in_reg(&mut self, v: u16) -> u16 {
        if v < crate::proto::RK_CONST {
            return v;
        }
        let r = self.fs().freereg;
        let fs = self.fs();
        fs.freereg += 1;
        if fs.freereg > fs.proto.maxstack {
            fs.proto.maxstack = fs.freereg;
        }
        self.emit(Op::LoadK(r, (v - crate::proto::RK_CONST) as u32));
        r
    }
}

/// True if compiling `e` into a register writes that register only after reading every
/// operand (so `x = e` may target `x`'s register directly). `and`/`or` write their first
/// operand early and table constructors store the new table first.
fn writes_late(e: &Expr) -> bool {
    match e {
        Expr::Parens(x) => writes_late(x),
        Expr::Ctor(..) => false,
        Expr::Bin(crate::ast::BinOp::And | crate::ast::BinOp::Or, ..) => false,
        _ => true,
    }
}

enum Target {
    Reg(u16),
    Upval(u16),
    Global(u16, u16),
    Keyed(u16, u16),
}
