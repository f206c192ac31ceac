//! The compiler: syntax tree to register bytecode, one [`Proto`] per function.
//!
//! Locals live in registers in declaration order; temporaries are allocated above them and
//! freed in stack order. Names resolve to a local, an upvalue (captured through the enclosing
//! functions) or a field of `_ENV`. This module owns function state, scopes and name
//! resolution; `expr.rs` and `stmt.rs` emit code. It knows nothing about how the VM runs.

mod expr;
mod stmt;

use crate::ast::FuncBody;
use crate::proto::{LocVar, Op, Proto, UpvalDesc, NO_CLOSE, RK_CONST};
use crate::value::{LStr, Value};
use hashbrown::HashMap;
use std::rc::Rc;

/// Registers a function may use (as PUC Lua's limit).
const MAX_REGS: u16 = 250;

#[derive(Hash, PartialEq, Eq)]
enum ConstKey {
    Boolean(bool),
    Int(i64),
    Num(u64),
    Str(Vec<u8>),
}

struct Local {
    name: String,
    reg: u16,
    is_const: bool,
    locvar: usize,
    /// A closure captures it: leaving its scope must close the upvalue.
    captured: bool,
}

struct Block {
    nactive: usize,
    is_loop: bool,
    breaks: Vec<usize>,
    first_label: usize,
    first_goto: usize,
    /// A local of this block or of a block nested in it was captured by a closure.
    any_captured: bool,
}

struct Label {
    name: String,
    pc: usize,
    nactive: usize,
    line: u32,
}

struct Goto {
    name: String,
    pc: usize,
    line: u32,
    nactive: usize,
}

struct FuncState {
    proto: Proto,
    consts: HashMap<ConstKey, u32>,
    actives: Vec<Local>,
    blocks: Vec<Block>,
    freereg: u16,
    labels: Vec<Label>,
    gotos: Vec<Goto>,
    bad_break: Option<u32>,
}

/// The compiler over a stack of functions being compiled.
pub struct Compiler {
    funcs: Vec<FuncState>,
    chunk: Rc<str>,
    line: u32,
}

type CResult<T> = Result<T, String>;

/// Compiles a parsed chunk.
pub fn compile_chunk(body: &FuncBody, chunk: &str) -> CResult<&'static Proto> {
    let mut c = Compiler {
        funcs: vec![],
        chunk: chunk.into(),
        line: 0,
    };
    let p = c.function(body, true)?;
    Ok(Box::leak(Box::new(p)))
}

impl Compiler {
    fn fs(&mut self) -> &mut FuncState {
        self.funcs.last_mut().unwrap()
    }

    fn err(&self, msg: &str) -> String {
        format!("{}:{}: {}", self.chunk, self.line, msg)
    }

    fn function(&mut self, f: &FuncBody, main: bool) -> CResult<Proto> {
        let mut proto = Proto {
            source: self.chunk.clone(),
            line: f.line,
            is_vararg: f.vararg,
            nparams: f.params.len() as u16,
            ..Default::default()
        };
        if main {
            proto.upvals.push(UpvalDesc {
                name: "_ENV".into(),
                in_stack: true,
                idx: 0,
            });
        }
        self.funcs.push(FuncState {
            proto,
            consts: HashMap::new(),
            actives: vec![],
            blocks: vec![],
            freereg: 0,
            labels: vec![],
            gotos: vec![],
            bad_break: None,
        });
        self.open_block(false);
        for p in &f.params {
            self.add_local(p.clone(), false)?;
        }
        self.block_body(&f.body)?;
        self.line = f.end_line;
        self.close_block()?;
        self.emit(Op::Ret(0, 1));
        let fs = self.funcs.pop().unwrap();
        if let Some(l) = fs.bad_break {
            return Err(self.err(&format!("break outside loop at line {l}")));
        }
        if let Some(g) = fs.gotos.first() {
            return Err(self.err(&format!(
                "no visible label '{}' for <goto> at line {}",
                g.name, g.line
            )));
        }
        let mut proto = fs.proto;
        // Every register an instruction names fits in the frame (the dispatch loop's
        // unchecked register access relies on it).
        let need = proto.code.iter().map(Op::reg_end).max().unwrap_or(0);
        proto.maxstack = proto.maxstack.max(u16::try_from(need).unwrap_or(u16::MAX));
        check_targets(&proto.code);
        proto.hot = crate::jit::hot_loops(&proto.code);
        proto.loops = proto.code.iter().any(|op| {
            matches!(op, Op::Jmp(_, off) | Op::ForStep(_, off) | Op::TForLoop(_, off) if *off < 0)
        });
        proto.ic = vec![Default::default(); proto.code.len()];
        if std::env::var_os("LUA_DUMP").is_some() {
            for (i, op) in proto.code.iter().enumerate() {
                eprintln!(
                    "{} {i:4} {op:?}",
                    if proto.hot.get(i) == Some(&true) {
                        '*'
                    } else {
                        ' '
                    }
                );
            }
            eprintln!("--");
        }
        Ok(proto)
    }

    fn pc(&mut self) -> usize {
        self.fs().proto.code.len()
    }

    fn emit(&mut self, op: Op) -> usize {
        let line = self.line;
        let fs = self.fs();
        fs.proto.code.push(op);
        fs.proto.lines.push(line);
        fs.proto.code.len() - 1
    }

    fn emit_jmp(&mut self) -> usize {
        self.emit(Op::Jmp(NO_CLOSE, 0))
    }

    fn patch(&mut self, at: usize, target: usize) {
        let fs = self.fs();
        if let Op::Jmp(c, _) = fs.proto.code[at] {
            fs.proto.code[at] = Op::Jmp(c, target as i32 - at as i32 - 1);
        }
    }

    fn patch_here(&mut self, jumps: Vec<usize>) {
        let here = self.pc();
        for j in jumps {
            self.patch(j, here);
        }
    }

    fn reserve(&mut self, n: u16) -> CResult<u16> {
        let r = self.fs().freereg;
        let top = r as u32 + n as u32;
        if top > MAX_REGS as u32 {
            return Err(self.err("function or expression needs too many registers"));
        }
        let fs = self.fs();
        fs.freereg = top as u16;
        if fs.freereg > fs.proto.maxstack {
            fs.proto.maxstack = fs.freereg;
        }
        Ok(r)
    }

    fn nactive_regs(&mut self) -> u16 {
        self.fs().actives.len() as u16
    }

    fn add_local(&mut self, name: String, is_const: bool) -> CResult<()> {
        let reg = self.fs().actives.len() as u16;
        if reg >= 200 {
            return Err(self.err("too many local variables"));
        }
        let pc = self.pc() as u32;
        let fs = self.fs();
        fs.proto.locvars.push(LocVar {
            name: name.clone(),
            reg,
            start: pc,
            end: u32::MAX,
        });
        let locvar = fs.proto.locvars.len() - 1;
        fs.actives.push(Local {
            name,
            reg,
            is_const,
            locvar,
            captured: false,
        });
        if fs.freereg < reg + 1 {
            fs.freereg = reg + 1;
        }
        if fs.proto.maxstack < fs.freereg {
            fs.proto.maxstack = fs.freereg;
        }
        Ok(())
    }

    fn remove_locals(&mut self, to: usize) {
        let pc = self.pc() as u32;
        let fs = self.fs();
        while fs.actives.len() > to {
            let l = fs.actives.pop().unwrap();
            fs.proto.locvars[l.locvar].end = pc;
        }
        fs.freereg = fs.actives.len() as u16;
    }

    fn open_block(&mut self, is_loop: bool) {
        let fs = self.fs();
        fs.blocks.push(Block {
            nactive: fs.actives.len(),
            is_loop,
            breaks: vec![],
            first_label: fs.labels.len(),
            first_goto: fs.gotos.len(),
            any_captured: false,
        });
    }

    /// Ends a block: resolves its gotos, closes its locals' upvalues, patches breaks.
    fn close_block(&mut self) -> CResult<()> {
        let b = self.fs().blocks.pop().unwrap();
        // Pending gotos of this block that match a label of this block.
        let mut i = b.first_goto;
        while i < self.fs().gotos.len() {
            let gname = self.fs().gotos[i].name.clone();
            let found = self.fs().labels[b.first_label..]
                .iter()
                .find(|l| l.name == gname)
                .map(|l| (l.pc, l.nactive));
            if let Some((pc, nactive)) = found {
                let g = self.fs().gotos.remove(i);
                if nactive > g.nactive {
                    let name = self.fs().actives[g.nactive].name.clone();
                    return Err(self.err(&format!(
                        "<goto {}> at line {} jumps into the scope of local '{}'",
                        g.name, g.line, name
                    )));
                }
                self.set_jump(g.pc, pc, nactive);
            } else {
                // Leaving this block: the goto now starts from the block's level.
                let g = &mut self.fs().gotos[i];
                if g.nactive > b.nactive {
                    g.nactive = b.nactive;
                }
                i += 1;
            }
        }
        self.fs().labels.truncate(b.first_label);
        let captured = self.fs().actives[b.nactive..].iter().any(|l| l.captured);
        self.remove_locals(b.nactive);
        if captured && !self.fs().blocks.is_empty() {
            self.emit(Op::CloseUps(b.nactive as u16));
        }
        let any_captured = captured || b.any_captured;
        if let Some(parent) = self.fs().blocks.last_mut() {
            parent.any_captured |= any_captured;
        }
        if b.is_loop {
            let here = self.pc();
            for j in b.breaks {
                if any_captured {
                    self.set_jump(j, here, b.nactive);
                } else {
                    // No upvalue to close: a plain jump (which the JIT portal runs inline).
                    let fs = self.fs();
                    fs.proto.code[j] = Op::Jmp(NO_CLOSE, here as i32 - j as i32 - 1);
                }
            }
        }
        Ok(())
    }

    fn set_jump(&mut self, at: usize, target: usize, nactive: usize) {
        let fs = self.fs();
        fs.proto.code[at] = Op::Jmp(nactive as u16, target as i32 - at as i32 - 1);
    }

    fn find_local(fs: &FuncState, name: &str) -> Option<usize> {
        fs.actives.iter().rposition(|l| l.name == name)
    }

    /// Resolves `name` in function `level`: Some(Ok(reg)) local, Some(Err(up)) upvalue,
    /// None global.
    fn resolve(&mut self, level: usize, name: &str) -> Option<Result<u16, u16>> {
        let fs = &self.funcs[level];
        if let Some(i) = Self::find_local(fs, name) {
            return Some(Ok(fs.actives[i].reg));
        }
        if let Some(i) = fs.proto.upvals.iter().position(|u| u.name == name) {
            return Some(Err(i as u16));
        }
        if level == 0 {
            return None;
        }
        let (in_stack, idx) = match self.resolve(level - 1, name)? {
            Ok(reg) => {
                let outer = &mut self.funcs[level - 1];
                if let Some(i) = Self::find_local(outer, name) {
                    outer.actives[i].captured = true;
                }
                (true, reg)
            }
            Err(up) => (false, up),
        };
        let fs = &mut self.funcs[level];
        fs.proto.upvals.push(UpvalDesc {
            name: name.to_string(),
            in_stack,
            idx,
        });
        Some(Err((fs.proto.upvals.len() - 1) as u16))
    }

    fn is_const_local(&self, name: &str) -> bool {
        // Constness of a local, searching enclosing functions as resolution does.
        for fs in self.funcs.iter().rev() {
            if let Some(i) = Self::find_local(fs, name) {
                return fs.actives[i].is_const;
            }
            if fs.proto.upvals.iter().any(|u| u.name == name) {
                continue;
            }
        }
        false
    }

    fn add_const(&mut self, v: Value) -> CResult<u32> {
        let v = match v {
            Value::Str(s) => Value::Str(crate::value::intern(&s.bytes)),
            v => v,
        };
        let key = match &v {
            Value::Int(i) => ConstKey::Int(*i),
            Value::Num(f) => ConstKey::Num(f.to_bits()),
            Value::Str(s) => ConstKey::Str(s.bytes.to_vec()),
            Value::Boolean(b) => ConstKey::Boolean(*b),
            _ => unreachable!("only booleans, numbers and strings are constants"),
        };
        let fs = self.fs();
        if let Some(&k) = fs.consts.get(&key) {
            return Ok(k);
        }
        let k = fs.proto.consts.len() as u32;
        fs.proto.consts.push(v);
        fs.consts.insert(key, k);
        Ok(k)
    }

    fn str_const(&mut self, s: &[u8]) -> CResult<u32> {
        self.add_const(Value::Str(LStr::new(s)))
    }

    /// A constant as an RK operand, if its index fits.
    fn rk_const(&mut self, v: Value) -> CResult<Option<u16>> {
        let k = self.add_const(v)?;
        Ok(if k < (RK_CONST as u32 - 1) {
            Some(k as u16 + RK_CONST)
        } else {
            None
        })
    }

    /// A string constant index usable in a u16 field, if it fits.
    fn str_k16(&mut self, s: &[u8]) -> CResult<Option<u16>> {
        let k = self.str_const(s)?;
        Ok(if k <= u16::MAX as u32 {
            Some(k as u16)
        } else {
            None
        })
    }
}

/// Asserts what the dispatch loop's unchecked instruction fetch relies on: the code ends with
/// a `Ret`, and every jump, loop offset and skip lands on an instruction of the same code.
fn check_targets(code: &[Op]) {
    let n = code.len() as i64;
    assert!(
        matches!(code.last(), Some(Op::Ret(..))),
        "code ends with a Ret"
    );
    for (i, op) in code.iter().enumerate() {
        let next = i as i64 + 1;
        let target = match *op {
            Op::Jmp(_, off) | Op::ForPrep(_, off) | Op::ForStep(_, off) | Op::TForLoop(_, off) => {
                next + off as i64
            }
            Op::Eq(..) | Op::Lt(..) | Op::Le(..) | Op::TestJ(..) | Op::LoadFalseSkip(_) => next + 1,
            // Falls through: in the code, as the last instruction is a `Ret`.
            _ => continue,
        };
        assert!(
            (0..n).contains(&target),
            "instruction {i} ({op:?}) leaves the code"
        );
    }
}
