//! The builder's steps: how each [`Kind`] of recipe step becomes ops, using the builder's
//! emitting and simulating primitives (in the parent module). Each step resolves its operands
//! against what exists at that point and does nothing when it has nothing to work on.

use super::{pick, Builder, Class, Loc};
use crate::ir::{Flags, Op, OpRef, Opcode, Type, Value};
use crate::testing::funcs::{self, FUNCS};
use crate::testing::heap::{ARR_LEN, FIELDS, IMM, NEXT};
use crate::testing::recipe::{Arg, Kind, Step};

const INT2: [Opcode; 21] = {
    use Opcode::*;
    [
        IntAdd,
        IntSub,
        IntMul,
        IntFloorDiv,
        IntMod,
        IntAnd,
        IntOr,
        IntXor,
        IntLshift,
        IntRshift,
        UintRshift,
        IntLt,
        IntLe,
        IntEq,
        IntNe,
        IntGt,
        IntGe,
        UintLt,
        UintLe,
        UintGt,
        UintGe,
    ]
};
const INT_CMP: [Opcode; 10] = {
    use Opcode::*;
    [
        IntLt, IntLe, IntEq, IntNe, IntGt, IntGe, UintLt, UintLe, UintGt, UintGe,
    ]
};
const INT1: [Opcode; 4] = [
    Opcode::IntNeg,
    Opcode::IntInvert,
    Opcode::IntIsZero,
    Opcode::IntIsTrue,
];
const FLOAT2: [Opcode; 10] = {
    use Opcode::*;
    [
        FloatAdd,
        FloatSub,
        FloatMul,
        FloatTrueDiv,
        FloatLt,
        FloatLe,
        FloatEq,
        FloatNe,
        FloatGt,
        FloatGe,
    ]
};
const FLOAT_CMP: [Opcode; 6] = {
    use Opcode::*;
    [FloatLt, FloatLe, FloatEq, FloatNe, FloatGt, FloatGe]
};
const OVF: [Opcode; 3] = [Opcode::IntAddOvf, Opcode::IntSubOvf, Opcode::IntMulOvf];

impl Builder<'_> {
    pub(super) fn step(&mut self, s: &Step) {
        use Opcode::*;
        match s.kind {
            Kind::Int2 => {
                let (a, b) = (self.int(s.a), self.int(s.b));
                self.op(INT2[s.x as usize % INT2.len()], &[a, b]);
            }
            Kind::Int1 => {
                let a = self.int(s.a);
                self.op(INT1[s.x as usize % INT1.len()], &[a]);
            }
            Kind::Float2 => {
                let (a, b) = (self.float(s.a), self.float(s.b));
                self.op(FLOAT2[s.x as usize % FLOAT2.len()], &[a, b]);
            }
            Kind::Float1 => {
                let a = self.float(s.a);
                self.op(if s.x & 1 == 0 { FloatNeg } else { FloatAbs }, &[a]);
            }
            Kind::Cast => match s.x % 5 {
                0 => {
                    let a = self.int(s.a);
                    self.op(CastIntToFloat, &[a]);
                }
                1 => {
                    let a = self.float(s.a);
                    self.op(CastFloatToInt, &[a]);
                }
                2 => {
                    let a = self.float(s.a);
                    self.op(FloatToBits, &[a]);
                }
                3 => {
                    let a = self.int(s.a);
                    self.op(FloatFromBits, &[a]);
                }
                _ => {
                    // Only addresses that are the same on every run become integers.
                    let fixed: Vec<OpRef> = self
                        .objs
                        .iter()
                        .copied()
                        .filter(|&r| self.sim(r).inv)
                        .collect();
                    if let Some(p) = pick(&fixed, s.y) {
                        let i = self.op(CastPtrToInt, &[p]);
                        self.op(CastIntToPtr, &[i]);
                    }
                }
            },
            Kind::Signext => {
                let a = self.int(s.a);
                let w = self.t.int([1, 2, 4, 8][s.x as usize % 4]);
                self.op(IntSignext, &[a, w]);
            }
            Kind::Identity => self.identity(s),
            Kind::Repeat => {
                if let Some(i) = pick(&self.pure_ops, s.x) {
                    let mut op = self.t.ops[i].clone();
                    // An address becomes an integer only while it is the same on every run:
                    // a cast repeated after the label may see a loop-carried object the trace
                    // allocated (seed 1008 stored its low byte).
                    if op.opcode == CastPtrToInt && !self.sim(op.args[0]).inv {
                        return;
                    }
                    if s.fail && op.opcode.flags().has(Flags::COMMUTATIVE) {
                        op.args.swap(0, 1);
                    }
                    self.emit(op);
                }
            }
            Kind::Ovf => {
                let (a, b) = (self.int(s.a), self.int(s.b));
                self.op(OVF[s.x as usize % 3], &[a, b]);
                let opcode = if self.overflowed != s.fail {
                    GuardOverflow
                } else {
                    GuardNoOverflow
                };
                self.guard(opcode, &[], &s.resume);
            }
            Kind::Elidable => self.elidable(s),
            Kind::ElidableAgain => {
                if let Some(i) = pick(&self.pure_calls, s.x) {
                    let mut op = self.t.ops[i].clone();
                    let res = OpRef::op(i);
                    if s.fail && op.args.len() > 1 && self.t.type_of(op.args[1]) == op.ty() {
                        op.args[1] = res;
                    }
                    self.emit(op);
                }
            }
            Kind::Exact => {
                let fixed: Vec<OpRef> = self
                    .all
                    .iter()
                    .copied()
                    .filter(|&r| {
                        let s = self.sim(r);
                        s.inv && matches!(s.class, Class::Int | Class::Float | Class::Obj)
                    })
                    .collect();
                if let Some(v) = pick(&fixed, s.x).filter(|_| !self.past_failure) {
                    let c = self.t.constant(self.sim(v).v);
                    self.op(RecordExactValue, &[v, c]);
                }
            }
            Kind::Guard => self.guard_step(s),
            Kind::GuardAgain => {
                if let Some(i) = pick(&self.guards, s.x) {
                    let op = self.t.ops[i].clone();
                    self.guard(op.opcode, &op.args, &s.resume);
                }
            }
            Kind::Load => {
                if let Some(p) = pick(&self.objs, s.x) {
                    let f = s.y as usize % FIELDS.len();
                    self.op_d(Opcode::getfield(FIELDS[f].kind), &[p], self.d.fields[f]);
                    self.locs.push(Loc::Field(p, f));
                }
            }
            Kind::Store => {
                if let Some(p) = pick(&self.objs, s.x) {
                    let f = s.y as usize % (FIELDS.len() - 1);
                    self.store_field(p, f, s.a);
                }
            }
            Kind::Reload => match pick(&self.locs, s.x) {
                Some(Loc::Field(p, f)) => {
                    self.op_d(Opcode::getfield(FIELDS[f].kind), &[p], self.d.fields[f]);
                }
                Some(Loc::Item(a, i, d)) => {
                    self.op_d(GetarrayitemI, &[a, i], d);
                }
                None => {}
            },
            Kind::Restore => match pick(&self.locs, s.x) {
                Some(Loc::Field(p, f)) if f != IMM => self.store_field(p, f, s.a),
                Some(Loc::Item(a, i, d)) => {
                    let v = self.int(s.a);
                    self.op_d(Setarrayitem, &[a, i, v], d);
                }
                _ => {}
            },
            Kind::Item if (s.y / 4) % 4 == 3 => self.interior(s),
            Kind::Item => self.item(s),
            Kind::New => self.new_obj(s),
            Kind::NewArray => {
                let descr = if s.y % 2 == 1 {
                    self.d.bytes
                } else {
                    self.d.arr
                };
                let len = if s.y & 0x10 != 0 {
                    // A computed length, the same on every run.
                    let fixed: Vec<OpRef> = self
                        .ints
                        .iter()
                        .copied()
                        .filter(|&r| self.sim(r).inv)
                        .collect();
                    match pick(&fixed, s.x) {
                        Some(v) => {
                            let m = self.t.int(15);
                            self.op(IntAnd, &[v, m])
                        }
                        None => self.t.int(s.x as i64 % 16 + 1),
                    }
                } else {
                    self.t.int(s.x as i64 % 16 + 1)
                };
                let a = self.op_d(NewArray, &[len], descr);
                let n = self.sim(len).v.int();
                for k in 0..(s.y as i64 / 2 % 3).min(n) {
                    let i = self.t.int(k);
                    let v = self.int(s.a);
                    self.op_d(Setarrayitem, &[a, i, v], descr);
                }
            }
            Kind::Call => self.residual(s),
            Kind::PtrCmp => {
                if let (Some(a), Some(b)) = (pick(&self.objs, s.x), pick(&self.objs, s.y)) {
                    self.op(if s.fail { PtrNe } else { PtrEq }, &[a, b]);
                }
            }
            Kind::Promote => {
                if let Some(p) = pick(&self.objs, s.x) {
                    let n = self.heap.num_objs();
                    if let Some(i) = self.heap.root_index(self.sim(p).v.addr()) {
                        let target = if s.fail { (i + 1) % n } else { i };
                        if target != i || !s.fail {
                            let c = self.t.ptr(self.heap.obj(target));
                            self.guard(GuardValue, &[p, c], &s.resume);
                        }
                    }
                }
            }
            Kind::Label => self.label(),
        }
    }

    fn store_field(&mut self, p: OpRef, f: usize, a: Arg) {
        debug_assert!(f != IMM, "imm is written only at initialization");
        if let Some(v) = self.value_of_kind(FIELDS[f].kind, a) {
            self.op_d(Opcode::Setfield, &[p, v], self.d.fields[f]);
            self.locs.push(Loc::Field(p, f));
        }
    }

    fn identity(&mut self, s: &Step) {
        use Opcode::*;
        let a = self.int(s.a);
        let c = |b: &mut Self, i: i64| b.t.int(i);
        match s.x % 30 {
            0 => {
                let z = c(self, 0);
                self.op(IntAdd, &[a, z]);
            }
            1 => {
                let z = c(self, 0);
                self.op(IntAdd, &[z, a]);
            }
            2 => {
                let z = c(self, 0);
                self.op(IntSub, &[a, z]);
            }
            3 => {
                let one = c(self, 1);
                self.op(IntMul, &[a, one]);
            }
            4 => {
                let one = c(self, 1);
                self.op(IntMul, &[one, a]);
            }
            5 => {
                let z = c(self, 0);
                self.op(IntOr, &[a, z]);
            }
            6 => {
                let m = c(self, -1);
                self.op(IntAnd, &[a, m]);
            }
            7 => {
                let z = c(self, 0);
                self.op(IntXor, &[a, z]);
            }
            8 => {
                let z = c(self, 0);
                self.op(IntLshift, &[a, z]);
            }
            9 => {
                let z = c(self, 64);
                self.op(IntRshift, &[a, z]);
            }
            10 => {
                self.op(SameAsI, &[a]);
            }
            11 => {
                self.op(IntSub, &[a, a]);
            }
            12 => {
                self.op(IntXor, &[a, a]);
            }
            13 => {
                self.op(IntEq, &[a, a]);
            }
            14 => {
                self.op(IntLt, &[a, a]);
            }
            15 => {
                self.op(IntLe, &[a, a]);
            }
            16 => {
                self.op(UintGt, &[a, a]);
            }
            17 => {
                let n = self.op(IntNeg, &[a]);
                self.op(IntNeg, &[n]);
            }
            18 => {
                let n = self.op(IntInvert, &[a]);
                self.op(IntInvert, &[n]);
            }
            19 => {
                let z = c(self, 0);
                self.op(IntMul, &[a, z]);
            }
            20 => {
                let z = c(self, 0);
                self.op(IntAnd, &[z, a]);
            }
            21 => {
                // Constants only: folds all the way.
                let (x, y) = (c(self, s.y as i64), c(self, s.x as i64 - 100));
                let m = self.op(IntMul, &[x, y]);
                let k = c(self, 3);
                self.op(IntAdd, &[m, k]);
            }
            22 => {
                let f = self.float(s.b);
                self.op(SameAsF, &[f]);
            }
            23 => {
                if let Some(p) = self.obj(s.b) {
                    self.op(SameAsR, &[p]);
                }
            }
            24 => {
                let f = self.float(s.b);
                let z = self.t.float(0.0);
                self.op(FloatAdd, &[f, z]);
            }
            25 => {
                let f = self.float(s.b);
                let one = self.t.float(1.0);
                self.op(FloatMul, &[f, one]);
            }
            26 => {
                let z = self.op(IntIsZero, &[a]);
                self.op(IntIsTrue, &[z]);
            }
            27 => {
                let b = self.int(s.b);
                let d = self.op(IntSub, &[a, b]);
                self.op(IntAdd, &[d, b]);
            }
            28 => {
                let b = self.int(s.b);
                let cmp = self.op(IntLt, &[a, b]);
                self.op(IntLt, &[a, b]);
                self.op(IntGe, &[a, b]);
                self.op(IntIsZero, &[cmp]);
            }
            _ => {
                let w = c(self, 8);
                self.op(IntSignext, &[a, w]);
            }
        }
    }

    fn elidable(&mut self, s: &Step) {
        let f = funcs::ELIDABLE[s.x as usize % funcs::ELIDABLE.len()];
        let mut args = Vec::new();
        for (k, &ty) in FUNCS[f].args.iter().enumerate() {
            let a = if k == 0 { s.a } else { s.b };
            match ty {
                Type::Int => args.push(self.int(a)),
                Type::Float => args.push(self.float(a)),
                _ => match self.obj(a) {
                    Some(p) => args.push(p),
                    None => return,
                },
            }
        }
        let fact = s.y % 4;
        if fact == 3 && (f == funcs::NEG || f == funcs::LOWER) {
            // A fact stated before any call, about the result of a pure op.
            let x = args[0];
            let y = if f == funcs::NEG {
                self.op(Opcode::IntNeg, &[x])
            } else {
                let m = self.t.int(!0x2020_2020_2020_2020);
                self.op(Opcode::IntAnd, &[x, m])
            };
            if f == funcs::NEG {
                self.known_result(x, f, &[y]);
                self.call(f, &[y]);
            } else {
                self.known_result(y, f, &[x]);
                self.call(f, &[x]);
            }
            return;
        }
        let r = self.call(f, &args);
        if fact == 0 {
            return;
        }
        match f {
            funcs::NEG => self.known_result(args[0], f, &[r]),
            funcs::LOWER | funcs::WABS => self.known_result(r, f, &[r]),
            _ => self.known_result(r, f, &args),
        }
        if fact >= 2 {
            match f {
                funcs::NEG | funcs::LOWER | funcs::WABS => self.call(f, &[r]),
                _ => self.call(f, &args),
            };
        }
    }

    fn guard_step(&mut self, s: &Step) {
        use Opcode::*;
        match s.x % 9 {
            0 | 1 => {
                let c = self.int(s.a);
                self.guard_cond(c, s.fail, &s.resume);
            }
            2 => {
                let (a, b) = (self.int(s.a), self.int(s.b));
                let c = self.op(INT_CMP[s.y as usize % INT_CMP.len()], &[a, b]);
                self.guard_cond(c, s.fail, &s.resume);
            }
            3 => {
                // Bounds-check shapes: `x + k <u n` and `x + k < 0` for small offsets k, so that
                // one check may imply another (the bounds stage's relations).
                let (a, b) = (self.int(s.a), self.int(s.b));
                let zero = self.t.int(0);
                let nonneg = self.op(IntLt, &[a, zero]);
                self.guard_cond(nonneg, false, &s.resume);
                for k in [i64::from(s.y % 8) - 3, i64::from(s.y / 8 % 8) - 3] {
                    let k = self.t.int(k);
                    let ak = self.op(IntAdd, &[a, k]);
                    let c = if s.x & 16 == 0 {
                        self.op(UintLt, &[ak, b])
                    } else {
                        self.op(IntLt, &[ak, zero])
                    };
                    self.guard_cond(c, s.fail, &s.resume);
                }
            }
            4 => {
                let a = self.int(s.a);
                let v = self.sim(a).v.int();
                // Failing on purpose must not claim an integer is a bogus address: the
                // optimizer may load from a constant pointer at optimization time.
                let wrong = match self.heap.root_index(v as usize) {
                    Some(i) if self.heap.num_objs() > 1 => {
                        Some(self.heap.obj((i + 1) % self.heap.num_objs()) as i64)
                    }
                    Some(_) => None,
                    None => Some(v.wrapping_add(1)),
                };
                let c = match (s.fail, wrong) {
                    (false, _) => Some(v),
                    (true, w) => w,
                };
                if let Some(c) = c {
                    let c = self.t.int(c);
                    self.guard(GuardValue, &[a, c], &s.resume);
                }
            }
            5 => {
                // Null tests. A guard failing on purpose says "not null" of a null reference,
                // never "null" of an object: a false null fact would let the optimizer call
                // or load through a null pointer at optimization time.
                let null = if s.y & 2 == 0 {
                    self.t.ptr(0)
                } else {
                    let z = self.t.ptr(0);
                    self.op(SameAsR, &[z])
                };
                if s.fail {
                    self.guard(GuardNonnull, &[null], &s.resume);
                } else if s.y & 1 == 0 {
                    self.guard(GuardIsnull, &[null], &s.resume);
                } else if let Some(p) = self.obj(s.a).or_else(|| pick(&self.arrays, s.y)) {
                    self.guard(GuardNonnull, &[p], &s.resume);
                }
            }
            6 => {
                self.guard(GuardNotInvalidated, &[], &s.resume);
            }
            7 => {
                let (a, b) = (self.float(s.a), self.float(s.b));
                let c = self.op(FLOAT_CMP[s.y as usize % FLOAT_CMP.len()], &[a, b]);
                self.guard_cond(c, s.fail, &s.resume);
            }
            _ => {
                let a = self.float(s.a);
                let v = self.sim(a).v.float();
                let c = self.t.float(if s.fail { v + 1.0 } else { v });
                if self.sim(c).v != Value::Float(v) || !s.fail {
                    self.guard(GuardValue, &[a, c], &s.resume);
                }
            }
        }
    }

    /// A reference into the middle of a heap object (at `a64` or `b64`) or of a heap array (at
    /// an item), read or written through `w64`: the same memory under another descriptor, of
    /// the wide class that the precise classes of `a64`, `b64` and the items belong to.
    fn interior(&mut self, s: &Step) {
        use Opcode::*;
        let fixed = |list: &[OpRef], b: &Self| -> Vec<OpRef> {
            list.iter().copied().filter(|&r| b.sim(r).inv).collect()
        };
        let objs = fixed(&self.objs, self);
        let arrays: Vec<OpRef> = fixed(&self.arrays, self)
            .into_iter()
            .filter(|&a| matches!(self.sim(a).class, Class::Array { descr, len } if descr == self.d.arr && len > 0))
            .collect();
        let (base, offset) = if s.y & 1 == 0 {
            let Some(p) = pick(&objs, s.x) else { return };
            let offset = if s.y & 2 == 0 {
                std::mem::offset_of!(crate::testing::heap::Obj, a64)
            } else {
                std::mem::offset_of!(crate::testing::heap::Obj, b64)
            };
            (p, offset as i64)
        } else {
            let Some(a) = pick(&arrays, s.x) else { return };
            let Class::Array { len, .. } = self.sim(a).class else {
                unreachable!("filtered above");
            };
            let k = match s.a {
                Arg::Val(k) => k as i64,
                Arg::Imm(c) => c,
            };
            (a, 8 * k.rem_euclid(len as i64))
        };
        let b = self.op(CastPtrToInt, &[base]);
        // The offset as is, or as `(v + c) << 3` for an integer `v` the same on every run
        // (`c` chosen from its value so that the sum is the offset): the fold stage moves
        // `c << 3` out, and the heap stage finds the object by the integer base `b + (v << 3)`.
        let scaled: Vec<OpRef> = self
            .ints
            .iter()
            .copied()
            .filter(|&r| self.sim(r).inv && !self.sim(r).addr)
            .collect();
        let at = match pick(&scaled, s.x).filter(|_| s.y & 4 != 0 && offset % 8 == 0) {
            Some(v) => {
                let n = self.sim(v).v.int();
                let c = self.t.int((offset / 8).wrapping_sub(n));
                let sum = self.op(IntAdd, &[v, c]);
                let three = self.t.int(3);
                let shifted = self.op(IntLshift, &[sum, three]);
                let args = if s.y & 8 == 0 {
                    [b, shifted]
                } else {
                    [shifted, b]
                };
                self.op(IntAdd, &args)
            }
            None => {
                let o = self.t.int(offset);
                self.op(IntAdd, &[b, o])
            }
        };
        let q = self.op(CastIntToPtr, &[at]);
        if s.fail {
            let v = self.int(s.b);
            self.op_d(Setfield, &[q, v], self.d.w64);
        } else {
            self.op_d(GetfieldI, &[q], self.d.w64);
        }
    }

    fn item(&mut self, s: &Step) {
        use Opcode::*;
        let Some(arr) = pick(&self.arrays, s.x) else {
            return;
        };
        let Class::Array { descr, len } = self.sim(arr).class else {
            unreachable!("arrays are of class Array");
        };
        if len == 0 {
            return;
        }
        let konst = |a: Arg| match a {
            Arg::Val(k) => k as i64,
            Arg::Imm(c) => c,
        };
        let mut exec = true;
        let x = self.int(s.a);
        // A bounds check on an address-derived index that fails would be skipped: mask it.
        let mode = if s.y % 4 == 2 && self.sim(x).addr {
            1
        } else {
            s.y % 4
        };
        // The largest mask 2^k - 1 below `len`.
        let mask = ((len as u64 + 1).next_power_of_two() / 2 - 1) as i64;
        let idx = match mode {
            0 => self.t.int(konst(s.a).rem_euclid(len as i64)),
            1 => {
                let m = self.t.int(mask);
                self.op(IntAnd, &[x, m])
            }
            3 => {
                // `(x & m) + c`, in bounds: items at a base plus different constants.
                let m = self.t.int(mask / 2);
                let base = self.op(IntAnd, &[x, m]);
                let c = self.t.int(konst(s.c).rem_euclid(len as i64 - mask / 2));
                self.op(IntAdd, &[base, c])
            }
            _ => {
                let n = self.t.int(len as i64);
                let ok = self.op(UintLt, &[x, n]);
                exec = self.sim(ok).v.int() != 0;
                self.guard(GuardTrue, &[ok], &s.resume);
                x
            }
        };
        // An int array's items also as an unseen `Vec`'s: one memory, two alias classes.
        let descr = if descr == self.d.arr && s.y & 16 != 0 {
            self.d.any_items
        } else {
            descr
        };
        if s.fail {
            let v = self.int(s.b);
            self.emit_sim(
                Op::new(Setarrayitem, &[arr, idx, v]).with_descr(descr),
                exec,
            );
        } else {
            self.emit_sim(Op::new(GetarrayitemI, &[arr, idx]).with_descr(descr), exec);
        }
        if exec {
            self.locs.push(Loc::Item(arr, idx, descr));
        }
    }

    fn new_obj(&mut self, s: &Step) {
        use Opcode::*;
        let p = self.op_d(New, &[], self.d.obj);
        // `next` first: objects always point to live objects.
        let next = self.obj(s.a).expect("`p` itself is an object");
        self.op_d(Setfield, &[p, next], self.d.fields[NEXT]);
        if s.x & 1 != 0 {
            let v = self.int(s.b);
            self.op_d(Setfield, &[p, v], self.d.fields[IMM]);
        }
        for (bit, f) in [(2, 6), (4, 8), (8, 0), (16, 5)] {
            if s.x & bit != 0 {
                let arg = if bit == 16 { s.b } else { s.c };
                if let Some(v) = self.value_of_kind(FIELDS[f].kind, arg) {
                    self.op_d(Setfield, &[p, v], self.d.fields[f]);
                }
            }
        }
        match s.y % 4 {
            1 => {
                // Escapes into another object (maybe a heap object, maybe a fresh one).
                let q = self.obj(s.c).expect("there is an object");
                self.op_d(Setfield, &[q, p], self.d.fields[NEXT]);
            }
            2 => {
                let x = self.int(s.c);
                match s.y / 4 % 3 {
                    0 => self.call(funcs::SET_A64, &[p, x]),
                    1 => self.call(funcs::MESS, &[p, x]),
                    _ => self.call(funcs::READ_OBJ, &[p]),
                };
            }
            _ => {}
        }
    }

    fn residual(&mut self, s: &Step) {
        let f = funcs::RESIDUAL[s.x as usize % funcs::RESIDUAL.len()];
        let x = self.int(s.a);
        let p = pick(&self.objs, s.y);
        match (f, p) {
            (funcs::SET_A64 | funcs::MESS, Some(p)) => {
                self.call(f, &[p, x]);
            }
            (funcs::READ_OBJ | funcs::NEXT_OF, Some(p)) => {
                self.call(f, &[p]);
            }
            (funcs::HASH, _) => {
                self.call(f, &[x]);
            }
            (funcs::MESS_ARR, _) => {
                let big: Vec<OpRef> = self
                    .arrays
                    .iter()
                    .copied()
                    .filter(|&a| {
                        matches!(self.sim(a).class, Class::Array { descr, len }
                            if descr == self.d.arr && len as usize >= ARR_LEN)
                    })
                    .collect();
                if let Some(a) = pick(&big, s.y) {
                    self.call(f, &[a, x]);
                }
            }
            _ => {}
        }
    }
}
