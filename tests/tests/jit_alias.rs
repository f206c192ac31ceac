//! Precise alias classes, end to end: one small dynamically typed register VM written with two
//! register-file layouts, a `Vec` of a tagged struct and one `Vec` per type, must trace a
//! counting loop to the same ops; and an object's `i64` shape field, promoted, must survive
//! stores into the register file (one `guard_value` per iteration, not one per read).
//!
//! Both layouts store `u8` tags, `i64` ints and `f64` floats. With alias classes by Rust type
//! alone, a store into a register's `i64` would forget the shape; with classes by access path
//! (`Val.i`, `Obj.shape`, `Vec` items) it does not.

use meta_jit::hints as jit;
use meta_jit::hints::*;
use meta_jit::warm::{Stats, TraceKind};

const INT: u8 = 0;
const FLOAT: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `r[a] = imm` (an int)
    Li(u8, i64),
    /// `r[a] = r[b] + imm` (ints wrap; a float register adds `imm as f64`)
    AddI(u8, u8, i64),
    /// `r[a] = r[a] * x` (floats; an int register becomes a float)
    MulF(u8, f64),
    /// jump to `t` if `r[a] < r[b]` (both ints; otherwise falls through)
    Jlt(u8, u8, u32),
    /// `r[a] = r[a] + objs[o].slots[promote!(objs[o].shape)]` (`r[a]` must be an int)
    Attr(u8, u8),
    /// `r[a] = r[b] + r[c]` (floats; an int operand is converted)
    FAdd(u8, u8, u8),
    /// `r[a] = r[b] - r[c]`
    FSub(u8, u8, u8),
    /// `r[a] = r[b] * r[c]`
    FMul(u8, u8, u8),
    /// `note(r[a])`: a residual call declared `writes_nothing`
    Note(u8),
    /// `note_any(r[a])`: the same residual call, undeclared (may write anything)
    NoteAny(u8),
    /// Stop; the result is `r[0]` (its int, or its float's bits).
    Halt,
}

thread_local! {
    static NOTES: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
}

/// Adds `x` to a thread-local sum: it writes no memory traced code reads.
#[dont_look_inside(writes_nothing)]
pub fn note(x: i64) {
    NOTES.with(|n| n.set(n.get().wrapping_add(x)));
}

/// The same, undeclared.
#[dont_look_inside]
pub fn note_any(x: i64) {
    NOTES.with(|n| n.set(n.get().wrapping_add(x)));
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// An object: its shape says which slot holds the attribute.
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct Obj {
    pub shape: i64,
    pub slots: Vec<i64>,
}

/// A register: a tag and both payloads.
#[derive(JitLayout, Clone, Copy, Debug, PartialEq)]
pub struct Val {
    pub tag: u8,
    pub i: i64,
    pub f: f64,
}

/// Layout A: one `Vec` of tagged structs.
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct VmA {
    pub regs: Vec<Val>,
    pub objs: Vec<Obj>,
}

/// Layout B: one `Vec` per type.
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct VmB {
    pub tags: Vec<u8>,
    pub ints: Vec<i64>,
    pub floats: Vec<f64>,
    pub objs: Vec<Obj>,
}

#[jit::methods]
impl Val {
    /// The register as a float.
    #[look_inside]
    pub fn float(&self) -> f64 {
        if self.tag == INT {
            self.i as f64
        } else {
            self.f
        }
    }
}

/// Register `r` of layout B as a float.
#[look_inside]
pub fn float_b(vm: &VmB, r: u8) -> f64 {
    if vm.tags[r as usize] == INT {
        vm.ints[r as usize] as f64
    } else {
        vm.floats[r as usize]
    }
}

#[jit::interpreter(greens(pc, code), reds(vm))]
pub fn run_a(code: &Code, vm: &mut VmA) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => {
                vm.regs[a as usize].tag = INT;
                vm.regs[a as usize].i = imm;
            }
            Ins::AddI(a, b, imm) => {
                if vm.regs[b as usize].tag == INT {
                    let x = vm.regs[b as usize].i.wrapping_add(imm);
                    vm.regs[a as usize].tag = INT;
                    vm.regs[a as usize].i = x;
                } else {
                    let x = vm.regs[b as usize].f + imm as f64;
                    vm.regs[a as usize].tag = FLOAT;
                    vm.regs[a as usize].f = x;
                }
            }
            Ins::MulF(a, x) => {
                let v = if vm.regs[a as usize].tag == INT {
                    vm.regs[a as usize].i as f64
                } else {
                    vm.regs[a as usize].f
                };
                vm.regs[a as usize].tag = FLOAT;
                vm.regs[a as usize].f = v * x;
            }
            Ins::Jlt(a, b, t) => {
                if vm.regs[a as usize].tag == INT
                    && vm.regs[b as usize].tag == INT
                    && vm.regs[a as usize].i < vm.regs[b as usize].i
                {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Attr(a, o) => {
                let shape = promote!(vm.objs[o as usize].shape);
                let v = vm.objs[o as usize].slots[shape as usize];
                vm.regs[a as usize].i = vm.regs[a as usize].i.wrapping_add(v);
            }
            Ins::FAdd(a, b, c) => {
                let x = vm.regs[b as usize].float() + vm.regs[c as usize].float();
                vm.regs[a as usize].tag = FLOAT;
                vm.regs[a as usize].f = x;
            }
            Ins::FSub(a, b, c) => {
                let x = vm.regs[b as usize].float() - vm.regs[c as usize].float();
                vm.regs[a as usize].tag = FLOAT;
                vm.regs[a as usize].f = x;
            }
            Ins::FMul(a, b, c) => {
                let x = vm.regs[b as usize].float() * vm.regs[c as usize].float();
                vm.regs[a as usize].tag = FLOAT;
                vm.regs[a as usize].f = x;
            }
            Ins::Note(a) => note(vm.regs[a as usize].i),
            Ins::NoteAny(a) => note_any(vm.regs[a as usize].i),
            Ins::Halt => {
                if vm.regs[0].tag == INT {
                    return vm.regs[0].i;
                }
                return vm.regs[0].f.to_bits() as i64;
            }
        }
        pc += 1;
    }
}

#[jit::interpreter(greens(pc, code), reds(vm))]
pub fn run_b(code: &Code, vm: &mut VmB) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => {
                vm.tags[a as usize] = INT;
                vm.ints[a as usize] = imm;
            }
            Ins::AddI(a, b, imm) => {
                if vm.tags[b as usize] == INT {
                    let x = vm.ints[b as usize].wrapping_add(imm);
                    vm.tags[a as usize] = INT;
                    vm.ints[a as usize] = x;
                } else {
                    let x = vm.floats[b as usize] + imm as f64;
                    vm.tags[a as usize] = FLOAT;
                    vm.floats[a as usize] = x;
                }
            }
            Ins::MulF(a, x) => {
                let v = if vm.tags[a as usize] == INT {
                    vm.ints[a as usize] as f64
                } else {
                    vm.floats[a as usize]
                };
                vm.tags[a as usize] = FLOAT;
                vm.floats[a as usize] = v * x;
            }
            Ins::Jlt(a, b, t) => {
                if vm.tags[a as usize] == INT
                    && vm.tags[b as usize] == INT
                    && vm.ints[a as usize] < vm.ints[b as usize]
                {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Attr(a, o) => {
                let shape = promote!(vm.objs[o as usize].shape);
                let v = vm.objs[o as usize].slots[shape as usize];
                vm.ints[a as usize] = vm.ints[a as usize].wrapping_add(v);
            }
            Ins::FAdd(a, b, c) => {
                let x = float_b(vm, b) + float_b(vm, c);
                vm.tags[a as usize] = FLOAT;
                vm.floats[a as usize] = x;
            }
            Ins::FSub(a, b, c) => {
                let x = float_b(vm, b) - float_b(vm, c);
                vm.tags[a as usize] = FLOAT;
                vm.floats[a as usize] = x;
            }
            Ins::FMul(a, b, c) => {
                let x = float_b(vm, b) * float_b(vm, c);
                vm.tags[a as usize] = FLOAT;
                vm.floats[a as usize] = x;
            }
            Ins::Note(a) => note(vm.ints[a as usize]),
            Ins::NoteAny(a) => note_any(vm.ints[a as usize]),
            Ins::Halt => {
                if vm.tags[0] == INT {
                    return vm.ints[0];
                }
                return vm.floats[0].to_bits() as i64;
            }
        }
        pc += 1;
    }
}

fn objs() -> Vec<Obj> {
    vec![
        Obj {
            shape: 1,
            slots: vec![5, 7, 9],
        },
        Obj {
            shape: 2,
            slots: vec![1, 2, 3],
        },
    ]
}

const PARAMS: &str = "on,threshold=3,trace_eagerness=2,keep_optimized=1";

/// Runs `$code` on a fresh VM from `$fresh` through the portal `$run`, with the JIT off, then
/// on, checks that both end the same, and returns what the driver did.
macro_rules! off_then_on {
    ($run:ident, $code:expr, $fresh:expr) => {{
        let (code, fresh) = ($code, $fresh);
        let mut vm_off = fresh();
        $run::with_driver(|d| {
            d.reset();
            d.set_params("off").unwrap();
        });
        let off = $run(&code, &mut vm_off);
        let mut vm_on = fresh();
        $run::with_driver(|d| {
            d.reset();
            d.set_params(PARAMS).unwrap();
        });
        let on = $run(&code, &mut vm_on);
        assert_eq!((on, &vm_on), (off, &vm_off));
        $run::with_driver(|d| d.with_stats(|s| s.clone()))
    }};
}

/// Layout A: one register file of tagged structs.
fn go_a(ops: &[Ins], regs: usize) -> Stats {
    let fresh = || VmA {
        regs: vec![
            Val {
                tag: INT,
                i: 0,
                f: 0.0
            };
            regs
        ],
        objs: objs(),
    };
    off_then_on!(run_a, Code { ops: ops.to_vec() }, fresh)
}

/// Layout B: one vector per type.
fn go_b(ops: &[Ins], regs: usize) -> Stats {
    let fresh = || VmB {
        tags: vec![INT; regs],
        ints: vec![0; regs],
        floats: vec![0.0; regs],
        objs: objs(),
    };
    off_then_on!(run_b, Code { ops: ops.to_vec() }, fresh)
}

/// The ops of the only loop's body (after its label), as opcode names (loads and stores by
/// kind), and its text.
fn body(s: &Stats) -> (Vec<&'static str>, String) {
    let loops: Vec<_> = s
        .traces
        .iter()
        .filter(|t| t.kind == TraceKind::Loop)
        .collect();
    assert_eq!(loops.len(), 1, "one loop expected");
    let t = &loops[0].optimized();
    let at = t
        .ops
        .iter()
        .position(|op| op.opcode.name() == "label")
        .expect("a peeled loop has a label");
    // A field of an item of `Vec<Val>` is a field of the item's address; an item of
    // `Vec<i64>` is an array item: one op either way.
    let names = t.ops[at + 1..]
        .iter()
        .map(|op| match op.opcode.name() {
            "setfield" | "setarrayitem" => "store",
            "getfield_i" | "getarrayitem_i" => "load_i",
            "getfield_f" | "getarrayitem_f" => "load_f",
            n => n,
        })
        .collect();
    (names, t.to_string())
}

fn guards(names: &[&str]) -> usize {
    names.iter().filter(|n| n.starts_with("guard_")).count()
}

/// `r0 = 0; r1 = 1000; do r0 += 1 while r0 < r1`.
const COUNT: &[Ins] = &[
    Ins::Li(0, 0),
    Ins::Li(1, 1000),
    Ins::AddI(0, 0, 1),
    Ins::Jlt(0, 1, 2),
    Ins::Halt,
];

#[test]
fn a_counting_loop_traces_the_same_in_both_layouts() {
    let (a, ta) = body(&go_a(COUNT, 4));
    let (b, tb) = body(&go_b(COUNT, 4));
    assert_eq!(a, b, "layout A:\n{ta}\nlayout B:\n{tb}");
    // The loop keeps `r0` in a register: an add, a compare, its guard, the store of `r0`
    // (the loop's exit reads memory) and the jump.
    assert_eq!(guards(&a), 1, "{ta}");
    assert!(a.len() <= 9, "{} ops:\n{ta}", a.len());
}

#[test]
fn a_float_loop_traces_the_same_in_both_layouts() {
    // `r2 *= 1.0001` each turn: a float register next to the int counter.
    let ops = &[
        Ins::Li(0, 0),
        Ins::Li(1, 500),
        Ins::Li(2, 1),
        Ins::MulF(2, 1.0001),
        Ins::AddI(0, 0, 1),
        Ins::Jlt(0, 1, 3),
        Ins::Halt,
    ];
    let (a, ta) = body(&go_a(ops, 4));
    let (b, tb) = body(&go_b(ops, 4));
    assert_eq!(a, b, "layout A:\n{ta}\nlayout B:\n{tb}");
    assert_eq!(guards(&a), 1, "{ta}");
}

#[test]
fn a_promoted_shape_survives_stores_into_the_register_file() {
    // Four attribute reads of one object per turn, each followed by a store into the register
    // file: the shape is loaded and guarded once.
    let ops = &[
        Ins::Li(0, 0),
        Ins::Li(1, 300),
        Ins::Li(2, 0),
        Ins::Attr(2, 0),
        Ins::Attr(2, 0),
        Ins::Attr(2, 0),
        Ins::Attr(2, 0),
        Ins::AddI(0, 0, 1),
        Ins::Jlt(0, 1, 3),
        Ins::Halt,
    ];
    for s in [go_a(ops, 4), go_b(ops, 4)] {
        let (names, text) = body(&s);
        let count = |n: &str| names.iter().filter(|&&m| m == n).count();
        assert_eq!(count("guard_value"), 0, "{text}");
        let lp = s.traces.iter().find(|t| t.kind == TraceKind::Loop).unwrap();
        assert_eq!(lp.count("guard_value"), 1, "{}", lp.optimized());
        assert_eq!(guards(&names), 1, "{text}");
    }
}

/// The attribute reads and notes of [`a_residual_call_that_writes_nothing_keeps_the_heap_cache`].
fn noting(note: Ins) -> Vec<Ins> {
    vec![
        Ins::Li(0, 0),
        Ins::Li(1, 300),
        Ins::Li(2, 0),
        Ins::Attr(2, 0),
        note,
        Ins::Attr(2, 0),
        note,
        Ins::AddI(0, 0, 1),
        Ins::Jlt(0, 1, 3),
        Ins::Halt,
    ]
}

#[test]
fn a_residual_call_that_writes_nothing_keeps_the_heap_cache() {
    // Declared `writes_nothing`: the shape is guarded once, before the loop; the loop keeps
    // the registers and the objects' `Vec` in registers across the calls.
    let (names, text) = body(&go_a(&noting(Ins::Note(2)), 4));
    let count = |names: &[&str], n: &str| names.iter().filter(|&&m| m == n).count();
    assert_eq!(count(&names, "call_n"), 2, "{text}");
    assert_eq!(count(&names, "guard_value"), 0, "{text}");
    assert_eq!(count(&names, "getfield_r"), 0, "{text}");
    assert_eq!(guards(&names), 1, "{text}");
    // Undeclared, the call may write anything: after each, the shape is loaded and guarded
    // again, and so are the `Vec`s' buffers.
    let (names, text) = body(&go_a(&noting(Ins::NoteAny(2)), 4));
    assert_eq!(count(&names, "call_n"), 2, "{text}");
    assert_eq!(count(&names, "guard_value"), 2, "{text}");
    assert!(count(&names, "getfield_r") >= 2, "{text}");
}

#[test]
fn a_mandelbrot_step_stores_each_register_once_per_iteration() {
    // z = z * z + c, with z and c complex, in registers: the temporary r6 and zi (r3) are
    // written three times per turn, zr (r2), r8 and the counter once. With no guard between
    // the writes of one register, only the last store of each stays.
    let ops = &[
        Ins::Li(0, 0),
        Ins::Li(1, 200),
        Ins::Li(2, 0),
        Ins::MulF(2, 1.0),
        Ins::Li(3, 0),
        Ins::MulF(3, 1.0),
        Ins::Li(4, 1),
        Ins::MulF(4, -0.5),
        Ins::Li(5, 1),
        Ins::MulF(5, 0.5),
        Ins::Li(7, 2),
        Ins::MulF(7, 1.0),
        Ins::Li(9, 0),
        Ins::MulF(9, 1.0),
        // loop: t = zr * zr - zi * zi + cr; zi = zr * zi * 2 + ci; zr = t
        Ins::FMul(6, 2, 2),
        Ins::FMul(8, 3, 3),
        Ins::FSub(6, 6, 8),
        Ins::FAdd(6, 6, 4),
        Ins::FMul(3, 2, 3),
        Ins::FMul(3, 3, 7),
        Ins::FAdd(3, 3, 5),
        Ins::FAdd(2, 6, 9),
        Ins::AddI(0, 0, 1),
        Ins::Jlt(0, 1, 14),
        Ins::Halt,
    ];
    for s in [go_a(ops, 10), go_b(ops, 10)] {
        let (names, text) = body(&s);
        let stores = names.iter().filter(|&&n| n == "store").count();
        // r6.f, r8.f, r3.f, r2.f and r0.i: one store each (the tags hold `FLOAT` already).
        assert_eq!(stores, 5, "{text}");
        assert_eq!(guards(&names), 1, "{text}");
    }
}

/// A register as an enum (layout C).
#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Value {
    Whole(i64),
    Real(f64),
}

/// Layout C: one `Vec` of enums. Traced code writes a payload in place; a register that
/// changes type is written by a residual call (`jit_values.rs` stores whole enums in traced
/// code).
#[derive(JitLayout, Clone, Debug, PartialEq)]
pub struct VmC {
    pub regs: Vec<Value>,
}

#[dont_look_inside]
pub fn set_int(vm: &mut VmC, a: u8, v: i64) {
    vm.regs[a as usize] = Value::Whole(v);
}

/// The counting subset of [`Ins`] (`Li`, `AddI`, `Jlt`, `Halt`) on layout C.
#[jit::interpreter(greens(pc, code), reds(vm))]
pub fn run_c(code: &Code, vm: &mut VmC) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => {
                if let Value::Whole(x) = &mut vm.regs[a as usize] {
                    *x = imm;
                } else {
                    set_int(vm, a, imm);
                }
            }
            Ins::AddI(a, b, imm) => {
                if let Value::Whole(y) = vm.regs[b as usize] {
                    let v = y.wrapping_add(imm);
                    if let Value::Whole(x) = &mut vm.regs[a as usize] {
                        *x = v;
                    } else {
                        set_int(vm, a, v);
                    }
                }
            }
            Ins::Jlt(a, b, t) => {
                if let Value::Whole(x) = vm.regs[a as usize] {
                    if let Value::Whole(y) = vm.regs[b as usize] {
                        if x < y {
                            pc = t as usize;
                            can_enter_jit!();
                            continue;
                        }
                    }
                }
            }
            Ins::Halt => {
                if let Value::Whole(x) = vm.regs[0] {
                    return x;
                }
                return -1;
            }
            _ => return -2,
        }
        pc += 1;
    }
}

#[test]
fn a_counting_loop_over_a_vec_of_enums_traces_like_per_type_vecs() {
    let code = Code {
        ops: COUNT.to_vec(),
    };
    let fresh = || VmC {
        regs: vec![Value::Whole(0); 4],
    };
    let (c, tc) = body(&off_then_on!(run_c, code, fresh));
    let (b, tb) = body(&go_b(COUNT, 4));
    // The payload written through the binding `x` keeps its precise class (a `let` that is
    // not `mut` keeps the path): nothing in the trace is of the wide class `i64`.
    assert!(!tc.contains("alias=i64)"), "{tc}");
    // `*x = v` addresses the payload as offset 0 of `regs[0] + 8`, and the next read as
    // offset 8 of `regs[0]`: the heap cache sees the same bytes and forwards the value.
    assert_eq!(c, b, "layout C:\n{tc}\nlayout B:\n{tb}");
}
