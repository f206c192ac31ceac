//! Collection in the slow path of compiled code's allocation: the roots compiled code holds.
//!
//! A compiled loop whose objects escape allocates inline and may never come back to the
//! portal's safe point, so the allocation slow path (`crate::alloc::jit_alloc`, which only
//! compiled code calls) collects too. Compiled code keeps trace values in registers and in
//! spill slots of its native stack frame, with no stack map; the collector finds them
//! conservatively: every word of the native stack from the collector's frame up to the frame
//! that entered the run (`Run`), the callee-saved registers, and the run's deadframe. A word
//! that points into a cell keeps that cell (an integer that looks like one only retains
//! memory). The portal's greens and reds, which may lead to memory compiled code writes `Gc`s
//! into (a red `&mut Out`), are traced precisely (`with_portal_roots`), as the native
//! `can_enter_jit!` saw them. So a run collects only if every green or red that points to
//! memory outside the heap holding `Gc`s (an *anchor*) is among the run's inputs, as it was
//! (a green of that kind, never an input, stops collection in compiled code), and
//! `enable_collection`'s contract asks that the loop not make such a red point elsewhere.
//!
//! This is sound only because compiled code is the backend's own: it keeps every live object
//! pointer as a whole word in a register or a spill slot across a call (it never hides one,
//! and a derived pointer still points into the object's cell). The Rust frames between the
//! run and the collector are scanned as well, though only to retain: nothing in them is needed.
//!
//! Owns: the record of the running compiled code and of the portal's roots. Must not know:
//! the backend's frame layout (a run is a stack range and a deadframe), jitcode or any guest
//! language.

use std::cell::Cell;

use super::Tracer;

/// The roots-reporting function of the innermost portal `can_enter_jit!` that is calling the
/// driver (erased lifetime: valid while `with_portal_roots` runs).
type RootsFn = *const (dyn Fn(&mut Tracer) + 'static);

/// The portal's roots while the driver runs: the closure, and the anchors it reported (`None`:
/// no compiled run may collect).
type PortalRoots = (RootsFn, Option<*const [usize]>);

/// The compiled runs active on this thread: how many, and the outermost one's stack top,
/// deadframe (address, length) and whether it was entered with the reds the portal's roots
/// closure saw.
#[derive(Clone, Copy)]
struct Runs {
    depth: usize,
    top: usize,
    frame: (usize, usize),
    roots_match: bool,
}

thread_local! {
    static PORTAL_ROOTS: Cell<Option<PortalRoots>> = const { Cell::new(None) };
    static RUNS: Cell<Runs> = const {
        Cell::new(Runs { depth: 0, top: 0, frame: (0, 0), roots_match: false })
    };
}

/// Runs `f` (the driver, from a native `can_enter_jit!`) with `roots` as the portal's roots
/// for collections in compiled code it runs. `anchors` are what `roots` reported as the
/// addresses of memory outside the heap holding `Gc`s that the greens and reds point to (a
/// red `&mut Out`): a compiled run collects only if it was entered with all of them among its
/// inputs (so that `roots` still describes its state); `None`: no compiled run collects.
///
/// # Safety
/// `roots` reports every `Gc` reachable from the portal's greens and reds; the compiled code
/// that `f` runs is entered by the portal's driver.
#[inline]
pub unsafe fn with_portal_roots<R>(
    roots: &dyn Fn(&mut Tracer),
    anchors: Option<&[usize]>,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(Option<PortalRoots>);
    impl Drop for Restore {
        fn drop(&mut self) {
            PORTAL_ROOTS.with(|p| p.set(self.0));
        }
    }
    // SAFETY: only the lifetime is erased; the pointer is read only while `f` runs (it is put
    // back before this function returns or unwinds), when `roots` is alive.
    let erased: RootsFn =
        unsafe { std::mem::transmute::<*const (dyn Fn(&mut Tracer) + '_), RootsFn>(roots) };
    let set = Some((erased, anchors.map(|a| a as *const [usize])));
    let _restore = Restore(PORTAL_ROOTS.with(|p| p.replace(set)));
    f()
}

/// A compiled run on the native stack, from `Run::enter` until dropped.
pub(crate) struct Run {
    prev: Runs,
}

impl Run {
    /// Records a run entered from the frame holding `top` (an address above every frame of the
    /// run) with deadframe `frame` (the iteration limit, then the inputs).
    pub(crate) fn enter(top: usize, frame: &[u64]) -> Run {
        let prev = RUNS.with(|r| r.get());
        let next = if prev.depth == 0 {
            let roots_match = PORTAL_ROOTS.with(|p| p.get()).is_some_and(|(_, anchors)| {
                anchors.is_some_and(|a| {
                    // SAFETY: set by `with_portal_roots`, which is still running.
                    let a = unsafe { &*a };
                    let inputs = frame.get(1..).unwrap_or_default();
                    a.iter().all(|&x| inputs.contains(&(x as u64)))
                })
            });
            Runs {
                depth: 1,
                top,
                frame: (frame.as_ptr() as usize, frame.len()),
                roots_match,
            }
        } else {
            Runs {
                depth: prev.depth + 1,
                ..prev
            }
        };
        RUNS.with(|r| r.set(next));
        Run { prev }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        RUNS.with(|r| r.set(self.prev));
    }
}

/// The roots of compiled code suspended in the allocation slow path, if a collection may
/// run here: exactly one portal call and one compiled run active, the portal's roots known.
/// `None`: no collection now.
#[inline(never)]
pub(crate) fn roots() -> Option<Tracer> {
    let Runs {
        depth,
        top,
        frame: (frame, len),
        roots_match,
    } = RUNS.with(|r| r.get());
    if depth != 1 || !roots_match || crate::warm::portal_depth() != 1 {
        return None;
    }
    let (portal, _) = PORTAL_ROOTS.with(|p| p.get())?;
    let mut t = Tracer::new();
    // SAFETY: set by `with_portal_roots`, which is still running (the compiled run is inside
    // it: the run's portal call is the only one active).
    unsafe { (*portal)(&mut t) };
    if t.opaque {
        return Some(t);
    }
    let mut regs = [0usize; 6];
    // SAFETY: stores the callee-saved registers into `regs`, nothing else.
    unsafe {
        std::arch::asm!(
            "mov [{0}], rbx",
            "mov [{0} + 8], rbp",
            "mov [{0} + 16], r12",
            "mov [{0} + 24], r13",
            "mov [{0} + 32], r14",
            "mov [{0} + 40], r15",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        )
    };
    t.words.extend(std::hint::black_box(regs));
    let mut p = (&regs as *const [usize; 6] as usize) & !7;
    while p < top {
        // SAFETY: `[p, top)` is this thread's native stack between this frame and the frame
        // that entered the compiled run (the stack grows down): mapped and readable. The words
        // are only compared with the heap's chunks.
        t.words.push(unsafe { (p as *const usize).read_volatile() });
        p += 8;
    }
    for k in 0..len {
        // SAFETY: the deadframe of the run, alive while the run is (it owns it).
        t.words
            .push(unsafe { ((frame + 8 * k) as *const u64).read_volatile() } as usize);
    }
    Some(t)
}
