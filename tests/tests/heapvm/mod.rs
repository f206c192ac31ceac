//! A register VM whose every guest frame is a heap object: a call allocates the callee's frame
//! (`Gc::new(Frame { .. })`, its registers `Cell`s, its caller in `back: Option<Gc<Frame>>`)
//! and continues in the same dispatch loop. Shared by `jit_heapframes.rs` and the
//! `heapfib_speedup` example.

use std::cell::{Cell, RefCell};

use meta_jit::hints as jit;
use meta_jit::hints::*;

#[path = "../callops/mod.rs"]
pub mod callops;
pub use callops::{Code, Ins};

/// A guest frame: four registers, where the caller goes on, and the caller's frame.
#[derive(Debug, JitLayout, Trace)]
pub struct Frame {
    pub r0: Cell<i64>,
    pub r1: Cell<i64>,
    pub r2: Cell<i64>,
    pub r3: Cell<i64>,
    /// The caller's pc after the call.
    pub ret: u32,
    /// The caller's register that gets the result.
    pub dst: u8,
    pub back: Option<Gc<Frame>>,
}

#[look_inside]
fn get(f: Gc<Frame>, k: u8) -> i64 {
    match k % 4 {
        0 => f.r0.get(),
        1 => f.r1.get(),
        2 => f.r2.get(),
        _ => f.r3.get(),
    }
}

#[look_inside]
fn set(f: Gc<Frame>, k: u8, v: i64) {
    match k % 4 {
        0 => f.r0.set(v),
        1 => f.r1.set(v),
        2 => f.r2.set(v),
        _ => f.r3.set(v),
    }
}

/// A new frame.
#[look_inside]
pub fn frame(r0: i64, ret: u32, dst: u8, back: Option<Gc<Frame>>) -> Gc<Frame> {
    Gc::new(Frame {
        r0: Cell::new(r0),
        r1: Cell::new(0),
        r2: Cell::new(0),
        r3: Cell::new(0),
        ret,
        dst,
        back,
    })
}

/// A frame's registers, return point and depth, and the same of its callers.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen(pub Vec<([i64; 4], u32, u8)>);

pub fn seen(mut f: Option<Gc<Frame>>) -> Seen {
    let mut out = Vec::new();
    while let Some(g) = f {
        out.push((
            [g.r0.get(), g.r1.get(), g.r2.get(), g.r3.get()],
            g.ret,
            g.dst,
        ));
        f = g.back;
    }
    Seen(out)
}

thread_local! {
    /// The guest stacks `snapshot` saw.
    pub static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

/// Records the whole guest stack (a residual call: the frames escape into it, so compiled
/// code allocates them first).
#[dont_look_inside]
pub fn snapshot(f: Gc<Frame>) {
    SEEN.with(|s| s.borrow_mut().push(seen(Some(f))));
}

#[jit::interpreter(greens(pc, code), reds(f))]
pub fn run(code: &Code, mut f: Gc<Frame>) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Li(a, imm) => set(f, a, imm),
            Ins::Add(a, b, c) => set(f, a, get(f, b).wrapping_add(get(f, c))),
            Ins::AddI(a, b, imm) => set(f, a, get(f, b).wrapping_add(imm)),
            Ins::Invoke { t, arg, dst } => {
                f = frame(get(f, arg), pc as u32 + 1, dst, Some(f));
                pc = t as usize;
                continue;
            }
            Ins::Leave(a) => {
                let v = get(f, a);
                match f.back {
                    Some(caller) => {
                        set(caller, f.dst, v);
                        pc = f.ret as usize;
                        f = caller;
                        continue;
                    }
                    None => return v,
                }
            }
            Ins::Branch(a, imm, c) => {
                if get(f, a) < imm {
                    set(f, c, get(f, c).wrapping_add(1));
                } else {
                    set(f, c, get(f, c).wrapping_mul(3));
                    snapshot(f);
                }
            }
            Ins::Jlt(a, b, t) => {
                if get(f, a) < get(f, b) {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return get(f, 0),
        }
        pc += 1;
    }
}
