//! Liveness of jitcode registers: which registers hold values that may still be read, at every
//! guard point.
//!
//! Owns: the operands each op reads and writes ([`each_use`], [`defs`]), its successors, and the
//! backward data-flow that computes live sets. The result is what resume data keeps: a guard that
//! fails at `pc` only needs the registers live at `pc`.
//! Must not know: how ops execute or are traced; constants are never live (they are in the pool).
#![deny(unsafe_code)]

use super::format::{JitCode, Kind, LiveRegs, Op, Register};

/// Calls `f` with each register `op` reads, in order.
pub fn each_use(op: &Op, mut f: impl FnMut(Register)) {
    let mut all = |rs: &[Register]| rs.iter().for_each(|&r| f(r));
    match op {
        Op::Move { src, .. } => all(&[*src]),
        Op::IntBinary { a, b, .. }
        | Op::IntCompare { a, b, .. }
        | Op::FloatBinary { a, b, .. }
        | Op::FloatCompare { a, b, .. }
        | Op::RefCompare { a, b, .. } => all(&[*a, *b]),
        Op::IntUnary { a, .. } | Op::FloatUnary { a, .. } => all(&[*a]),
        Op::IntCast { src, .. } | Op::IntToFloat { src, .. } | Op::FloatToInt { src, .. } => {
            all(&[*src])
        }
        Op::RefAddr { base, index, .. } => match index {
            Some((i, _)) => all(&[*base, *i]),
            None => all(&[*base]),
        },
        Op::New { .. } => {}
        Op::GetField { base, .. } => all(&[*base]),
        Op::SetField { base, src, .. } => all(&[*base, *src]),
        Op::GetArrayItem { base, index, .. } => all(&[*base, *index]),
        Op::SetArrayItem {
            base, index, src, ..
        } => all(&[*base, *index, *src]),
        Op::CheckIndex { index, len } => all(&[*index, *len]),
        Op::Goto { .. } | Op::Panic { .. } => {}
        Op::GotoIfNot { cond, .. } => all(&[*cond]),
        Op::Switch { value, .. } => all(&[*value]),
        Op::Call { args, .. } | Op::InlineCall { args, .. } => all(args),
        Op::Return { values } => all(values),
        Op::JitMergePoint { greens, reds } | Op::CanEnterJit { greens, reds } => {
            all(greens);
            all(reds);
        }
        Op::Promote { reg } => all(&[*reg]),
        Op::RecordKnownResult { result, args, .. } => {
            all(&[*result]);
            all(args);
        }
        Op::RecordExactValue { reg, value, .. } => all(&[*reg, *value]),
    }
}

/// The registers `op` writes.
pub fn defs(op: &Op) -> Vec<Register> {
    match op {
        Op::Move { dst, .. }
        | Op::IntBinary { dst, .. }
        | Op::IntUnary { dst, .. }
        | Op::IntCompare { dst, .. }
        | Op::IntCast { dst, .. }
        | Op::FloatBinary { dst, .. }
        | Op::FloatUnary { dst, .. }
        | Op::FloatCompare { dst, .. }
        | Op::IntToFloat { dst, .. }
        | Op::FloatToInt { dst, .. }
        | Op::RefCompare { dst, .. }
        | Op::RefAddr { dst, .. }
        | Op::GetField { dst, .. }
        | Op::New { dst, .. }
        | Op::GetArrayItem { dst, .. } => vec![*dst],
        Op::Call { dst, .. } => dst.iter().copied().collect(),
        Op::InlineCall { dsts, .. } => dsts.clone(),
        _ => vec![],
    }
}

/// The pcs control may reach right after `op` at `pc`.
pub fn successors(op: &Op, pc: usize) -> Vec<usize> {
    match op {
        Op::Goto { target } => vec![*target as usize],
        Op::GotoIfNot { target, .. } => vec![pc + 1, *target as usize],
        Op::Switch { cases, default, .. } => {
            let mut v: Vec<usize> = cases.iter().map(|&(_, t)| t as usize).collect();
            v.push(*default as usize);
            v
        }
        Op::Return { .. } | Op::Panic { .. } => vec![],
        _ => vec![pc + 1],
    }
}

/// A set of ordinary registers as three bit vectors.
#[derive(Clone, PartialEq, Eq)]
struct Bits {
    banks: [Vec<u64>; 3],
}

impl Bits {
    fn new(num_regs: [u16; 3]) -> Bits {
        Bits {
            banks: num_regs.map(|n| vec![0; usize::from(n).div_ceil(64)]),
        }
    }
    fn set(&mut self, r: Register, on: bool, num_regs: [u16; 3]) {
        let b = r.kind.bank();
        if r.index >= num_regs[b] {
            return; // a constant
        }
        let (w, bit) = (usize::from(r.index) / 64, r.index % 64);
        if on {
            self.banks[b][w] |= 1 << bit;
        } else {
            self.banks[b][w] &= !(1 << bit);
        }
    }
    fn union(&mut self, other: &Bits) {
        for (a, b) in self.banks.iter_mut().zip(&other.banks) {
            for (x, y) in a.iter_mut().zip(b) {
                *x |= *y;
            }
        }
    }
    fn to_live(&self) -> LiveRegs {
        let list = |words: &Vec<u64>| {
            let mut v = Vec::new();
            for (w, &word) in words.iter().enumerate() {
                for bit in 0..64 {
                    if word >> bit & 1 == 1 {
                        v.push((w * 64 + bit) as u16);
                    }
                }
            }
            v
        };
        LiveRegs {
            ints: list(&self.banks[0]),
            floats: list(&self.banks[1]),
            refs: list(&self.banks[2]),
        }
    }
}

/// Computes, for every op, the registers live on entry to it (index `ops.len()` is the empty
/// set after the end).
pub fn live_in_sets(ops: &[Op], num_regs: [u16; 3]) -> Vec<LiveRegs> {
    let n = ops.len();
    let mut live_in: Vec<Bits> = vec![Bits::new(num_regs); n + 1];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let op = &ops[pc];
            let mut out = Bits::new(num_regs);
            for s in successors(op, pc) {
                out.union(&live_in[s.min(n)]);
            }
            for d in defs(op) {
                out.set(d, false, num_regs);
            }
            each_use(op, |u| out.set(u, true, num_regs));
            if out != live_in[pc] {
                live_in[pc] = out;
                changed = true;
            }
        }
    }
    live_in.iter().map(Bits::to_live).collect()
}

/// Fills `code.liveness`: for guard points the live-in set; for calls the set live after the call
/// without the call's results (the registers the caller needs when the callee returns).
pub fn compute(code: &mut JitCode) {
    let live_in = live_in_sets(&code.ops, code.num_regs);
    code.liveness = code
        .ops
        .iter()
        .enumerate()
        .map(|(pc, op)| {
            if !JitCode::is_guard_point(op) {
                return None;
            }
            match op {
                Op::Call { .. } | Op::InlineCall { .. } => {
                    let results = defs(op);
                    let after = &live_in[pc + 1];
                    let keep = |kind: Kind, v: &Vec<u16>| {
                        v.iter()
                            .copied()
                            .filter(|&index| !results.contains(&Register { kind, index }))
                            .collect()
                    };
                    Some(LiveRegs {
                        ints: keep(Kind::Int, &after.ints),
                        floats: keep(Kind::Float, &after.floats),
                        refs: keep(Kind::Ref, &after.refs),
                    })
                }
                _ => Some(live_in[pc].clone()),
            }
        })
        .collect();
}

#[cfg(test)]
mod tests {
    use super::super::builder::Builder;
    use super::super::format::{Cmp, IntBinOp, IntTy, Kind, Op, Overflow};

    /// `i = 0; s = 0; loop { if !(i < n) break; s = s + i; i = i + 1 }; return s`
    #[test]
    fn a_loop_keeps_its_carried_registers_live() {
        let mut b = Builder::new("sum");
        let n = b.arg(Kind::Int);
        let (i, s, c, t) = (
            b.fresh(Kind::Int),
            b.fresh(Kind::Int),
            b.fresh(Kind::Int),
            b.fresh(Kind::Int),
        );
        let zero = b.const_int(0);
        let one = b.const_int(1);
        b.emit(Op::Move { dst: i, src: zero });
        b.emit(Op::Move { dst: s, src: zero });
        let head = b.new_label();
        let exit = b.new_label();
        b.bind(head);
        b.emit(Op::IntCompare {
            cmp: Cmp::Lt,
            signed: true,
            dst: c,
            a: i,
            b: n,
        });
        b.goto_if_not(c, exit);
        let add = |dst, a, bb| Op::IntBinary {
            op: IntBinOp::Add,
            ty: IntTy::I64,
            overflow: Overflow::Check,
            dst,
            a,
            b: bb,
        };
        b.emit(add(t, s, i));
        b.emit(Op::Move { dst: s, src: t });
        b.emit(add(i, i, one));
        b.goto(head);
        b.bind(exit);
        b.emit(Op::Return { values: vec![s] });
        let code = b.finish();
        // At the branch: the condition, the counter, the bound and the sum; not the temporary.
        let live = code.live_at(3).expect("a branch is a guard point");
        assert_eq!(live.ints, vec![n.index, i.index, s.index, c.index]);
        // At the checked add of the counter: the sum is still live (the loop continues).
        let live = code.live_at(6).unwrap();
        assert_eq!(live.ints, vec![n.index, i.index, s.index]);
        // Constants are never live, and a plain move is no guard point.
        assert!(code.live_at(0).is_none());
        assert!(!code.is_const(i));
        assert_eq!(code.consts_int, vec![0, 1]);
        assert!(
            code.to_string().contains("%i1 = int_Add.i64.Check %i1, $1"),
            "{code}"
        );
    }
}
