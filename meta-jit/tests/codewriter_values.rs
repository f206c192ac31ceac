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
        regs: vec![Val::Int(1), Val::Float(2.5), Val::Nil, Val::Pair { a: -3, b: 4 }],
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
            assert_eq!(get::run_jitcode(&j, a), vm().regs[b]);
        }
        let (mut n, mut j) = (vm(), vm());
        assert_eq!(stash(&mut n, a), stash::run_jitcode(&mut j, a));
        assert_eq!((n.regs, n.acc), (j.regs, j.acc));
    }
    let text = mov::jitcode().to_string();
    assert!(text.contains("switch"), "a copy dispatches on the tag: {text}");
    let text = add_into::jitcode().to_string();
    assert!(
        !text.contains("switch"),
        "a variant expression stores one variant: {text}"
    );
}
