//! Structs and enums as values in traced code (issue 16, part 6): variant expressions stored
//! into memory, copies of `Copy` enums and structs between places and through variables, and
//! `match` on a tuple of scrutinees. Every function runs natively and on its jitcode alone, and
//! the results must agree.

use meta_jit::hints::*;
use quickcheck::{QuickCheck, TestResult};

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Val {
    Int(i64),
    Float(f64),
    Nil,
    Pair { a: i32, b: u8 },
}

#[derive(Debug, JitLayout)]
pub struct Vm {
    pub regs: Vec<Val>,
    pub acc: Val,
}

#[look_inside]
fn add_into(vm: &mut Vm, a: usize, x: i64, y: i64) {
    vm.regs[a] = Val::Int(x.wrapping_add(y));
}

#[look_inside]
fn set_float(slot: &mut Val, x: f64) {
    *slot = Val::Float(x);
}

#[look_inside]
fn clear(vm: &mut Vm) {
    vm.acc = Val::Nil;
}

#[look_inside]
fn mov(vm: &mut Vm, a: usize, b: usize) {
    vm.regs[a] = vm.regs[b];
}

#[look_inside]
fn pair(vm: &mut Vm, a: usize, x: i32) {
    vm.regs[a] = Val::Pair { a: x, b: 7 };
}

#[look_inside]
fn get(vm: &Vm, i: usize) -> Val {
    vm.regs[i]
}

#[look_inside]
fn stash(vm: &mut Vm, i: usize) -> i64 {
    let v = vm.regs[i];
    vm.regs[i] = Val::Nil;
    vm.acc = v;
    match vm.acc {
        Val::Int(x) => x,
        _ => -1,
    }
}

fn vm() -> Vm {
    Vm {
        regs: vec![
            Val::Int(1),
            Val::Float(2.5),
            Val::Nil,
            Val::Pair { a: -3, b: 4 },
        ],
        acc: Val::Int(9),
    }
}

#[test]
fn variant_expressions_are_stored() {
    let (mut n, mut j) = (vm(), vm());
    add_into(&mut n, 2, 40, 2);
    add_into::run_jitcode(&mut j, 2, 40, 2);
    assert_eq!(j.regs[2], Val::Int(42));
    set_float(&mut n.regs[0], -1.5);
    set_float::run_jitcode(&mut j.regs[0], -1.5);
    assert_eq!(j.regs[0], Val::Float(-1.5));
    clear(&mut n);
    clear::run_jitcode(&mut j);
    assert_eq!(j.acc, Val::Nil);
    pair(&mut n, 1, 77);
    pair::run_jitcode(&mut j, 1, 77);
    assert_eq!(j.regs[1], Val::Pair { a: 77, b: 7 });
    assert_eq!(n.regs, j.regs);
    assert_eq!(n.acc, j.acc);
}

#[test]
fn enums_are_copied() {
    for a in 0..4 {
        for b in 0..4 {
            let (mut n, mut j) = (vm(), vm());
            mov(&mut n, a, b);
            mov::run_jitcode(&mut j, a, b);
            assert_eq!(n.regs, j.regs, "mov {a} {b}");
            assert_eq!(get::run_jitcode(&j, a), get(&n, a));
        }
        let (mut n, mut j) = (vm(), vm());
        assert_eq!(stash(&mut n, a), stash::run_jitcode(&mut j, a));
        assert_eq!((n.regs, n.acc), (j.regs, j.acc));
    }
    let text = mov::jitcode().to_string();
    assert!(
        text.contains("switch"),
        "a copy dispatches on the tag: {text}"
    );
    let text = add_into::jitcode().to_string();
    assert!(
        !text.contains("switch"),
        "a variant expression stores one variant: {text}"
    );
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
pub struct Point {
    pub x: i64,
    pub y: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
pub struct Body {
    pub pos: Point,
    pub old: Point,
    pub id: u8,
}

#[look_inside]
fn norm1(p: &Point) -> f64 {
    let q = *p;
    q.x as f64 + q.y
}

#[look_inside]
fn save(b: &mut Body) {
    b.old = b.pos;
}

#[look_inside]
fn copy_point(dst: &mut Point, src: &Point) {
    *dst = *src;
}

#[look_inside]
fn step(b: &mut Body, dx: i64) -> i64 {
    let mut p = b.pos;
    p.x += dx;
    b.pos = p;
    let whole = *b;
    whole.pos.x + whole.old.x + whole.id as i64
}

#[look_inside]
fn place(b: &mut Body, x: i64) {
    b.pos = Point { x, y: 0.5 };
}

#[look_inside]
fn first_of(bodies: &[Body]) -> Body {
    bodies[0]
}

fn body() -> Body {
    Body {
        pos: Point { x: 3, y: 1.25 },
        old: Point { x: -7, y: 0.0 },
        id: 5,
    }
}

#[test]
fn structs_are_copied_by_value() {
    let p = Point { x: 4, y: 0.5 };
    assert_eq!(norm1::run_jitcode(&p), norm1(&p));
    let (mut n, mut j) = (body(), body());
    save(&mut n);
    save::run_jitcode(&mut j);
    assert_eq!(n, j);
    assert_eq!(j.old, j.pos);
    let (mut n, mut j) = (body(), body());
    assert_eq!(step(&mut n, 10), step::run_jitcode(&mut j, 10));
    assert_eq!(n, j);
    assert_eq!(j.pos.x, 13);
    copy_point(&mut n.old, &body().pos);
    copy_point::run_jitcode(&mut j.old, &body().pos);
    assert_eq!(n, j);
    place(&mut n, -2);
    place::run_jitcode(&mut j, -2);
    assert_eq!(n, j);
    assert_eq!(first_of::run_jitcode(&[j, body()]), first_of(&[j, body()]));
}

#[look_inside]
fn set_from(vm: &mut Vm, a: usize, tag: u8, x: i64) {
    vm.regs[a] = match tag % 4 {
        0 => Val::Int(x),
        1 => Val::Float(x as f64),
        2 => Val::Nil,
        _ => Val::Pair {
            a: x as i32,
            b: tag,
        },
    };
}

#[test]
fn quickcheck_stores_and_copies() {
    fn p(ops: Vec<(u8, u8, u8, i64)>) -> TestResult {
        let (mut n, mut j) = (vm(), vm());
        for (k, a, b, x) in ops {
            let (a, b) = (usize::from(a % 4), usize::from(b % 4));
            match k % 3 {
                0 => {
                    let tag = (b as u8).wrapping_add(k);
                    set_from(&mut n, a, tag, x);
                    set_from::run_jitcode(&mut j, a, tag, x);
                }
                1 => {
                    mov(&mut n, a, b);
                    mov::run_jitcode(&mut j, a, b);
                }
                _ => {
                    assert_eq!(stash(&mut n, a), stash::run_jitcode(&mut j, a));
                }
            }
            if n.regs != j.regs || n.acc != j.acc {
                return TestResult::failed();
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(p as fn(Vec<(u8, u8, u8, i64)>) -> TestResult);
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(u8)]
#[jit(scalar)]
pub enum Cmp {
    Lt,
    Eq,
    Gt,
}

#[look_inside]
fn arith(vm: &mut Vm, d: usize, a: usize, b: usize) -> bool {
    match (vm.regs[a], vm.regs[b]) {
        (Val::Int(x), Val::Int(y)) => {
            vm.regs[d] = Val::Int(x.wrapping_add(y));
            true
        }
        (Val::Float(x), Val::Float(y)) => {
            vm.regs[d] = Val::Float(x + y);
            true
        }
        (Val::Int(x), Val::Float(y)) if y > 0.0 => {
            vm.regs[d] = Val::Float(x as f64 + y);
            true
        }
        (Val::Nil, _) | (_, Val::Nil) => false,
        _ => {
            vm.regs[d] = Val::Nil;
            false
        }
    }
}

#[look_inside]
fn order(c: Cmp, flip: bool, x: i64) -> i64 {
    match (c, flip, x) {
        (Cmp::Lt, false, _) => -1,
        (Cmp::Lt, true, ..) => 1,
        (Cmp::Eq, _, 0) => 100,
        (Cmp::Eq, _, 1..=9) => x,
        (Cmp::Gt, f, y) => {
            if f {
                -y
            } else {
                y
            }
        }
        _ => 0,
    }
}

#[test]
fn match_on_tuples() {
    for a in 0..4 {
        for b in 0..4 {
            let (mut n, mut j) = (vm(), vm());
            assert_eq!(arith(&mut n, 2, a, b), arith::run_jitcode(&mut j, 2, a, b));
            assert_eq!(n.regs, j.regs, "arith {a} {b}");
        }
    }
    for c in [Cmp::Lt, Cmp::Eq, Cmp::Gt] {
        for flip in [false, true] {
            for x in [-3, 0, 1, 5, 9, 10] {
                assert_eq!(
                    order(c, flip, x),
                    order::run_jitcode(c, flip, x),
                    "{c:?} {flip} {x}"
                );
            }
        }
    }
}

#[look_inside]
fn sum_of(vm: &Vm, a: usize, b: usize) -> f64 {
    let x = vm.regs[a];
    let y = vm.regs[b];
    let fx = match x {
        Val::Int(i) => i as f64,
        Val::Float(f) => f,
        Val::Pair { a, .. } => a as f64,
        Val::Nil => 0.0,
    };
    match (x, y) {
        (Val::Nil, _) => -1.0,
        (_, Val::Int(j)) => fx + j as f64,
        (_, Val::Float(g)) => fx + g,
        _ => fx,
    }
}

#[test]
fn enum_values_in_variables_are_matched() {
    let v = vm();
    for a in 0..4 {
        for b in 0..4 {
            assert_eq!(sum_of(&v, a, b), sum_of::run_jitcode(&v, a, b), "{a} {b}");
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
pub struct Span(pub u32, pub u32);

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(u8)]
pub enum Operand {
    Imm(i64),
    Reg(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Insn {
    Load { dst: u8, src: Operand },
    Mark(Span),
    Nop,
}

#[derive(Debug, PartialEq, JitLayout)]
pub struct Prog {
    pub code: [Insn; 3],
}

#[look_inside]
fn rewrite(p: &mut Prog, i: usize, j: usize, v: i64) -> u32 {
    p.code[i] = p.code[j];
    p.code[j] = Insn::Load {
        src: Operand::Imm(v),
        dst: 2,
    };
    let span = Span(7, v as u32);
    p.code[(i + 1) % 3] = Insn::Mark(span);
    match p.code[i] {
        Insn::Load { src, .. } => match src {
            Operand::Imm(x) => x as u32,
            Operand::Reg(r) => r as u32 + 1000,
        },
        Insn::Mark(s) => s.0 + s.1,
        Insn::Nop => 0,
    }
}

#[test]
fn nested_enums_and_tuple_structs() {
    let prog = || Prog {
        code: [
            Insn::Load {
                dst: 1,
                src: Operand::Reg(3),
            },
            Insn::Mark(Span(1, 2)),
            Insn::Nop,
        ],
    };
    for i in 0..3 {
        for j in 0..3 {
            let (mut n, mut q) = (prog(), prog());
            let r = rewrite(&mut n, i, j, 42);
            assert_eq!(r, rewrite::run_jitcode(&mut q, i, j, 42), "{i} {j}");
            assert_eq!(n, q, "{i} {j}");
        }
    }
}
