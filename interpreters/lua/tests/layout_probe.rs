use meta_jit::hints as jit;
use meta_jit::hints::*;
use std::cell::{Cell, RefCell};

#[derive(JitLayout, Trace)]
pub struct Arr {
    pub items: Vec<Cell<V>>,
}

#[derive(JitLayout, Trace)]
pub struct Tab {
    pub len: Cell<u32>,
    pub arr: Cell<Gc<Arr>>,
    pub hash: RefCell<Vec<(V, V)>>,
    pub meta: Cell<Option<Gc<Tab>>>,
}

#[derive(Clone, Copy, Default, JitLayout, Trace)]
#[repr(C, u8)]
pub enum V {
    #[default]
    Nil,
    Int(i64),
    T(Gc<Tab>),
}

#[jit::interpreter(greens(pc), reds(regs, i, n))]
pub fn run(regs: &Vec<Cell<V>>, mut i: i64, n: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        if let V::T(t) = regs[0].get() {
            if let None = t.meta.get() {
                let len = t.len.get() as i64;
                if i >= 1 && i <= len {
                    let a = t.arr.get();
                    match a.items[(i - 1) as usize].get() {
                        V::Int(x) => a.items[(i - 1) as usize].set(V::Int(x + 1)),
                        v => regs[1].set(v),
                    }
                }
            }
        }
        regs[2].set(regs[1].get());
        i += 1;
        if i < n {
            pc = 0;
            can_enter_jit!();
            continue;
        }
        return i + pc as i64;
    }
}

#[test]
fn probe() {
    let arr = Gc::new(Arr {
        items: (0..10).map(|k| Cell::new(V::Int(k))).collect(),
    });
    let t = Gc::new(Tab {
        len: Cell::new(10),
        arr: Cell::new(arr),
        hash: RefCell::new(vec![]),
        meta: Cell::new(None),
    });
    let regs = vec![Cell::new(V::T(t)), Cell::new(V::Nil), Cell::new(V::Nil)];
    run::with_driver(|d| d.set_params("threshold=3").unwrap());
    assert_eq!(run(&regs, 0, 100), 100);
}
