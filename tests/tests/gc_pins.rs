//! The objects a compiled trace names as constants (a green `Gc`, here) stay alive as long as
//! the trace, however the roots change, and no longer: once the driver is reset (its code
//! freed), a collection frees them.

use std::cell::Cell;

use meta_jit::gc::{self, Gc, Tracer};
use meta_jit::hints as jit;
use meta_jit::hints::*;

thread_local! {
    /// How many `Counted` values were dropped.
    static DROPPED: Cell<u32> = const { Cell::new(0) };
}

/// Counts its drops.
pub struct Counted;

impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.with(|d| d.set(d.get() + 1));
    }
}

// SAFETY: holds no `Gc`; its `Drop` reads none.
unsafe impl Trace for Counted {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut Tracer) {}
}

/// The program, a green: an object with drop glue (a typed object of the heap).
#[derive(JitLayout, Trace)]
pub struct Prog {
    pub step: i64,
    pub counted: Counted,
}

#[jit::interpreter(greens(pc, prog), reds(i, n, acc))]
pub fn run(prog: Gc<Prog>, mut i: i64, n: i64, mut acc: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        acc += prog.step;
        i += 1;
        if i < n {
            pc = 0;
            can_enter_jit!();
            continue;
        }
        return acc + pc as i64;
    }
}

fn collect_without_roots() {
    // SAFETY: nothing the test uses later is reached only through the collected objects: the
    // test reads only counters and the driver's statistics afterwards.
    unsafe { gc::collect(&Tracer::new()) };
}

#[test]
fn trace_constants_live_as_long_as_their_trace() {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3").unwrap();
    });
    let prog = Gc::new(Prog {
        step: 3,
        counted: Counted,
    });
    assert_eq!(run(prog, 0, 100, 0), 300);
    assert_eq!(run::with_driver(|d| d.stats().loops()), 1);
    let before = DROPPED.with(Cell::get);
    // No root reaches the program: the compiled trace's constant keeps it.
    collect_without_roots();
    assert_eq!(
        DROPPED.with(Cell::get),
        before,
        "a trace's constant was freed"
    );
    // The compiled loop still runs on it.
    assert_eq!(run(prog, 0, 100, 0), 300);
    // Freeing the code releases it.
    run::with_driver(|d| d.reset());
    collect_without_roots();
    assert_eq!(
        DROPPED.with(Cell::get),
        before + 1,
        "a freed trace's constant stays alive"
    );
}
