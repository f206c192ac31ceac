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

/// The live-in sets of every op, as bits: one row of words per pc (row `ops.len()` is the
/// empty set after the end), each row the int, float and ref banks one after the other.
pub(super) struct LiveBits {
    words: Vec<u64>,
    /// Words per row.
    row: usize,
    /// Where each bank starts in a row.
    bank_at: [usize; 3],
}

impl LiveBits {
    /// The word and bit of register `r` in a row, or `None` for a constant.
    fn place(bank_at: &[usize; 3], num_regs: [u16; 3], r: Register) -> Option<(usize, u64)> {
        let b = r.kind.bank();
        (r.index < num_regs[b])
            .then(|| (bank_at[b] + usize::from(r.index) / 64, 1 << (r.index % 64)))
    }

    /// The row of `pc`.
    pub(super) fn get(&self, pc: usize) -> &[u64] {
        &self.words[pc * self.row..(pc + 1) * self.row]
    }

    /// Words per row.
    pub(super) fn row_words(&self) -> usize {
        self.row
    }

    /// Bank `b`'s words of `row`.
    pub(super) fn bank<'r>(&self, row: &'r [u64], b: usize) -> &'r [u64] {
        let end = if b == 2 {
            self.row
        } else {
            self.bank_at[b + 1]
        };
        &row[self.bank_at[b]..end]
    }

    /// The registers live on entry to `pc`.
    pub(super) fn live(&self, pc: usize) -> LiveRegs {
        let row = self.get(pc);
        let list = |b: usize| {
            let end = if b == 2 {
                self.row
            } else {
                self.bank_at[b + 1]
            };
            let mut v = Vec::new();
            for (w, &word) in row[self.bank_at[b]..end].iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    v.push((w * 64 + word.trailing_zeros() as usize) as u16);
                    word &= word - 1;
                }
            }
            v
        };
        LiveRegs {
            ints: list(0),
            floats: list(1),
            refs: list(2),
        }
    }
}

/// The backward data-flow to a fixed point. Each op's successors, writes and reads are found
/// once, and the sets are rows of one vector: the Lua interpreter's portal (thousands of ops,
/// hundreds of registers) took 46 million instructions here, at the first trace of every run,
/// when each set was three vectors made anew at every visit.
pub(super) fn live_bits(ops: &[Op], num_regs: [u16; 3]) -> LiveBits {
    let n = ops.len();
    let words = num_regs.map(|r| usize::from(r).div_ceil(64));
    let bank_at = [0, words[0], words[0] + words[1]];
    let row = words.iter().sum::<usize>();
    let place = |r: Register| LiveBits::place(&bank_at, num_regs, r);
    let succs: Vec<Vec<usize>> = ops
        .iter()
        .enumerate()
        .map(|(pc, op)| successors(op, pc).into_iter().map(|s| s.min(n)).collect())
        .collect();
    let kills: Vec<Vec<(usize, u64)>> = ops
        .iter()
        .map(|op| defs(op).into_iter().filter_map(place).collect())
        .collect();
    let gens: Vec<Vec<(usize, u64)>> = ops
        .iter()
        .map(|op| {
            let mut v = Vec::new();
            each_use(op, |u| v.extend(place(u)));
            v
        })
        .collect();
    let mut live = LiveBits {
        words: vec![0; (n + 1) * row],
        row,
        bank_at,
    };
    let mut out = vec![0u64; row];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            out.fill(0);
            for &s in &succs[pc] {
                for (o, w) in out.iter_mut().zip(live.get(s)) {
                    *o |= *w;
                }
            }
            for &(w, bit) in &kills[pc] {
                out[w] &= !bit;
            }
            for &(w, bit) in &gens[pc] {
                out[w] |= bit;
            }
            let at = &mut live.words[pc * row..(pc + 1) * row];
            if at != out.as_slice() {
                at.copy_from_slice(&out);
                changed = true;
            }
        }
    }
    live
}

/// Computes, for every op, the registers live on entry to it (index `ops.len()` is the empty
/// set after the end).
pub fn live_in_sets(ops: &[Op], num_regs: [u16; 3]) -> Vec<LiveRegs> {
    let live = live_bits(ops, num_regs);
    (0..=ops.len()).map(|pc| live.live(pc)).collect()
}

/// Fills `code.liveness`: for guard points the live-in set; for calls the set live after the call
/// without the call's results (the registers the caller needs when the callee returns).
pub fn compute(code: &mut JitCode) {
    let live_in = live_bits(&code.ops, code.num_regs);
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
                    let after = live_in.live(pc + 1);
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
                _ => Some(live_in.live(pc)),
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

    /// Random control flow over registers of the three banks (some past 64, so that a bank
    /// takes two words): the live-in sets equal liveness by its definition, a path from the op
    /// that reads the register before any op on it writes it, searched op by op.
    #[test]
    fn live_sets_are_the_registers_read_before_written_on_some_path() {
        use super::super::format::Register;
        use super::{defs, each_use, live_in_sets, successors};
        use quickcheck::TestResult;
        fn by_paths(ops: &[Op], pc: usize, r: Register) -> bool {
            let mut seen = vec![false; ops.len() + 1];
            let mut todo = vec![pc];
            while let Some(at) = todo.pop() {
                if at >= ops.len() || std::mem::replace(&mut seen[at], true) {
                    continue;
                }
                let mut reads = false;
                each_use(&ops[at], |u| reads |= u == r);
                if reads {
                    return true;
                }
                if !defs(&ops[at]).contains(&r) {
                    todo.extend(successors(&ops[at], at));
                }
            }
            false
        }
        fn prop(seed: u64) -> TestResult {
            let mut next = crate::testing::draws(seed);
            let num_regs = [70u16, 3, 66];
            let reg = |next: &mut dyn FnMut(u64) -> u64, kind: Kind| {
                let pick = [0, 1, 2, 63, 64, 65, 69, 5];
                let index = pick[next(8) as usize].min(num_regs[kind.bank()] - 1);
                Register { kind, index }
            };
            let n = 2 + next(14) as usize;
            let mut ops = Vec::new();
            for _ in 0..n {
                let kinds = [Kind::Int, Kind::Float, Kind::Ref];
                let k = kinds[next(3) as usize];
                let op = match next(5) {
                    0 => Op::Goto {
                        target: next(n as u64 + 1) as u32,
                    },
                    1 => Op::GotoIfNot {
                        cond: reg(&mut next, Kind::Int),
                        target: next(n as u64 + 1) as u32,
                    },
                    2 => Op::Return {
                        values: vec![reg(&mut next, k)],
                    },
                    _ => Op::Move {
                        dst: reg(&mut next, k),
                        src: reg(&mut next, k),
                    },
                };
                ops.push(op);
            }
            let live = live_in_sets(&ops, num_regs);
            for (pc, set) in live.iter().enumerate() {
                for (kind, got) in [
                    (Kind::Int, &set.ints),
                    (Kind::Float, &set.floats),
                    (Kind::Ref, &set.refs),
                ] {
                    let want: Vec<u16> = (0..num_regs[kind.bank()])
                        .filter(|&i| by_paths(&ops, pc, Register { kind, index: i }))
                        .collect();
                    if *got != want {
                        return TestResult::error(format!(
                            "pc {pc} {kind:?}: {got:?} != {want:?} in {ops:?}"
                        ));
                    }
                }
            }
            TestResult::passed()
        }
        crate::testing::prop_runner(0x11fe, 1, 2000).quickcheck(prop as fn(u64) -> TestResult);
    }
}
