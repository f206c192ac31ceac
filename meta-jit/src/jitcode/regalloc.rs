//! Register allocation for jitcode: the codewriter gives every value its own register, and
//! `finish` then gives registers that are never live at once one number (RPython's codewriter
//! colors its registers the same way). A big dispatch loop has a few registers live at any pc
//! but thousands in all (the Lua interpreter's portal: 1,124 int, 67 float and 234 ref
//! registers before, 28 in all after: Lua's test `the_portal_frame_holds_few_registers`), and
//! every frame the runner, the tracer, the blackhole interpreter and resume build holds the
//! whole register file, zeroed.
//!
//! Two registers of a bank *interfere* when one is written at an op while the other is live
//! after it, when both are written or read by one op (so no op ever reads and writes one
//! register, whatever the order the runner and the tracer do that in), or when both are
//! arguments (the frame is filled with all of them at once). Registers are then colored
//! greedily in their order, each with the smallest number none of its colored neighbours has.
//! A value may sit in a register another dead value used: that is the point, and it is sound
//! because only live registers are ever read (resume data keeps the live ones only).
//!
//! Owns: the interference rule and the renumbering. Must not know: what ops compute (it sees
//! their reads, writes and successors through [`super::liveness`]).
#![deny(unsafe_code)]

use super::format::{Op, Register};
use super::liveness::{self, LiveBits};

/// Renumbers the ordinary registers of `ops` (and of `args` and `names`) so that registers
/// that never interfere share a number, and the constants after them; `num_regs` becomes the
/// new counts. The ops' labels are resolved and their constants numbered from `num_regs`;
/// `live` is their liveness ([`liveness::live_bits`]).
pub(super) fn allocate(
    ops: &mut [Op],
    num_regs: &mut [u16; 3],
    args: &mut [Register],
    names: &mut [(Register, String)],
    live: &LiveBits,
) {
    let n = num_regs.map(usize::from);
    // Interference as one bit row per register, per bank.
    let mut adj: [Vec<Vec<u64>>; 3] = n.map(|k| vec![vec![0u64; k.div_ceil(64)]; k]);
    let ordinary = |r: &Register| usize::from(r.index) < n[r.kind.bank()];
    let mut out = vec![0u64; live.row_words()];
    for (pc, op) in ops.iter().enumerate() {
        let defs: Vec<Register> = liveness::defs(op).into_iter().filter(ordinary).collect();
        if defs.is_empty() {
            continue;
        }
        let mut touched = defs.clone();
        liveness::each_use(op, |u| {
            if ordinary(&u) {
                touched.push(u)
            }
        });
        live.out_of(ops, pc, &mut out);
        for d in &defs {
            let b = d.kind.bank();
            let row = &mut adj[b][usize::from(d.index)];
            for (w, x) in row.iter_mut().zip(live.bank(&out, b)) {
                *w |= x;
            }
            for t in touched.iter().filter(|t| t.kind == d.kind) {
                row[usize::from(t.index) / 64] |= 1 << (t.index % 64);
            }
        }
    }
    for a in args.iter().filter(|a| ordinary(a)) {
        let b = a.kind.bank();
        let row = &mut adj[b][usize::from(a.index)];
        for (w, x) in row.iter_mut().zip(live.bank(live.get(0), b)) {
            *w |= x;
        }
        for o in args.iter().filter(|o| o.kind == a.kind && ordinary(o)) {
            row[usize::from(o.index) / 64] |= 1 << (o.index % 64);
        }
    }
    let mut color: [Vec<u16>; 3] = n.map(|k| vec![0u16; k]);
    let mut new_num = [0u16; 3];
    for b in 0..3 {
        // Symmetric: a row's bits, and the rows that have this register's bit.
        for i in 0..n[b] {
            for j in bits(&adj[b][i]).collect::<Vec<_>>() {
                adj[b][j][i / 64] |= 1 << (i % 64);
            }
        }
        let mut taken: Vec<bool> = Vec::new();
        for i in 0..n[b] {
            taken.clear();
            for j in bits(&adj[b][i]).filter(|&j| j < i) {
                let c = usize::from(color[b][j]);
                if taken.len() <= c {
                    taken.resize(c + 1, false);
                }
                taken[c] = true;
            }
            let c = taken.iter().position(|&t| !t).unwrap_or(taken.len());
            color[b][i] = c as u16;
            new_num[b] = new_num[b].max(c as u16 + 1);
        }
    }
    let old = *num_regs;
    let rename = |r: &mut Register| {
        let b = r.kind.bank();
        r.index = if r.index < old[b] {
            color[b][usize::from(r.index)]
        } else {
            r.index - old[b] + new_num[b]
        };
    };
    for op in ops.iter_mut() {
        super::builder::for_each_register(op, rename);
    }
    args.iter_mut().for_each(rename);
    names.iter_mut().for_each(|(r, _)| rename(r));
    *num_regs = new_num;
}

/// The indices of the bits set in `words`.
fn bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        let mut word = word;
        std::iter::from_fn(move || {
            (word != 0).then(|| {
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                w * 64 + bit
            })
        })
    })
}

impl LiveBits {
    /// The live-in set of `pc`'s successors, into `out` (a row).
    fn out_of(&self, ops: &[Op], pc: usize, out: &mut [u64]) {
        out.fill(0);
        for s in liveness::successors(&ops[pc], pc) {
            for (o, w) in out.iter_mut().zip(self.get(s.min(ops.len()))) {
                *o |= *w;
            }
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)] // the runner runs the jitcode
mod tests {
    use super::super::builder::Builder;
    use super::super::format::{IntBinOp, IntTy, Kind, Op, Overflow, Register, Value};
    use quickcheck::TestResult;

    /// Random jitcode of int moves, wrapping arithmetic and forward branches over a dozen
    /// registers, some read before any write (they hold 0), returning a few of them: the
    /// allocated jitcode the runner runs returns what a direct evaluation of the ops as built
    /// (one register per value) returns, and it uses no more registers.
    #[test]
    fn allocated_jitcode_computes_what_the_built_ops_compute() {
        fn prop(seed: u64) -> TestResult {
            let mut next = crate::testing::draws(seed);
            let mut b = Builder::new("random");
            let nargs = 1 + next(3) as usize;
            let mut regs: Vec<Register> = (0..nargs).map(|_| b.arg(Kind::Int)).collect();
            regs.extend((0..3 + next(10)).map(|_| b.fresh(Kind::Int)));
            let consts: Vec<Register> = [1, 7, -3].map(|k| b.const_int(k)).to_vec();
            let pick = |next: &mut dyn FnMut(u64) -> u64, consts_too: bool| {
                let k = next(regs.len() as u64 + if consts_too { 3 } else { 0 }) as usize;
                regs.get(k)
                    .copied()
                    .unwrap_or_else(|| consts[k - regs.len()])
            };
            let n = 2 + next(30) as usize;
            let labels: Vec<_> = (0..n).map(|_| b.new_label()).collect();
            // The ops as built, with each label's position, for the direct evaluation.
            let mut built: Vec<(Op, Option<usize>)> = Vec::new();
            for (i, &l) in labels.iter().enumerate() {
                b.bind(l);
                let op = match next(6) {
                    0 if i + 1 < n => {
                        let target = i + 1 + next((n - i - 1) as u64) as usize;
                        let cond = pick(&mut next, false);
                        b.goto_if_not(cond, labels[target]);
                        built.push((Op::GotoIfNot { cond, target: 0 }, Some(target)));
                        continue;
                    }
                    1 => Op::Move {
                        dst: pick(&mut next, false),
                        src: pick(&mut next, true),
                    },
                    k => Op::IntBinary {
                        op: [IntBinOp::Add, IntBinOp::Sub, IntBinOp::Xor, IntBinOp::Mul]
                            [k as usize % 4],
                        ty: IntTy::I64,
                        overflow: Overflow::Wrap,
                        dst: pick(&mut next, false),
                        a: pick(&mut next, true),
                        b: pick(&mut next, true),
                    },
                };
                b.emit(op.clone());
                built.push((op, None));
            }
            let results: Vec<Register> = (0..1 + next(3)).map(|_| pick(&mut next, false)).collect();
            b.emit(Op::Return {
                values: results.clone(),
            });
            let args: Vec<i64> = (0..nargs).map(|_| next(1000) as i64 - 500).collect();
            // Direct evaluation of the ops as built.
            let mut val = std::collections::HashMap::<Register, i64>::new();
            for (r, &a) in regs.iter().zip(&args) {
                val.insert(*r, a);
            }
            let konst = |r: &Register, val: &std::collections::HashMap<Register, i64>| match consts
                .iter()
                .position(|c| c == r)
            {
                Some(k) => [1, 7, -3][k],
                None => val.get(r).copied().unwrap_or(0),
            };
            let mut pc = 0;
            while pc < built.len() {
                match &built[pc] {
                    (Op::GotoIfNot { cond, .. }, Some(t)) => {
                        if konst(cond, &val) == 0 {
                            pc = *t;
                            continue;
                        }
                    }
                    (Op::Move { dst, src }, _) => {
                        let v = konst(src, &val);
                        val.insert(*dst, v);
                    }
                    (Op::IntBinary { op, dst, a, b, .. }, _) => {
                        let (x, y) = (konst(a, &val), konst(b, &val));
                        let v = match op {
                            IntBinOp::Add => x.wrapping_add(y),
                            IntBinOp::Sub => x.wrapping_sub(y),
                            IntBinOp::Xor => x ^ y,
                            _ => x.wrapping_mul(y),
                        };
                        val.insert(*dst, v);
                    }
                    _ => unreachable!(),
                }
                pc += 1;
            }
            let want: Vec<Value> = results.iter().map(|r| Value::Int(konst(r, &val))).collect();
            let code = b.finish();
            if code.num_regs[0] as usize > regs.len() {
                return TestResult::error(format!(
                    "{} registers for {}",
                    code.num_regs[0],
                    regs.len()
                ));
            }
            let args: Vec<Value> = args.into_iter().map(Value::Int).collect();
            // SAFETY: the code reads and writes registers only.
            let got = unsafe { super::super::runner::run(&code, &args) };
            if got != want {
                return TestResult::error(format!("{got:?} != {want:?} in\n{code}"));
            }
            TestResult::passed()
        }
        crate::testing::prop_runner(0x7e6a, 2, 3000).quickcheck(prop as fn(u64) -> TestResult);
    }
}
