//! The recipe of a test case ([`Case`]): plain data (no addresses) from which
//! [`super::build`] makes a heap, a trace and its inputs. Random generation and shrinking work
//! on the recipe, never on a trace, so every candidate a shrink proposes builds into a
//! well-formed, verifying, memory-safe trace: the builder resolves each step against what
//! exists at that point (selectors are taken modulo what is available, counted back from the
//! most recent value) and skips a step that has nothing to work on.
//!
//! A step is one uniform record ([`Step`]) whose fields each [`Kind`] reads in its own way, so
//! one shrinker simplifies every kind: remove steps, zero selectors, halve constants, clear
//! failure flags, drop resume values.

use super::heap::{HeapSpec, ObjSpec, ARR_LEN};
use quickcheck::{Arbitrary, Gen};

/// A small deterministic random generator (SplitMix64), so that a [`Case`] is a function of a
/// seed and a size only.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// A selector that favours recent values: mostly 0..4, sometimes up to 255.
    pub fn recent(&mut self) -> u8 {
        match self.below(10) {
            0..=5 => self.below(3) as u8,
            6..=8 => self.below(12) as u8,
            _ => self.below(256) as u8,
        }
    }

    /// An interesting integer: a small number, a boundary, or random bits.
    pub fn int(&mut self) -> i64 {
        const SPECIAL: [i64; 24] = [
            0,
            1,
            -1,
            2,
            3,
            7,
            8,
            15,
            16,
            31,
            32,
            63,
            64,
            0x20,
            0x7f,
            0x80,
            0xff,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            i64::MAX,
            i64::MIN,
            -128,
            0x6162_6364_4142_4344,
        ];
        match self.below(10) {
            0..=4 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            5..=7 => self.below(200) as i64 - 100,
            _ => self.next_u64() as i64,
        }
    }

    /// An interesting float, including signed zeros, infinities and a NaN.
    pub fn float(&mut self) -> f64 {
        match self.below(3) {
            0 | 1 => SPECIAL_FLOATS[self.below(SPECIAL_FLOATS.len() as u64) as usize],
            _ => (self.below(2000) as f64 - 1000.0) / 8.0,
        }
    }
}

/// Floats worth trying: signed zeros, infinities, a NaN, an odd integer beyond 2^53.
pub(crate) const SPECIAL_FLOATS: [f64; 13] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    3.25,
    1e300,
    -1e-300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    9007199254740992.0,
];

/// An integer operand: a recent int value (`Val(k)`: the `k`-th most recent, modulo how many
/// there are) or a constant. Kinds that want a float or a reference read it their own way.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Arg {
    /// The `k`-th most recent value of the wanted type.
    Val(u8),
    /// A constant.
    Imm(i64),
}

impl Arg {
    fn random(r: &mut Rng) -> Arg {
        if r.chance(70) {
            Arg::Val(r.recent())
        } else {
            Arg::Imm(r.int())
        }
    }

    fn simpler(self) -> Vec<Arg> {
        match self {
            Arg::Val(0) => vec![Arg::Imm(0)],
            Arg::Val(k) => vec![Arg::Val(0), Arg::Val(k / 2)],
            Arg::Imm(0) => vec![],
            Arg::Imm(c) => {
                let mut v = vec![Arg::Imm(0)];
                if c / 2 != 0 {
                    v.push(Arg::Imm(c / 2));
                }
                v
            }
        }
    }
}

/// What a guard's resume data captures: recent values of any type (selectors over every value
/// defined so far), a few constants, split into up to three frames.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ResumeSpec {
    /// Selectors of captured values.
    pub vals: Vec<u8>,
    /// Captured constants.
    pub consts: Vec<i64>,
    /// How many frames (1 to 3) the values are split into.
    pub frames: u8,
}

impl ResumeSpec {
    fn random(r: &mut Rng) -> ResumeSpec {
        let n = r.below(6) as usize;
        ResumeSpec {
            vals: (0..n).map(|_| r.recent()).collect(),
            consts: (0..r.below(3)).map(|_| r.int()).collect(),
            frames: if r.chance(20) {
                2 + r.below(2) as u8
            } else {
                1
            },
        }
    }

    fn simpler(&self) -> Vec<ResumeSpec> {
        let mut out = Vec::new();
        if !self.vals.is_empty() || !self.consts.is_empty() || self.frames > 1 {
            out.push(ResumeSpec::default());
        }
        if self.vals.len() > 1 {
            let mut s = self.clone();
            s.vals.truncate(self.vals.len() / 2);
            out.push(s);
        }
        out
    }
}

/// What a [`Step`] does, and how it reads the step's fields (`a`, `b`, `c`: operands; `x`,
/// `y`: choices; `fail`: a flag; `resume`: a guard's capture).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A binary int op (`x` picks it) on `a`, `b`.
    Int2,
    /// A unary int op (`x`) on `a`.
    Int1,
    /// A binary float op or comparison (`x`) on float operands read from `a`, `b`.
    Float2,
    /// `float_neg` or `float_abs` (`x`) of `a`.
    Float1,
    /// A cast (`x`: int to float, float to int, bits, a pointer round trip).
    Cast,
    /// `int_signext(a, 1|2|4|8)` (`x` picks the width).
    Signext,
    /// A simplifiable expression on `a` (`x` picks it: `a + 0`, `a * 1`, `a - a`,
    /// `int_eq(a, a)`, `same_as`, double negation, constant-only, ...).
    Identity,
    /// The `x`-th most recent pure op again, with the same arguments (`fail`: commuted).
    Repeat,
    /// `int_*_ovf(a, b)` (`x`) and its overflow guard, failing in its run if `fail`.
    Ovf,
    /// An elidable call (`x` picks the function) on `a`, `b`, with a true known-result fact
    /// (`y`: none, the function's property, the property then a call it answers, or a fact
    /// stated before any call).
    Elidable,
    /// The `x`-th most recent elidable call again: same arguments, or (`fail`) on its result.
    ElidableAgain,
    /// `record_exact_value` of the `x`-th most recent value that is the same on every
    /// execution of this point.
    Exact,
    /// A guard (`x`: on `a` as a condition, on a comparison `y` of `a` and `b`, `guard_value`,
    /// a null test of an object or of a null reference, `guard_not_invalidated`, on a float
    /// comparison or value); passes in its run unless `fail` (and failing states no false
    /// fact about a pointer).
    Guard,
    /// The `x`-th most recent guard again.
    GuardAgain,
    /// A field load (`y` picks the field) from the `x`-th most recent object.
    Load,
    /// A field store of `a` into field `y` (not the immutable one) of object `x`.
    Store,
    /// A load of the `x`-th most recently accessed location.
    Reload,
    /// A store of `a` to the `x`-th most recently accessed location.
    Restore,
    /// An array item access on array `x`: index by `y` (a constant, `a` masked into range,
    /// or `a` behind a bounds-check guard); a store of `b` if `fail`, else a load.
    Item,
    /// `new` of an object, `next` set to object `a`, `imm` to `b` if `x & 1`, more fields from
    /// `c` by the bits of `x`; then (`y`) it escapes into the heap, to a call, or not at all.
    New,
    /// `new_array` of `x % 16 + 1` items (`y` odd: bytes, else ints), items set from `a`.
    NewArray,
    /// A residual call (`x` picks it) on object or array `y` and `a`.
    Call,
    /// `ptr_eq` (`fail`: `ptr_ne`) of objects `x` and `y`.
    PtrCmp,
    /// `guard_value` of object `x` with its address, failing if `fail` (a different address).
    Promote,
    /// The loop label, in a [`Shape::LoopLabel`] case (the first one counts).
    Label,
}

/// One step of a recipe. See [`Kind`] for what each kind reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What to do.
    pub kind: Kind,
    /// First operand.
    pub a: Arg,
    /// Second operand.
    pub b: Arg,
    /// Third operand.
    pub c: Arg,
    /// First choice.
    pub x: u8,
    /// Second choice.
    pub y: u8,
    /// A flag (mostly: make the guard fail in its run).
    pub fail: bool,
    /// The capture of the step's guard, if it makes one.
    pub resume: ResumeSpec,
}

/// How the trace ends.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Straight-line code ending in `finish`.
    Straight,
    /// A loop without label: `jump` back to the inputs.
    LoopInputs,
    /// A preamble, a `label`, the loop body and a `jump` back to the label.
    LoopLabel,
}

/// One argument of a loop header (the inputs, or the label): which value it is (`sel`, for a
/// label), and whether the `jump` passes it back unchanged or (`varying`) passes the `back`-th
/// most recent value of its type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LoopArg {
    /// For a label: the selector of the value among every value defined before it.
    pub sel: u8,
    /// Whether the value changes from one iteration to the next.
    pub varying: bool,
    /// Which value the `jump` passes when varying.
    pub back: u8,
}

/// A test case: a heap, inputs and the steps of a trace. Build it with [`Case::build`]; its
/// `Debug` form prints the built trace in the IR text form, with its inputs and heap.
#[derive(Clone, PartialEq)]
pub struct Case {
    /// The heap's initial contents.
    pub heap: HeapSpec,
    /// Reference inputs: indices of heap objects (modulo their number; repeats alias).
    pub ref_inputs: Vec<u8>,
    /// Whether the heap's int array is an input.
    pub arr_input: bool,
    /// Int inputs.
    pub int_inputs: Vec<i64>,
    /// Float inputs.
    pub float_inputs: Vec<f64>,
    /// How the trace ends.
    pub shape: Shape,
    /// The loop header's arguments (inputs take them in order, cycling).
    pub loop_args: Vec<LoopArg>,
    /// `Run::max_iterations` for loops (at least 1).
    pub iterations: u8,
    /// Whether the run treats the code as invalidated (`guard_not_invalidated` fails).
    pub invalidated: bool,
    /// The steps.
    pub steps: Vec<Step>,
    /// Selectors of the values `finish` returns.
    pub finish: Vec<u8>,
}

const KIND_WEIGHTS: [(Kind, u64); 25] = [
    (Kind::Int2, 12),
    (Kind::Int1, 3),
    (Kind::Float2, 4),
    (Kind::Float1, 1),
    (Kind::Cast, 2),
    (Kind::Signext, 1),
    (Kind::Identity, 6),
    (Kind::Repeat, 7),
    (Kind::Ovf, 3),
    (Kind::Elidable, 7),
    (Kind::ElidableAgain, 5),
    (Kind::Exact, 3),
    (Kind::Guard, 10),
    (Kind::GuardAgain, 3),
    (Kind::Load, 8),
    (Kind::Store, 6),
    (Kind::Reload, 5),
    (Kind::Restore, 3),
    (Kind::Item, 5),
    (Kind::New, 6),
    (Kind::NewArray, 2),
    (Kind::Call, 4),
    (Kind::PtrCmp, 2),
    (Kind::Promote, 1),
    (Kind::Label, 0),
];

impl Step {
    /// A random step (never a label).
    pub fn random(r: &mut Rng) -> Step {
        let total: u64 = KIND_WEIGHTS.iter().map(|k| k.1).sum();
        let mut pick = r.below(total);
        let mut kind = Kind::Int2;
        for &(k, w) in &KIND_WEIGHTS {
            if pick < w {
                kind = k;
                break;
            }
            pick -= w;
        }
        let fail_pct = match kind {
            Kind::Guard | Kind::Ovf | Kind::Promote => 6,
            Kind::Item | Kind::PtrCmp | Kind::Repeat | Kind::ElidableAgain => 50,
            _ => 0,
        };
        Step {
            kind,
            a: Arg::random(r),
            b: Arg::random(r),
            c: Arg::random(r),
            x: match kind {
                Kind::Repeat
                | Kind::ElidableAgain
                | Kind::Exact
                | Kind::GuardAgain
                | Kind::Load
                | Kind::Store
                | Kind::Reload
                | Kind::Restore
                | Kind::Item
                | Kind::PtrCmp
                | Kind::Promote => r.recent(),
                _ => r.below(256) as u8,
            },
            y: match kind {
                Kind::Call | Kind::PtrCmp => r.recent(),
                _ => r.below(256) as u8,
            },
            fail: r.chance(fail_pct),
            resume: ResumeSpec::random(r),
        }
    }

    /// A label step.
    pub fn label() -> Step {
        Step {
            kind: Kind::Label,
            a: Arg::Imm(0),
            b: Arg::Imm(0),
            c: Arg::Imm(0),
            x: 0,
            y: 0,
            fail: false,
            resume: ResumeSpec::default(),
        }
    }

    /// Simpler versions of this step, each changing one field.
    pub fn simpler(&self) -> Vec<Step> {
        let mut out = Vec::new();
        let with = |f: &dyn Fn(&mut Step)| {
            let mut s = self.clone();
            f(&mut s);
            s
        };
        if self.fail {
            out.push(with(&|s| s.fail = false));
        }
        for r in self.resume.simpler() {
            out.push(with(&|s| s.resume = r.clone()));
        }
        for a in self.a.simpler() {
            out.push(with(&|s| s.a = a));
        }
        for b in self.b.simpler() {
            out.push(with(&|s| s.b = b));
        }
        for c in self.c.simpler() {
            out.push(with(&|s| s.c = c));
        }
        if self.x != 0 {
            out.push(with(&|s| s.x = 0));
            if self.x > 1 {
                out.push(with(&|s| s.x /= 2));
            }
        }
        if self.y != 0 {
            out.push(with(&|s| s.y = 0));
            if self.y > 1 {
                out.push(with(&|s| s.y /= 2));
            }
        }
        out
    }
}

impl Case {
    /// A random case of `steps` steps from `seed` (the same seed and size give the same case).
    pub fn random(seed: u64, steps: usize) -> Case {
        let mut r = Rng::new(seed);
        let nobj = 1 + r.below(4) as usize;
        let objs = (0..nobj)
            .map(|_| ObjSpec {
                ints: std::array::from_fn(|_| r.int()),
                f: r.float(),
                next: r.below(nobj as u64) as usize,
                imm: r.int(),
            })
            .collect();
        let heap = HeapSpec {
            objs,
            arr: std::array::from_fn(|_| if r.chance(50) { r.int() } else { 0 }),
        };
        let shape = match r.below(10) {
            0..=4 => Shape::Straight,
            5..=6 => Shape::LoopInputs,
            _ => Shape::LoopLabel,
        };
        let mut list: Vec<Step> = (0..steps).map(|_| Step::random(&mut r)).collect();
        if shape == Shape::LoopLabel {
            let at = r.below(list.len() as u64 + 1) as usize;
            list.insert(at, Step::label());
        }
        Case {
            heap,
            ref_inputs: (0..r.below(4)).map(|_| r.below(8) as u8).collect(),
            arr_input: r.chance(60),
            int_inputs: (0..r.below(5)).map(|_| r.int()).collect(),
            float_inputs: (0..r.below(3)).map(|_| r.float()).collect(),
            shape,
            loop_args: (0..1 + r.below(6))
                .map(|_| LoopArg {
                    sel: r.recent(),
                    varying: r.chance(60),
                    back: r.recent(),
                })
                .collect(),
            iterations: 1 + r.below(12) as u8,
            invalidated: r.chance(4),
            steps: list,
            finish: (0..r.below(5)).map(|_| r.recent()).collect(),
        }
    }

    /// Simpler cases, biggest simplifications first.
    pub fn simpler(&self) -> Vec<Case> {
        let mut out = Vec::new();
        let with = |f: &dyn Fn(&mut Case)| {
            let mut c = self.clone();
            f(&mut c);
            c
        };
        // Remove chunks of steps: halves, quarters, ..., single steps.
        let n = self.steps.len();
        let mut size = n;
        while size > 0 {
            let mut start = 0;
            while start < n {
                let end = (start + size).min(n);
                out.push(with(&|c| {
                    c.steps.drain(start..end);
                }));
                start += size;
            }
            size /= 2;
        }
        if self.shape != Shape::Straight {
            out.push(with(&|c| c.shape = Shape::Straight));
        }
        if self.shape == Shape::LoopLabel {
            out.push(with(&|c| c.shape = Shape::LoopInputs));
        }
        if self.iterations > 1 {
            out.push(with(&|c| c.iterations = 1));
            out.push(with(&|c| c.iterations /= 2));
        }
        if self.invalidated {
            out.push(with(&|c| c.invalidated = false));
        }
        for k in 0..self.finish.len() {
            out.push(with(&|c| {
                c.finish.remove(k);
            }));
        }
        for k in 0..self.loop_args.len() {
            out.push(with(&|c| {
                c.loop_args.remove(k);
            }));
            if self.loop_args[k].varying {
                out.push(with(&|c| c.loop_args[k].varying = false));
            }
        }
        for k in 0..self.ref_inputs.len() {
            out.push(with(&|c| {
                c.ref_inputs.remove(k);
            }));
        }
        if self.arr_input {
            out.push(with(&|c| c.arr_input = false));
        }
        for k in 0..self.int_inputs.len() {
            out.push(with(&|c| {
                c.int_inputs.remove(k);
            }));
            if self.int_inputs[k] != 0 {
                out.push(with(&|c| c.int_inputs[k] = 0));
            }
        }
        for k in 0..self.float_inputs.len() {
            out.push(with(&|c| {
                c.float_inputs.remove(k);
            }));
            if self.float_inputs[k].to_bits() != 0 {
                out.push(with(&|c| c.float_inputs[k] = 0.0));
            }
        }
        if self.heap.objs.len() > 1 {
            out.push(with(&|c| {
                c.heap.objs.pop();
            }));
        }
        for k in 0..self.heap.objs.len() {
            let o = &self.heap.objs[k];
            if o.ints != [0; 8] || o.f.to_bits() != 0 || o.imm != 0 {
                out.push(with(&|c| {
                    let o = &mut c.heap.objs[k];
                    o.ints = [0; 8];
                    o.f = 0.0;
                    o.imm = 0;
                }));
            }
        }
        if self.heap.arr != [0; ARR_LEN] {
            out.push(with(&|c| c.heap.arr = [0; ARR_LEN]));
        }
        for (k, s) in self.steps.iter().enumerate() {
            for simpler in s.simpler() {
                out.push(with(&|c| c.steps[k] = simpler.clone()));
            }
        }
        out
    }
}

impl Arbitrary for Case {
    /// A case of up to `g.size()` steps.
    fn arbitrary(g: &mut Gen) -> Case {
        let seed = u64::arbitrary(g);
        let steps = 1 + (u64::arbitrary(g) % g.size().max(1) as u64) as usize;
        Case::random(seed, steps)
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Case>> {
        Box::new(self.simpler().into_iter())
    }
}
