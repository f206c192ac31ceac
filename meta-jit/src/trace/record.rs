//! How the tracer records each data op of jitcode as trace IR (arithmetic and casts in
//! [`super::arith`]): loads, stores, their descriptors, calls, hints. Every recorded value is computed twice: by the runner (the concrete execution) and by
//! [`crate::ir::semantics`] on the recorded ops; the two must agree, which is asserted, so a
//! wrong mapping shows up in the first test that traces it rather than as a miscompile.
#![deny(unsafe_code)]

use super::hints::HintCheck;
use super::{from_ir, to_ir, Abort, Tracer};
use crate::check::CheckedBy;
use crate::ir::semantics::eval_pure;
use crate::ir::{self, Access, DescrKind, Effects, Op as IrOp, OpArgs, OpRef, Opcode, Type};
use crate::jitcode::{
    hintcheck, ArrayDescr, CallDescr, Cmp, Effect, FieldDescr, FloatBinOp, FloatUnOp, Kind, Op,
    Register, SizeDescr, Value,
};

/// A trace value with the concrete value it has now.
pub(super) type Tv = (OpRef, ir::Value);

/// The trace IR type of a register kind.
pub fn ir_type(k: Kind) -> Type {
    match k {
        Kind::Int => Type::Int,
        Kind::Float => Type::Float,
        Kind::Ref => Type::Ref,
    }
}

fn same(a: ir::Value, b: ir::Value) -> bool {
    match (a, b) {
        (ir::Value::Float(x), ir::Value::Float(y)) => {
            x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan()
        }
        _ => a == b,
    }
}

impl Tracer<'_> {
    pub(super) fn tv(&mut self, r: Register) -> Tv {
        (self.shadow(r), to_ir(self.value(r)))
    }

    pub(super) fn konst(&mut self, v: ir::Value) -> Tv {
        (self.trace.constant(v), v)
    }

    /// A pure op: folded when every argument is constant.
    pub(super) fn pure(&mut self, opcode: Opcode, args: &[Tv]) -> Tv {
        // Pure ops take one or two arguments: no vectors for them.
        let (mut vals, mut refs) = ([ir::Value::Int(0); 2], [OpRef::constant(0); 2]);
        let n = args.len();
        assert!(n <= 2, "{} takes {n} arguments", opcode.name());
        for (k, a) in args.iter().enumerate() {
            (refs[k], vals[k]) = *a;
        }
        let (vals, refs) = (&vals[..n], &refs[..n]);
        let v = eval_pure(opcode, vals).expect("a pure op");
        if args.iter().all(|a| a.0.is_const()) {
            return self.konst(v);
        }
        if let Some(r) = self.cache.pure(opcode, refs) {
            // A comparison a guard settled is a constant: the one this run computes.
            debug_assert!(
                self.trace.const_value(r).is_none_or(|c| c == v),
                "{} settled to {:?}, computes {v:?}",
                opcode.name(),
                self.trace.const_value(r)
            );
            return (r, v);
        }
        let r = self.trace.emit(opcode, refs);
        self.cache.computed(opcode, refs, r);
        (r, v)
    }

    /// A guard on values that hold now; nothing is recorded when they are constant or an
    /// earlier guard checked the same.
    pub(super) fn check(&mut self, opcode: Opcode, args: &[Tv]) {
        if args.iter().all(|a| a.0.is_const()) {
            return;
        }
        let refs: OpArgs = args.iter().map(|a| a.0).collect();
        if self.cache.new_guard(opcode, &refs) {
            self.guard(opcode, &refs);
            if let (Opcode::GuardTrue | Opcode::GuardFalse, [cond]) = (opcode, &refs[..]) {
                self.cache
                    .settled(&mut self.trace, *cond, opcode == Opcode::GuardTrue);
            }
        }
    }

    pub(super) fn int(&mut self, i: i64) -> Tv {
        self.konst(ir::Value::Int(i))
    }

    fn field_descr(&mut self, d: &'static FieldDescr) -> ir::DescrId {
        // The jitcode's descriptors live as long as the program: one lookup by address.
        let at = d as *const FieldDescr as usize;
        if let Some(&id) = self.descr_at.get(&at) {
            return id;
        }
        let made = made_descr(at, || {
            let kind = DescrKind::Field(ir::FieldDescr {
                offset: d.offset as u32,
                size: d.size,
                signed: d.signed,
                kind: ir_type(d.kind),
                immutable: d.immutable,
                quasi_immutable: d.quasi_immutable,
                vable: d.vable,
                length: d.length,
                alias: Some(alias_name(&d.class)),
            });
            (format!("{}_{}", d.name, d.offset), kind)
        });
        let id = self.clean_named_descr(&made.0, &made.1);
        self.descr_at.insert(at, id);
        id
    }

    fn size_descr(&mut self, d: &'static SizeDescr) -> ir::DescrId {
        let at = d as *const SizeDescr as usize;
        if let Some(&id) = self.descr_at.get(&at) {
            return id;
        }
        let made = made_descr(at, || {
            let kind = DescrKind::Size(ir::SizeDescr {
                size: d.size as u32,
                align: d.align as u32,
            });
            let short = d.name.rsplit("::").next().unwrap_or(&d.name);
            (format!("size_{short}"), kind)
        });
        let id = self.clean_named_descr(&made.0, &made.1);
        self.descr_at.insert(at, id);
        id
    }

    fn array_descr(&mut self, d: &'static ArrayDescr) -> ir::DescrId {
        let at = d as *const ArrayDescr as usize;
        if let Some(&id) = self.descr_at.get(&at) {
            return id;
        }
        let made = made_descr(at, || {
            let kind = DescrKind::Array(ir::ArrayDescr {
                base: 0,
                item_size: d.item.size,
                signed: d.item.signed,
                kind: ir_type(d.item.kind),
                vable: d.item.vable,
                alias: Some(alias_name(&d.item.class)),
            });
            (format!("{}_items{}", d.item.name, d.item_size), kind)
        });
        let id = self.clean_named_descr(&made.0, &made.1);
        self.descr_at.insert(at, id);
        id
    }

    /// A descriptor with a name unique to its contents (the trace's table is keyed by name).
    fn named_descr(&mut self, base: &str, kind: DescrKind) -> ir::DescrId {
        self.clean_named_descr(&clean_name(base), &kind)
    }

    /// [`Self::named_descr`] of a name already made of letters, digits and `_`.
    fn clean_named_descr(&mut self, base: &str, kind: &DescrKind) -> ir::DescrId {
        let mut name = base.to_string();
        let mut n = 1;
        loop {
            match self.field_descrs.get(&name) {
                // A bridge's trace starts with the descriptors of its parent's pending stores
                // and virtual objects, under the parent's names: a name taken there for
                // another descriptor is not this one (the parent numbered its names in its
                // own order of first use).
                None if self
                    .trace
                    .descrs
                    .iter()
                    .any(|d| d.name == name && d.kind != *kind) =>
                {
                    n += 1;
                    name = format!("{base}_{n}");
                }
                None => {
                    let id = self.trace.descr(&name, kind.clone());
                    self.field_descrs.insert(name, id);
                    return id;
                }
                Some(&id) if self.trace.get_descr(id).kind == *kind => return id,
                Some(_) => {
                    n += 1;
                    name = format!("{base}_{n}");
                }
            }
        }
    }

    pub(super) fn call_descr(&mut self, d: &CallDescr) -> (OpRef, ir::DescrId) {
        let f = self.trace.func(d.name, d.shim);
        if let Some(&id) = self.call_descrs.get(&d.shim) {
            return (f, id);
        }
        let kind = DescrKind::Call(ir::CallDescr {
            args: d.arg_kinds.iter().map(|&k| ir_type(k)).collect(),
            ret: d.result_kind.map_or(Type::Void, ir_type),
            effects: match d.effect {
                Effect::Elidable => Effects::elidable(),
                Effect::LoopInvariant => Effects::loop_invariant(),
                Effect::Residual => Effects::anything(),
                Effect::ResidualWritesNothing => Effects {
                    elidable: false,
                    reads: Access::Everything,
                    writes: Access::Nothing,
                    can_invalidate: false,
                    loop_invariant: false,
                },
            },
        });
        let id = self.named_descr(&format!("call_{}", d.name), kind);
        self.call_descrs.insert(d.shim, id);
        (f, id)
    }

    /// `base + index * size + offset` as a reference.
    fn address(&mut self, base: Tv, index: Option<(Tv, usize)>, offset: usize) -> Tv {
        let mut p = self.pure(Opcode::CastPtrToInt, &[base]);
        if let Some((i, size)) = index {
            let s = self.int(size as i64);
            let m = self.pure(Opcode::IntMul, &[i, s]);
            p = self.pure(Opcode::IntAdd, &[p, m]);
        }
        if offset != 0 {
            let o = self.int(offset as i64);
            p = self.pure(Opcode::IntAdd, &[p, o]);
        }
        self.pure(Opcode::CastIntToPtr, &[p])
    }

    fn load(&mut self, opcode: Opcode, args: &[Tv], d: ir::DescrId, v: Value) -> Tv {
        let refs: OpArgs = args.iter().map(|a| a.0).collect();
        (
            self.trace.push(IrOp::new(opcode, &refs).with_descr(d)),
            to_ir(v),
        )
    }

    fn store(&mut self, opcode: Opcode, args: &[Tv], d: ir::DescrId) {
        let refs: OpArgs = args.iter().map(|a| a.0).collect();
        self.trace.push(IrOp::new(opcode, &refs).with_descr(d));
        self.cache.stored(&self.trace, d);
    }

    /// Whether an array access is a plain one (scalars laid out back to back).
    fn plain_array(d: &ArrayDescr) -> bool {
        d.item.offset == 0 && usize::from(d.item.size) == d.item_size
    }

    /// The inputs of a data op, read before it executes (it may overwrite one of them), into
    /// `into` (emptied first).
    pub(super) fn inputs(&mut self, op: &Op, into: &mut Vec<Tv>) {
        into.clear();
        crate::jitcode::liveness::each_use(op, |r| into.push(self.tv(r)));
    }

    /// Records a data op the top frame has just executed concretely, from its `inputs`.
    pub(super) fn record(&mut self, op: &'static Op, uses: &[Tv]) -> Result<(), Abort> {
        let u = |k: usize| uses[k];
        let result: Option<(Register, Tv)> = match op {
            Op::Move { dst, .. } => Some((*dst, u(0))),
            Op::IntBinary {
                op,
                ty,
                overflow,
                dst,
                ..
            } => Some((*dst, self.int_binary(*op, *ty, *overflow, u(0), u(1)))),
            Op::IntUnary {
                op,
                ty,
                overflow,
                dst,
                ..
            } => Some((*dst, self.int_unary(*op, *ty, *overflow, u(0)))),
            Op::IntCompare {
                cmp, signed, dst, ..
            } => {
                use Cmp::*;
                let opc = match (cmp, signed) {
                    (Eq, _) => Opcode::IntEq,
                    (Ne, _) => Opcode::IntNe,
                    (Lt, true) => Opcode::IntLt,
                    (Le, true) => Opcode::IntLe,
                    (Gt, true) => Opcode::IntGt,
                    (Ge, true) => Opcode::IntGe,
                    (Lt, false) => Opcode::UintLt,
                    (Le, false) => Opcode::UintLe,
                    (Gt, false) => Opcode::UintGt,
                    (Ge, false) => Opcode::UintGe,
                };
                Some((*dst, self.pure(opc, &[u(0), u(1)])))
            }
            Op::IntCast { from, to, dst, .. } => Some((*dst, self.int_cast(*from, *to, u(0)))),
            Op::FloatBinary { op, dst, .. } => {
                let opc = match op {
                    FloatBinOp::Add => Opcode::FloatAdd,
                    FloatBinOp::Sub => Opcode::FloatSub,
                    FloatBinOp::Mul => Opcode::FloatMul,
                    FloatBinOp::Div => Opcode::FloatTrueDiv,
                    FloatBinOp::Rem => Opcode::FloatMod,
                };
                Some((*dst, self.pure(opc, &[u(0), u(1)])))
            }
            Op::FloatUnary { op, dst, .. } => {
                let opc = match op {
                    FloatUnOp::Neg => Opcode::FloatNeg,
                    FloatUnOp::Abs => Opcode::FloatAbs,
                };
                Some((*dst, self.pure(opc, &[u(0)])))
            }
            Op::FloatCompare { cmp, dst, .. } => {
                let opc = match cmp {
                    Cmp::Eq => Opcode::FloatEq,
                    Cmp::Ne => Opcode::FloatNe,
                    Cmp::Lt => Opcode::FloatLt,
                    Cmp::Le => Opcode::FloatLe,
                    Cmp::Gt => Opcode::FloatGt,
                    Cmp::Ge => Opcode::FloatGe,
                };
                Some((*dst, self.pure(opc, &[u(0), u(1)])))
            }
            Op::IntToFloat { from, dst, .. } => Some((*dst, self.int_to_float(*from, u(0)))),
            Op::FloatToInt { to, dst, .. } => Some((*dst, self.float_to_int(*to, u(0)))),
            Op::RefCompare { eq, dst, .. } => {
                let opc = if *eq { Opcode::PtrEq } else { Opcode::PtrNe };
                Some((*dst, self.pure(opc, &[u(0), u(1)])))
            }
            Op::RefAddr {
                dst, index, offset, ..
            } => {
                let idx = index.map(|(_, size)| (u(1), size));
                let r = self.address(u(0), idx, *offset);
                if r.0.is_const() {
                    self.fp.derive(from_ir(u(0).1), from_ir(r.1));
                }
                Some((*dst, r))
            }
            Op::New { dst, descr } => {
                // The runner allocated the object; the trace allocates its own.
                let d = self.size_descr(descr);
                let r = self.trace.push(IrOp::new(Opcode::New, &[]).with_descr(d));
                Some((*dst, (r, to_ir(self.value(*dst)))))
            }
            Op::GetField { dst, descr, .. } => {
                let v = self.value(*dst);
                let r = if u(0).0.is_const() && descr.immutable {
                    let base = from_ir(u(0).1);
                    let addr = base.addr().wrapping_add(descr.offset);
                    self.fp.load(base, addr, descr, v);
                    self.konst(to_ir(v))
                } else if u(0).0.is_const() && descr.quasi_immutable && u(0).1.addr() != 0 {
                    self.quasi_immutable_read(u(0), descr, v)
                } else {
                    let d = self.field_descr(descr);
                    match self.cache.field(d, u(0).0, to_ir(v)) {
                        Some(r) => (r, to_ir(v)),
                        None => {
                            let r = self.load(Opcode::getfield(ir_type(descr.kind)), &[u(0)], d, v);
                            self.cache.loaded(d, u(0).0, r.0, r.1);
                            r
                        }
                    }
                };
                Some((*dst, r))
            }
            Op::SetField { descr, .. } => {
                let d = self.field_descr(descr);
                self.store(Opcode::Setfield, &[u(0), u(1)], d);
                if descr.quasi_immutable {
                    self.quasi_immutable_write(u(0), descr)?;
                }
                None
            }
            Op::GetArrayItem { dst, descr, .. } => {
                let v = self.value(*dst);
                let ty = ir_type(descr.item.kind);
                let r = if u(0).0.is_const() && u(1).0.is_const() && descr.item.immutable {
                    let base = from_ir(u(0).1);
                    let addr = base
                        .addr()
                        .wrapping_add((u(1).1.int() as usize).wrapping_mul(descr.item_size))
                        .wrapping_add(descr.item.offset);
                    self.fp.load(base, addr, &descr.item, v);
                    self.konst(to_ir(v))
                } else if Self::plain_array(descr) {
                    let d = self.array_descr(descr);
                    match self.cache.item(d, u(0).0, u(1).0, to_ir(v)) {
                        Some(r) => (r, to_ir(v)),
                        None => {
                            let r = self.load(Opcode::getarrayitem(ty), &[u(0), u(1)], d, v);
                            self.cache.loaded_item(d, u(0).0, u(1).0, r.0, r.1);
                            r
                        }
                    }
                } else {
                    let p = self.address(u(0), Some((u(1), descr.item_size)), 0);
                    let d = self.field_descr(&descr.item);
                    self.load(Opcode::getfield(ty), &[p], d, v)
                };
                Some((*dst, r))
            }
            Op::SetArrayItem { descr, .. } => {
                if Self::plain_array(descr) {
                    let d = self.array_descr(descr);
                    self.store(Opcode::Setarrayitem, &[u(0), u(1), u(2)], d);
                } else {
                    let p = self.address(u(0), Some((u(1), descr.item_size)), 0);
                    let d = self.field_descr(&descr.item);
                    self.store(Opcode::Setfield, &[p, u(2)], d);
                }
                None
            }
            Op::CheckIndex { .. } => {
                let ok = self.pure(Opcode::UintLt, &[u(0), u(1)]);
                self.check(Opcode::GuardTrue, &[ok]);
                None
            }
            Op::Call { descr, dst, .. } => self.call(descr, uses, *dst),
            Op::RecordKnownResult { descr, site, .. } => {
                let args: Vec<Value> = uses[1..].iter().map(|a| from_ir(a.1)).collect();
                let claimed = from_ir(uses[0].1);
                hintcheck::known_result(CheckedBy::Tracer, site, descr, claimed, &args);
                if self.limits.check_hints {
                    self.compiled_hint_check(HintCheck::KnownResult(descr), site, uses);
                }
                let (fun, d) = self.call_descr(descr);
                let mut refs = vec![uses[0].0, fun];
                refs.extend(uses[1..].iter().map(|a| a.0));
                self.trace
                    .push(IrOp::new(Opcode::RecordKnownResult, &refs).with_descr(d));
                None
            }
            Op::RecordExactValue { reg, site, .. } => {
                let (v, c) = (u(0), u(1));
                hintcheck::exact_value(CheckedBy::Tracer, site, from_ir(v.1), from_ir(c.1));
                if self.limits.check_hints && !v.0.is_const() {
                    self.compiled_hint_check(HintCheck::ExactValue, site, uses);
                }
                if !v.0.is_const() {
                    self.trace.emit(Opcode::RecordExactValue, &[v.0, c.0]);
                }
                Some((*reg, c))
            }
            _ => unreachable!("control ops are the tracer's"),
        };
        if let Some((dst, r)) = result {
            let concrete = to_ir(self.value(dst));
            debug_assert!(
                same(r.1, concrete),
                "tracer bug: {op:?} recorded as a value {:?}, the runner computed {concrete:?}",
                r.1
            );
            self.set_shadow(dst, r.0);
        }
        Ok(())
    }

    /// Folds a read of a quasi-immutable field of a constant object (RPython's
    /// `quasiimmut_field` + `guard_not_invalidated`): the guard resumes at the read itself, so
    /// that after an invalidation the interpreter reads the field again.
    fn quasi_immutable_read(&mut self, base: Tv, descr: &'static FieldDescr, v: Value) -> Tv {
        let d = self.field_descr(descr);
        self.trace
            .push(IrOp::new(Opcode::QuasiimmutField, &[base.0]).with_descr(d));
        self.guard(Opcode::GuardNotInvalidated, &[]);
        let b = from_ir(base.1);
        self.fp
            .quasi(b, b.addr().wrapping_add(descr.offset), descr, v);
        self.konst(to_ir(v))
    }

    /// After a write of a quasi-immutable field (already stored and recorded): records the
    /// call that invalidates the code that folded it, and makes it for the write the tracer
    /// just performed. A trace that folded the field itself would be wrong from its first
    /// iteration on: it aborts.
    fn quasi_immutable_write(&mut self, base: Tv, descr: &'static FieldDescr) -> Result<(), Abort> {
        let p = self.address(base, None, descr.offset);
        let hook = crate::warm::quasi::written_from_jit as extern "C" fn(usize) as usize;
        let f = self.trace.func("quasi_immutable_written", hook);
        let kind = DescrKind::Call(ir::CallDescr {
            args: vec![Type::Ref],
            ret: Type::Void,
            effects: Effects::anything(),
        });
        let d = self.named_descr("call_quasi_immutable_written", kind);
        self.trace
            .push(IrOp::new(Opcode::CallN, &[f, p.0]).with_descr(d));
        let addr = p.1.addr();
        crate::warm::quasi::written_from_jit(addr);
        if self.fp.quasi_fields().contains(&addr) {
            return Err(Abort::Unsupported(format!(
                "the trace writes the quasi-immutable field `{}` it folded",
                descr.name
            )));
        }
        Ok(())
    }

    fn call(
        &mut self,
        descr: &CallDescr,
        args: &[Tv],
        dst: Option<Register>,
    ) -> Option<(Register, Tv)> {
        let res = dst.map(|d| to_ir(self.value(d)));
        let elidable = descr.effect == Effect::Elidable;
        if elidable && args.iter().all(|a| a.0.is_const()) {
            let vals: Vec<Value> = args.iter().map(|a| from_ir(a.1)).collect();
            self.fp
                .call(descr.name, descr.dynamic, &vals, res.map(from_ir));
            return dst.zip(res).map(|(d, v)| (d, self.konst(v)));
        }
        if !elidable && descr.effect != Effect::ResidualWritesNothing {
            self.cache.called();
        }
        let (fun, d) = self.call_descr(descr);
        let mut refs = vec![fun];
        refs.extend(args.iter().map(|a| a.0));
        let ret = descr.result_kind.map_or(Type::Void, ir_type);
        let opcode = match (elidable, Opcode::call_pure(ret)) {
            (true, Some(p)) => p,
            (true, None) => return None,
            (false, _) => Opcode::call(ret),
        };
        let r = self.trace.push(IrOp::new(opcode, &refs).with_descr(d));
        dst.zip(res).map(|(d, v)| (d, (r, v)))
    }
}

/// An alias class name the text form can hold: the jitcode's `TYPE` or `TYPE|PATH`
/// ([`crate::jitcode::FieldDescr::class`]) becomes `TYPE` or `TYPE:PATH`, with every character
/// other than letters, digits, `.` (and in the path `@`) made `_` (two names that become one
/// share a class, which only makes the optimizer more careful).
/// The name (made of letters, digits and `_`) and contents of the trace descriptor for the
/// jitcode descriptor at address `at`, made once in a run: the jitcode has one descriptor per
/// access site, and every trace meets them again (deltablue's tracer made 19,347 of them, two
/// thirds of its descriptor lookups, at 2,000 instructions each). The jitcode's descriptors
/// are `'static`: an address names one for the whole run.
fn made_descr(
    at: usize,
    make: impl FnOnce() -> (String, DescrKind),
) -> std::rc::Rc<(String, DescrKind)> {
    thread_local! {
        static MADE: std::cell::RefCell<hashbrown::HashMap<usize, std::rc::Rc<(String, DescrKind)>>> =
            Default::default();
    }
    MADE.with(|m| {
        m.borrow_mut()
            .entry(at)
            .or_insert_with(|| {
                let (name, kind) = make();
                std::rc::Rc::new((clean_name(&name), kind))
            })
            .clone()
    })
}

/// `name` with every character but ASCII letters and digits made `_`.
fn clean_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn alias_name(class: &str) -> String {
    let clean = |s: &str, keep: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || keep.contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    match class.split_once('|') {
        Some((wide, path)) => format!("{}:{}", clean(wide, "."), clean(path, ".@")),
        None => clean(class, "."),
    }
}
