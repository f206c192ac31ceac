//! Building jitcode: register allocation, the constant pool, labels, and `finish`.
//!
//! Owns: turning a stream of ops with symbolic labels into a [`JitCode`] (labels resolved to pcs,
//! liveness computed, the merge-point check run). The code the hint macros generate drives a
//! `Builder` through the typed layer in [`crate::lower`]; tests may drive it directly.
//! Must not know: Rust syntax, Rust types beyond register kinds, or how jitcode is executed.
#![deny(unsafe_code)]

use std::collections::HashMap;

use super::format::{HintSite, JitCode, Kind, Op, Register};
use super::{liveness, regalloc};

/// A jump target that may not have a pc yet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Label(pub u32);

/// Builds the jitcode of one function.
pub struct Builder {
    name: String,
    ops: Vec<Op>,
    num_regs: [u16; 3],
    consts_int: Vec<i64>,
    consts_float: Vec<f64>,
    consts_ref: Vec<usize>,
    const_index: HashMap<(Kind, u64), u16>,
    args: Vec<Register>,
    names: Vec<(Register, String)>,
    labels: Vec<Option<u32>>,
    /// Where the portal's `jit_merge_point!()` is written (for the merge-point rule's message).
    merge_point_site: Option<&'static HintSite>,
}

impl Builder {
    /// Starts the jitcode of the function `name`.
    pub fn new(name: &str) -> Builder {
        Builder {
            name: name.to_string(),
            ops: Vec::new(),
            num_regs: [0; 3],
            consts_int: Vec::new(),
            consts_float: Vec::new(),
            consts_ref: Vec::new(),
            const_index: HashMap::new(),
            args: Vec::new(),
            names: Vec::new(),
            labels: Vec::new(),
            merge_point_site: None,
        }
    }

    /// A new ordinary register of `kind`.
    pub fn fresh(&mut self, kind: Kind) -> Register {
        let n = &mut self.num_regs[kind.bank()];
        let index = *n;
        *n = n
            .checked_add(1)
            .expect("more than 65535 registers in one jitcode");
        Register { kind, index }
    }

    /// A new register that receives the next argument.
    pub fn arg(&mut self, kind: Kind) -> Register {
        let r = self.fresh(kind);
        self.args.push(r);
        r
    }

    /// Records the source name of a register (a `let` binding or parameter).
    pub fn set_name(&mut self, reg: Register, name: &str) {
        self.names.push((reg, name.to_string()));
    }

    fn constant(&mut self, kind: Kind, bits: u64) -> Register {
        if let Some(&i) = self.const_index.get(&(kind, bits)) {
            return Register { kind, index: i };
        }
        let i = match kind {
            Kind::Int => {
                self.consts_int.push(bits as i64);
                self.consts_int.len() - 1
            }
            Kind::Float => {
                self.consts_float.push(f64::from_bits(bits));
                self.consts_float.len() - 1
            }
            Kind::Ref => {
                self.consts_ref.push(bits as usize);
                self.consts_ref.len() - 1
            }
        };
        // Constant registers are numbered after the ordinary ones at `finish`; until then they
        // are kept as pool indices tagged by the high half of the index space.
        let index = u16::try_from(i)
            .ok()
            .and_then(|i| i.checked_add(CONST_BASE))
            .expect("constant pool overflow");
        self.const_index.insert((kind, bits), index);
        Register { kind, index }
    }

    /// A constant int register.
    pub fn const_int(&mut self, v: i64) -> Register {
        self.constant(Kind::Int, v as u64)
    }
    /// A constant float register.
    pub fn const_float(&mut self, v: f64) -> Register {
        self.constant(Kind::Float, v.to_bits())
    }
    /// A constant ref register.
    pub fn const_ref(&mut self, v: usize) -> Register {
        self.constant(Kind::Ref, v as u64)
    }

    /// The value of `reg` if it is a constant int register of this builder (what
    /// [`Builder::const_int`] returned), `None` for an ordinary register.
    pub fn const_int_value(&self, reg: Register) -> Option<i64> {
        if reg.kind != Kind::Int || reg.index < CONST_BASE {
            return None;
        }
        self.consts_int
            .get(usize::from(reg.index - CONST_BASE))
            .copied()
    }

    /// A new, not yet placed label.
    pub fn new_label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() as u32 - 1)
    }
    /// Places `label` at the next op.
    pub fn bind(&mut self, label: Label) {
        assert!(self.labels[label.0 as usize].is_none(), "label bound twice");
        self.labels[label.0 as usize] = Some(self.ops.len() as u32);
    }

    /// Appends an op. Jump targets in it are label numbers (`Label.0`), resolved at `finish`.
    pub fn emit(&mut self, op: Op) {
        self.ops.push(op);
    }
    /// `goto label`.
    pub fn goto(&mut self, label: Label) {
        self.emit(Op::Goto { target: label.0 });
    }
    /// `if !cond goto label`.
    pub fn goto_if_not(&mut self, cond: Register, label: Label) {
        self.emit(Op::GotoIfNot {
            cond,
            target: label.0,
        });
    }
    /// `switch value { cases..., _ => default }`.
    pub fn switch(&mut self, value: Register, cases: Vec<(i64, Label)>, default: Label) {
        let cases = cases.into_iter().map(|(v, l)| (v, l.0)).collect();
        self.emit(Op::Switch {
            value,
            cases,
            default: default.0,
        });
    }

    /// Finishes the jitcode: numbers constants after the ordinary registers, resolves labels,
    /// checks every merge point, gives registers never live at once one number
    /// (`regalloc`) and computes liveness.
    ///
    /// # Panics
    /// If a variable live at `jit_merge_point!` is neither green nor red (the message names it),
    /// or a label was used but never bound (a codewriter bug).
    pub fn finish(self) -> JitCode {
        let Builder {
            name,
            mut ops,
            num_regs,
            consts_int,
            consts_float,
            consts_ref,
            args,
            names,
            labels,
            merge_point_site,
            ..
        } = self;
        let resolve = |l: &mut u32| {
            *l = labels
                .get(*l as usize)
                .copied()
                .flatten()
                .unwrap_or_else(|| panic!("jitcode `{name}`: label {l} used but never bound"));
        };
        let fix = |r: &mut Register| {
            if r.index >= CONST_BASE {
                r.index = r.index - CONST_BASE + num_regs[r.kind.bank()];
            }
        };
        for op in &mut ops {
            match op {
                Op::Goto { target } | Op::GotoIfNot { target, .. } => resolve(target),
                Op::Switch { cases, default, .. } => {
                    for (_, t) in cases.iter_mut() {
                        resolve(t);
                    }
                    resolve(default);
                }
                _ => {}
            }
            for_each_register(op, fix);
        }
        let mut names = names;
        for (r, _) in &mut names {
            fix(r);
        }
        // Control that falls off the end (only possible after a diverging tail) panics.
        ops.push(Op::Panic {
            message: format!("jitcode `{name}`: control reached the end of the function"),
        });
        // The merge-point rule names variables: checked on the codewriter's registers, one per
        // value, before registers that are never live at once share a number.
        let mut code = JitCode {
            name,
            ops,
            num_regs,
            consts_int,
            consts_float,
            consts_ref,
            args,
            names,
            liveness: Vec::new(),
        };
        let live = liveness::live_bits(&code.ops, code.num_regs);
        check_merge_points(&code, &live, merge_point_site);
        regalloc::allocate(
            &mut code.ops,
            &mut code.num_regs,
            &mut code.args,
            &mut code.names,
            &live,
        );
        liveness::compute(&mut code);
        code
    }

    /// Records where the `jit_merge_point!()` being emitted is written.
    pub fn set_merge_point_site(&mut self, site: &'static HintSite) {
        self.merge_point_site = Some(site);
    }
}

/// Constant registers get indices from here up while building; `finish` renumbers them.
const CONST_BASE: u16 = 0x8000;

/// Applies `f` to every register operand of `op`.
pub fn for_each_register(op: &mut Op, mut f: impl FnMut(&mut Register)) {
    match op {
        Op::Move { dst, src } => {
            f(dst);
            f(src)
        }
        Op::IntBinary { dst, a, b, .. }
        | Op::IntCompare { dst, a, b, .. }
        | Op::FloatBinary { dst, a, b, .. }
        | Op::FloatCompare { dst, a, b, .. }
        | Op::RefCompare { dst, a, b, .. } => {
            f(dst);
            f(a);
            f(b)
        }
        Op::IntUnary { dst, a, .. } | Op::FloatUnary { dst, a, .. } => {
            f(dst);
            f(a)
        }
        Op::IntCast { dst, src, .. }
        | Op::IntToFloat { dst, src, .. }
        | Op::FloatToInt { dst, src, .. } => {
            f(dst);
            f(src)
        }
        Op::RefAddr {
            dst, base, index, ..
        } => {
            f(dst);
            f(base);
            if let Some((i, _)) = index {
                f(i)
            }
        }
        Op::New { dst, .. } => f(dst),
        Op::GetField { dst, base, .. } => {
            f(dst);
            f(base)
        }
        Op::SetField { base, src, .. } => {
            f(base);
            f(src)
        }
        Op::GetArrayItem {
            dst, base, index, ..
        } => {
            f(dst);
            f(base);
            f(index)
        }
        Op::SetArrayItem {
            base, index, src, ..
        } => {
            f(base);
            f(index);
            f(src)
        }
        Op::CheckIndex { index, len } => {
            f(index);
            f(len)
        }
        Op::Goto { .. } | Op::Panic { .. } => {}
        Op::GotoIfNot { cond, .. } => f(cond),
        Op::Switch { value, .. } => f(value),
        Op::Call { args, dst, .. } => {
            args.iter_mut().for_each(&mut f);
            if let Some(d) = dst {
                f(d)
            }
        }
        Op::InlineCall { args, dsts, .. } => {
            args.iter_mut().for_each(&mut f);
            dsts.iter_mut().for_each(f)
        }
        Op::Return { values } => values.iter_mut().for_each(f),
        Op::JitMergePoint { greens, reds } | Op::CanEnterJit { greens, reds } => {
            greens.iter_mut().chain(reds.iter_mut()).for_each(f)
        }
        Op::Promote { reg } => f(reg),
        Op::RecordKnownResult { result, args, .. } => {
            f(result);
            args.iter_mut().for_each(f)
        }
        Op::RecordExactValue { reg, value, .. } => {
            f(reg);
            f(value)
        }
    }
}

/// RPython's rule: every variable live at the merge point is a green or a red. The macro
/// rejects at compile time the variables it can see are live (read in the dispatch loop before
/// any assignment); this catches the rest (a variable read after the loop, say), naming the
/// variable and the merge point.
fn check_merge_points(code: &JitCode, live: &liveness::LiveBits, site: Option<&'static HintSite>) {
    let at = site.map_or_else(String::new, |s| {
        format!(" at {}:{}:{}", s.file, s.line, s.column)
    });
    for (pc, op) in code.ops.iter().enumerate() {
        let Op::JitMergePoint { greens, reds } = op else {
            continue;
        };
        for r in live.live(pc).iter() {
            if greens.contains(&r) || reds.contains(&r) {
                continue;
            }
            let var = code
                .names
                .iter()
                .rev()
                .find(|(n, _)| *n == r)
                .map(|(_, s)| s.as_str());
            match var {
                Some(v) => panic!(
                    "portal `{}`: variable `{v}` is live at jit_merge_point!(){at} but is neither a green nor a red; \
                     add it to greens(...) or reds(...) of the portal, or make it dead there",
                    code.name
                ),
                None => panic!(
                    "portal `{}`: a temporary value is live across jit_merge_point!(){at}; \
                     put the merge point at the top of the dispatch loop, outside any expression",
                    code.name
                ),
            }
        }
    }
}
