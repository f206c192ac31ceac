//! `Cell<T>` in traced code: how an interpreter changes an object it reaches through a shared
//! reference (a `Gc<T>` or a `&T`), as a dynamic language's tables and objects change. A small
//! VM stores tagged values into a table of cells, counts hits in its objects' cell fields and
//! links objects through a `Cell<Option<Gc<Obj>>>`; the JIT must agree with the interpreter
//! and with jitcode alone, and the compiled loop must read and write the cells itself (no
//! call).

use std::cell::Cell;

use meta_jit::hints as jit;
use meta_jit::hints::*;

/// An object of the guest: a hit counter and a link to another object.
#[derive(Debug, JitLayout, Trace)]
pub struct Obj {
    pub hits: Cell<i64>,
    pub link: Cell<Option<Gc<Obj>>>,
}

/// A value of the guest.
#[derive(Clone, Copy, Debug, JitLayout, Trace)]
#[repr(C, u8)]
pub enum Val {
    Nil,
    Num(i64),
    Obj(Gc<Obj>),
}

/// A table of 8 slots and a running total, changed through a shared reference.
#[derive(JitLayout)]
pub struct Table {
    pub slots: Vec<Cell<Val>>,
    pub total: Cell<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `slots[i % 8] = i % k == 0 ? obj : i`
    Put(i64),
    /// Reads `slots[(3 i + 1) % 8]`: a number adds to `acc`, an object counts a hit.
    Fetch,
    /// `total += i`
    Total,
    /// `obj.link = i % k == 0 ? Some(obj) : None`, then follows the link.
    Tether(i64),
    /// `i += 1`; back to `t` while `i < n`.
    LoopLt(i64, u32),
    Halt,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
    /// How many times each instruction loaded: a cell in an immutable item of a green (as an
    /// inline cache sits in a function's code), which traced code must not fold.
    #[jit(immutable, immutable_items)]
    pub loads: Vec<Cell<i64>>,
}

#[jit::interpreter(greens(pc, code), reds(t, obj, i, acc))]
pub fn run(code: &Code, t: &Table, obj: Gc<Obj>, mut i: i64, mut acc: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Put(k) => {
                let v = if i % k == 0 {
                    Val::Obj(obj)
                } else {
                    Val::Num(i)
                };
                t.slots[(i % 8) as usize].set(v);
            }
            Ins::Fetch => {
                code.loads[pc].set(code.loads[pc].get() + 1);
                acc = acc.wrapping_add(code.loads[pc].get() & 3);
                match t.slots[((3 * i + 1) % 8) as usize].get() {
                    Val::Num(x) => acc = acc.wrapping_add(x),
                    Val::Obj(o) => {
                        o.hits.set(o.hits.get() + 1);
                        // The store just made is what this load reads.
                        acc = acc.wrapping_add(o.hits.get() * 1000);
                    }
                    Val::Nil => acc -= 1,
                }
            }
            Ins::Total => {
                let old = t.total.replace(t.total.get() + i);
                acc ^= old & 0xff;
            }
            Ins::Tether(k) => {
                obj.link.set(if i % k == 0 { Some(obj) } else { None });
                match obj.link.get() {
                    Some(o) => acc = acc.wrapping_add(o.hits.get()),
                    None => acc -= 2,
                }
                if obj.link.get().is_none() {
                    acc -= 5;
                }
            }
            Ins::LoopLt(n, to) => {
                i += 1;
                if i < n {
                    pc = to as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return acc,
        }
        pc += 1;
    }
}

/// The result, the table's total and slots, and the object's hits and link.
#[derive(Debug, PartialEq)]
struct End {
    acc: i64,
    total: i64,
    slots: Vec<Option<i64>>,
    hits: i64,
    linked: bool,
    loads: i64,
}

fn go(mode: &str, n: i64, every: i64, link: i64) -> End {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2,keep_optimized=1")
            .unwrap();
        if mode != "jitcode" {
            d.set_params(mode).unwrap();
        }
    });
    let code = Code {
        ops: vec![
            Ins::Put(every),
            Ins::Fetch,
            Ins::Total,
            Ins::Tether(link),
            Ins::LoopLt(n, 0),
            Ins::Halt,
        ],
        loads: (0..6).map(|_| Cell::new(0)).collect(),
    };
    let t = Table {
        slots: (0..8).map(|_| Cell::new(Val::Nil)).collect(),
        total: Cell::new(0),
    };
    let obj = Gc::new(Obj {
        hits: Cell::new(0),
        link: Cell::new(None),
    });
    let acc = if mode == "jitcode" {
        run::run_jitcode(&code, &t, obj, 0, 0)
    } else {
        run(&code, &t, obj, 0, 0)
    };
    End {
        acc,
        total: t.total.get(),
        slots: t
            .slots
            .iter()
            .map(|c| match c.get() {
                Val::Nil => None,
                Val::Num(x) => Some(x),
                Val::Obj(o) => Some(-o.hits.get()),
            })
            .collect(),
        hits: obj.hits.get(),
        linked: obj.link.get().is_some(),
        loads: code.loads[1].get(),
    }
}

#[test]
fn cells_agree_jit_on_off_and_jitcode() {
    let off = go("off", 1000, 5, 7);
    assert!(off.hits > 0, "{off:?}");
    assert_eq!(off.loads, 1000);
    assert_eq!(go("on", 1000, 5, 7), off);
    let s = run::with_driver(|d| d.stats());
    assert!(s.loops() >= 1, "{}", s.summary());
    // The loop reads and writes the cells itself.
    let lp = s.traces[0].optimized().to_string();
    assert!(
        lp.contains("setarrayitem(") || lp.contains("setfield("),
        "{lp}"
    );
    assert!(!lp.contains("call"), "{lp}");
    assert_eq!(go("jitcode", 1000, 5, 7), off);
}

#[test]
fn other_shapes_agree() {
    for (every, link) in [(2, 3), (3, 2), (1, 1), (7, 1000), (4, 4)] {
        let off = go("off", 600, every, link);
        assert_eq!(
            go("on", 600, every, link),
            off,
            "every {every}, link {link}"
        );
        assert_eq!(
            go("jitcode", 600, every, link),
            off,
            "every {every}, link {link}"
        );
    }
}
