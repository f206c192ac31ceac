//! Resume data, both ways: rebuilding the jitcode frames of a failed guard from the values its
//! exit saved (for the blackhole interpreter), and rebuilding the tracer's frames with shadows
//! from a guard (for tracing a bridge).
//!
//! The layout (see [`crate::ir::Resume`]): frames outermost first; frame `k` is the jitcode
//! with index `code` in the driver's [`Codes`], stopped at `pc`, and takes the next `len`
//! entries of `values`, one per register live at `pc` ([`crate::jitcode::JitCode::live_at`])
//! in [`crate::jitcode::LiveRegs::iter`] order (ints, floats, refs). An entry is a trace op
//! (whose value the exit saved), a constant, or a virtual object (allocated and filled by
//! [`crate::interp::materialize`] for the blackhole interpreter; allocated and filled by the
//! first ops of a bridge's trace for the tracer).
//!
//! Must not know: how frames run (the blackhole interpreter) or any guest language.
#![deny(unsafe_code)]

use crate::interp::materialize;
use crate::ir::{
    DescrId, DescrKind, FrameInfo, Op, OpRef, Opcode, PendingStore, Resume, Trace, Virtual,
};
use crate::jitcode::runner::Frame;
use crate::trace::{from_ir, ir_type, Codes, TraceFrame};

/// What the driver keeps of a compiled trace: each guard's resume data, found by the guard's op
/// index, and the constant and descriptor pools that data names (a [`Trace`] without ops). A
/// failing guard needs nothing else of the trace (its live values come from the exit), so the
/// optimized trace itself is dropped once compiled.
///
/// The resume data of all guards is encoded in one array of words (RPython's resume data is
/// compact in the same spirit): a trace of a thousand guards keeps two allocations, not four
/// per guard, and about a fifth of the bytes of its [`Resume`] values. A failing guard decodes
/// its own ([`Exits::guard`]).
#[derive(Debug)]
pub struct Exits {
    pools: Trace,
    /// `(op index, start in `words`, opcode)` of every guard, by op index.
    guards: Vec<(u32, u32, Opcode)>,
    words: Vec<u32>,
}

impl Exits {
    /// The exits of `t`.
    pub fn keep(t: Trace) -> Exits {
        let mut guards = Vec::new();
        let mut words = Vec::new();
        for (i, op) in t.ops.iter().enumerate() {
            if let Some(r) = &op.resume {
                guards.push((i as u32, words.len() as u32, op.opcode));
                encode(r, &mut words);
            }
        }
        guards.shrink_to_fit();
        words.shrink_to_fit();
        let mut pools = Trace::new();
        pools.consts = t.consts;
        pools.descrs = t.descrs;
        pools.shrink_to_fit();
        Exits {
            pools,
            guards,
            words,
        }
    }

    /// The guard at op `op`: its encoded resume data (from its first word on) and its opcode
    /// (`None` if that op is no guard).
    fn find(&self, op: usize) -> Option<(&[u32], Opcode)> {
        let k = self
            .guards
            .binary_search_by_key(&op, |g| g.0 as usize)
            .ok()?;
        let (_, start, opcode) = self.guards[k];
        Some((&self.words[start as usize..], opcode))
    }

    /// The guard at op `op`: its opcode and resume data (`None` if that op is no guard).
    pub fn guard(&self, op: usize) -> Option<(Opcode, Resume)> {
        let (w, opcode) = self.find(op)?;
        Some((opcode, decode(w)))
    }

    /// The opcode of the guard at op `op`, without decoding its resume data (`None` if that op
    /// is no guard).
    pub fn opcode(&self, op: usize) -> Option<Opcode> {
        Some(self.find(op)?.1)
    }

    /// The jitcode frames of the guard at op `op` that failed with `saved`: what [`frames`]
    /// gives for its resume data ([`Exits::guard`]). A guard without virtual objects and
    /// pending stores (most guards) is read straight from the encoded words, with no
    /// [`Resume`] decoded and no list of live ops built (a failing guard without a bridge
    /// takes this path every time: `tests/tests/failure_cost.rs` counts its allocations);
    /// any other goes through [`frames`]. `None` if that op is no guard.
    pub fn frames(
        &self,
        codes: &Codes,
        op: usize,
        saved: &[crate::ir::Value],
    ) -> Option<Vec<Frame<'static>>> {
        let (w, _) = self.find(op)?;
        // The layout of `encode`: id, frames, values, virtuals, stores.
        let nf = w[1] as usize;
        let infos = &w[2..2 + 3 * nf];
        let nv = w[2 + 3 * nf] as usize;
        let values = &w[3 + 3 * nf..3 + 3 * nf + nv];
        let rest = 3 + 3 * nf + nv;
        if w[rest] != 0 || w[rest + 1] != 0 {
            return Some(frames(codes, &self.pools, &decode(w), saved));
        }
        // Without virtuals and stores, the live ops ([`Resume::live_ops`], the order of
        // `saved`) are the distinct ops of `values` in order of first appearance.
        let mut live: smallvec::SmallVec<[OpRef; 16]> = smallvec::SmallVec::new();
        let infos = infos.chunks_exact(3).map(|fi| (fi[0], fi[1]));
        let out = fill_frames(codes, infos, |k| {
            let x = OpRef::from_bits(values[k]);
            match self.pools.const_value(x) {
                Some(c) => c,
                None => {
                    debug_assert!(x.is_op(), "no virtuals in this resume data");
                    let at = live.iter().position(|&l| l == x).unwrap_or_else(|| {
                        live.push(x);
                        live.len() - 1
                    });
                    saved[at]
                }
            }
        });
        // The shortcut reads the encoding itself: debug builds check it against the decoder.
        #[cfg(debug_assertions)]
        {
            let general = frames(codes, &self.pools, &decode(w), saved);
            debug_assert!(
                out.len() == general.len() && out.iter().zip(&general).all(|(a, b)| a.same_as(b)),
                "the frames read directly at guard op {op} differ from its decoded resume data"
            );
        }
        Some(out)
    }

    /// The resume id of the guard at op `op` (its first word), without decoding the rest.
    pub fn guard_id(&self, op: usize) -> Option<u32> {
        Some(self.find(op)?.0[0])
    }

    /// The constants and descriptors the resume data names (a trace without ops).
    pub fn pools(&self) -> &Trace {
        &self.pools
    }

    /// About how many bytes of heap it takes (an estimate for the JIT's memory limit).
    pub fn heap_bytes(&self) -> usize {
        self.guards.capacity() * std::mem::size_of::<(u32, u32, Opcode)>()
            + self.words.capacity() * 4
            + self.pools.heap_bytes()
    }
}

/// Appends `r` to `out`: its id; its frames (count, then code, pc and length of each); its
/// values (count, then each reference's bits); its virtuals (count, then for each its
/// descriptor and its fields: count, then descriptor and value of each); its pending stores
/// (count, then descriptor, base, 0 or 1 and the index if 1, and value of each).
fn encode(r: &Resume, out: &mut Vec<u32>) {
    out.push(r.id);
    out.push(r.frames.len() as u32);
    for f in &r.frames {
        out.extend([f.code, f.pc, f.len]);
    }
    out.push(r.values.len() as u32);
    out.extend(r.values.iter().map(|v| v.bits()));
    out.push(r.virtuals.len() as u32);
    for v in &r.virtuals {
        out.extend([v.descr.0, v.fields.len() as u32]);
        for &(d, x) in &v.fields {
            out.extend([d.0, x.bits()]);
        }
    }
    out.push(r.stores.len() as u32);
    for st in &r.stores {
        out.extend([st.descr.0, st.base.bits()]);
        match st.index {
            Some(i) => out.extend([1, i.bits()]),
            None => out.push(0),
        }
        out.push(st.value.bits());
    }
}

/// The resume data that [`encode`] wrote at the start of `words`.
fn decode(words: &[u32]) -> Resume {
    let mut w = words.iter().copied();
    let mut next = || w.next().expect("encoded resume data is complete");
    let id = next();
    let frames = (0..next())
        .map(|_| FrameInfo {
            code: next(),
            pc: next(),
            len: next(),
        })
        .collect();
    let values = (0..next()).map(|_| OpRef::from_bits(next())).collect();
    let virtuals = (0..next())
        .map(|_| {
            let descr = DescrId(next());
            let fields = (0..next())
                .map(|_| (DescrId(next()), OpRef::from_bits(next())))
                .collect();
            Virtual { descr, fields }
        })
        .collect();
    let stores = (0..next())
        .map(|_| {
            let descr = DescrId(next());
            let base = OpRef::from_bits(next());
            let index = (next() == 1).then(|| OpRef::from_bits(next()));
            let value = OpRef::from_bits(next());
            PendingStore {
                descr,
                base,
                index,
                value,
            }
        })
        .collect();
    Resume {
        id,
        frames,
        values,
        virtuals,
        stores,
    }
}

/// The jitcode frames of a guard of `trace` (the trace as compiled) that failed with `saved`
/// (its values in [`Resume::live_ops`] order), virtual objects materialized and the guard's
/// pending stores ([`Resume::stores`]) done.
pub fn frames(
    codes: &Codes,
    trace: &Trace,
    r: &Resume,
    saved: &[crate::ir::Value],
) -> Vec<Frame<'static>> {
    let values = materialize(trace, r, saved);
    fill_frames(codes, r.frames.iter().map(|f| (f.code, f.pc)), |k| values[k])
}

/// The jitcode frames of `infos` (each frame's code and pc, outermost first) whose live
/// registers, in order through all the frames, hold `value(0)`, `value(1)`, ...
fn fill_frames(
    codes: &Codes,
    infos: impl Iterator<Item = (u32, u32)>,
    mut value: impl FnMut(usize) -> crate::ir::Value,
) -> Vec<Frame<'static>> {
    let mut next = 0;
    infos
        .map(|(code, pc)| {
            let code = codes.get(code);
            let mut f = Frame::new(code);
            f.pc = pc as usize;
            let live = code.live_at(f.pc).expect("resume pcs are guard points");
            for reg in live.iter() {
                f.set(reg, from_ir(value(next)));
                next += 1;
            }
            f
        })
        .collect()
}

/// The tracer's frames for a bridge from a guard of `parent`: a new trace whose inputs are the
/// guard's saved values (in [`Resume::live_ops`] order, the order the backend passes them to
/// a bridge), and frames whose live registers hold `saved`'s values and shadow those inputs
/// (or the constants of the resume data). The guard's pending stores ([`Resume::stores`]) are
/// done in memory and are the bridge's first stores.
///
/// A virtual object of the resume data is allocated concretely (the frames hold it, as
/// [`frames`] would give it to the blackhole interpreter) *and* in the bridge: the trace starts
/// with a `new` (or `new_array`) for each, then fills their fields from the inputs, so the
/// registers that held the virtual shadow a real allocation of the bridge. The optimizer may
/// make them virtual again.
pub fn bridge_frames(
    codes: &Codes,
    parent: &Trace,
    r: &Resume,
    saved: &[crate::ir::Value],
) -> (Trace, Vec<TraceFrame>) {
    let live = r.live_ops();
    let mut t = Trace::new();
    let inputs: Vec<OpRef> = saved.iter().map(|v| t.input(v.ty())).collect();
    let zero = [t.int(0), t.float(0.0), t.ptr(0)];
    let values = materialize(parent, r, saved);
    let news = allocate(&mut t, parent, r);
    let mut shadow_of = |t: &mut Trace, x: OpRef| -> OpRef {
        if x.is_virtual() {
            news[x.index()]
        } else if x.is_op() {
            inputs[live
                .iter()
                .position(|&l| l == x)
                .expect("live ops cover values")]
        } else {
            t.constant(parent.const_value(x).expect("a constant"))
        }
    };
    fill(&mut t, parent, r, &news, &mut shadow_of);
    // The guard's pending stores (`materialize` did them in memory): the bridge starts by
    // doing them, since its guard's exit jumps to it instead of resuming.
    for st in &r.stores {
        let pd = parent.get_descr(st.descr);
        let d = t.descr(&pd.name, pd.kind.clone());
        let base = shadow_of(&mut t, st.base);
        let value = shadow_of(&mut t, st.value);
        let op = match st.index {
            Some(i) => {
                let i = shadow_of(&mut t, i);
                Op::new(Opcode::Setarrayitem, &[base, i, value])
            }
            None => Op::new(Opcode::Setfield, &[base, value]),
        };
        t.push(op.with_descr(d));
    }
    let mut out = Vec::new();
    let mut next = 0;
    for fi in &r.frames {
        let code = codes.get(fi.code);
        let mut f = TraceFrame::new(code, fi.code, zero);
        f.frame.pc = fi.pc as usize;
        for reg in code.live_at(f.frame.pc).expect("a guard point").iter() {
            let shadow = shadow_of(&mut t, r.values[next]);
            debug_assert_eq!(ir_type(reg.kind), t.type_of(shadow));
            f.frame.set(reg, from_ir(values[next]));
            f.shadow[reg.kind.bank()][usize::from(reg.index)] = shadow;
            next += 1;
        }
        out.push(f);
    }
    (t, out)
}

/// Records the allocation of every virtual object of `r` in `t` (all before any is filled, so
/// that they may point at each other).
fn allocate(t: &mut Trace, parent: &Trace, r: &Resume) -> Vec<OpRef> {
    let mut news = Vec::with_capacity(r.virtuals.len());
    for v in &r.virtuals {
        let pd = parent.get_descr(v.descr);
        let d = t.descr(&pd.name, pd.kind.clone());
        let op = match pd.kind {
            DescrKind::Array(_) => {
                let n = t.int(v.fields.len() as i64);
                Op::new(Opcode::NewArray, &[n])
            }
            _ => Op::new(Opcode::New, &[]),
        };
        news.push(t.push(op.with_descr(d)));
    }
    news
}

/// Records the stores that fill the virtual objects `news` of `r` with their fields' values.
fn fill(
    t: &mut Trace,
    parent: &Trace,
    r: &Resume,
    news: &[OpRef],
    shadow_of: &mut dyn FnMut(&mut Trace, OpRef) -> OpRef,
) {
    for (v, &obj) in r.virtuals.iter().zip(news) {
        for (n, &(fd, x)) in v.fields.iter().enumerate() {
            let pd = parent.get_descr(fd);
            let d = t.descr(&pd.name, pd.kind.clone());
            let value = shadow_of(t, x);
            let op = match pd.kind {
                DescrKind::Array(_) => {
                    let i = t.int(n as i64);
                    Op::new(Opcode::Setarrayitem, &[obj, i, value])
                }
                _ => Op::new(Opcode::Setfield, &[obj, value]),
            };
            t.push(op.with_descr(d));
        }
    }
}
