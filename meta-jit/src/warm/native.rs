//! The native interpreter's side of the driver: what the `#[jit::interpreter]` expansion of
//! `can_enter_jit!()` calls (the counting fast path, [`can_enter_jit`]), how it hands over the
//! greens and reds without allocating ([`Vals`], [`Live`]) and takes them back ([`take`]), and
//! the thread-local on/off flag it tests first ([`OnFlag`]), and the count of portal calls
//! ([`portal_entered`]) that tells the driver when it must check folded facts again.
//!
//! Must not know: tracing, compiling, or any guest language.

use std::cell::{Cell, RefCell};

use super::{JitDriver, Resumed};
use crate::jitcode::Value;

/// `can_enter_jit!()` in the native interpreter: counts the location `vals[..greens]` and,
/// when it is hot or compiled, runs the JIT from the merge point with these greens and reds
/// (`vals[greens..]`). `None`: nothing ran, the interpreter goes on as it was.
///
/// # Safety
/// Called by the `#[jit::interpreter]` expansion only: `vals` are the portal's greens and reds
/// at a `can_enter_jit!` directly followed by the jump to its merge point, the references among
/// them live and usable for everything the interpreter does with them, and the caller assigns
/// what it gets back to the greens and reds (or returns it) before using them again.
/// `roots` reports every `Gc` the greens and reds reach to the collector, should compiled code
/// that the driver runs collect in its allocation slow path (see `gc::with_portal_roots`).
#[inline]
pub unsafe fn can_enter_jit(
    driver: &JitDriver,
    vals: &Vals,
    greens: usize,
    roots: &dyn Fn(&mut crate::gc::Tracer),
) -> Option<Resumed> {
    if !driver.is_on() {
        return None;
    }
    let (g, r) = vals.as_slice().split_at(greens);
    let slot = super::counters::hash(g);
    if driver.counters.borrow_mut().bump(slot) < driver.params.borrow().threshold {
        return None;
    }
    // SAFETY: forwarded.
    let anchors = crate::gc::anchors(roots);
    // SAFETY: forwarded (the expansion's `roots` reports the greens and reds).
    unsafe {
        crate::gc::with_portal_roots(roots, anchors.as_deref(), || driver.hot(g, r, slot, false))
    }
}

/// `jit_merge_point!()` in the native interpreter, the first time a portal call passes it:
/// the function's entry. With the `function_entry` parameter set, counts the entry with these
/// greens (`vals[..greens]`) and, when it is hot or has a function-entry trace, runs the JIT
/// from there (a function-entry trace). `None`: nothing ran.
///
/// # Safety
/// As [`can_enter_jit`], at the merge point itself: the caller assigns what it gets back to
/// the greens and reds (or returns it) and goes on at the merge point.
#[inline]
pub unsafe fn function_entered(driver: &JitDriver, vals: &Vals, greens: usize) -> Option<Resumed> {
    if !driver.is_on() || !driver.params.borrow().function_entry {
        return None;
    }
    let (g, r) = vals.as_slice().split_at(greens);
    // Entries count apart from the loops at the same greens.
    let slot = super::counters::entry(super::counters::hash(g));
    if driver.counters.borrow_mut().bump(slot) < driver.params.borrow().threshold {
        return None;
    }
    // SAFETY: forwarded.
    unsafe { driver.hot(g, r, slot, true) }
}

/// The portal calls of this thread that have begun and not returned.
#[derive(Default)]
struct Calls {
    /// The number the next call gets.
    next: u64,
    /// The calls, outermost first: each call's number and how many of `pins` are its pinned
    /// greens' values.
    active: Vec<(u64, usize)>,
    /// The pinned greens' values (as bits) of the calls in `active`, one after another.
    pins: Vec<u64>,
}

thread_local! {
    static CALLS: RefCell<Calls> = RefCell::new(Calls::default());
}

/// A portal call that has begun and not returned (see [`portal_entered`]); dropping it ends
/// the call.
#[must_use = "the portal call ends when this is dropped"]
pub struct PortalCall {
    /// Not `Send`: the call belongs to this thread.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Drop for PortalCall {
    fn drop(&mut self) {
        CALLS.with(|c| {
            let c = &mut *c.borrow_mut();
            let pins = c.active.pop().map_or(0, |(_, n)| n);
            c.pins.truncate(c.pins.len() - pins);
        });
    }
}

/// Called by the `#[jit::interpreter]` expansion first thing in every call of a portal
/// function (of any driver on this thread), with the values of its pinned greens (see
/// [`super::JitDriver::greens_pinned`]); the expansion keeps what it returns until the portal
/// returns: a portal call begins. What a trace folded from pinned greens holds as long as a
/// portal call whose pinned greens reference the same objects has not returned.
#[inline]
pub fn portal_entered(pinned: &Vals) -> PortalCall {
    CALLS.with(|c| {
        let c = &mut *c.borrow_mut();
        c.next = c.next.wrapping_add(1).max(1);
        let pinned = pinned.as_slice();
        c.pins
            .extend(pinned.iter().map(|v| crate::trace::to_ir(*v).bits()));
        c.active.push((c.next, pinned.len()));
    });
    PortalCall {
        _thread: std::marker::PhantomData,
    }
}

/// The portal call that vouches for the objects the innermost running call's pinned greens
/// reference: the outermost call still running whose pinned greens have the same values (it
/// borrows the same objects, since two live objects of one type have two addresses), or
/// that call itself. 0 outside any portal call.
pub(super) fn portal_call() -> u64 {
    CALLS.with(|c| {
        let c = c.borrow();
        let Some(&(top, n)) = c.active.last() else {
            return 0;
        };
        let mine = &c.pins[c.pins.len() - n..];
        let mut at = 0;
        for &(call, len) in &c.active {
            if len == n && &c.pins[at..at + len] == mine {
                return call;
            }
            at += len;
        }
        top
    })
}

/// How many portal calls (of any driver) are active on this thread: the collector's safe
/// point collects only in the outermost one.
pub(crate) fn portal_depth() -> usize {
    CALLS.with(|c| c.borrow().active.len())
}

/// Whether portal call `n` has begun and not returned. Its pinned greens' objects are then
/// still borrowed by it: alive, and unchanged but for what the facts call volatile.
pub(super) fn call_active(n: u64) -> bool {
    n != 0
        && CALLS.with(|c| {
            c.borrow()
                .active
                .binary_search_by_key(&n, |&(call, _)| call)
                .is_ok()
        })
}

/// Whether the JIT is on, as a thread-local flag the native interpreter tests at every
/// `can_enter_jit!` (`None` until the driver has been created on this thread).
///
/// An `Option<bool>` is one byte (rustc stores `Some(b)` as `b`), so with the JIT off the
/// test the native interpreter makes is one compare of a thread-local byte with 0 (the hint
/// overhead benchmark measures it: `hint_overhead --callgrind`, in `meta-jit/examples`).
pub struct OnFlag(Cell<Option<bool>>);

impl OnFlag {
    /// Not known yet.
    pub const fn unknown() -> OnFlag {
        OnFlag(Cell::new(None))
    }
    /// The flag.
    #[inline]
    pub fn get(&self) -> Option<bool> {
        self.0.get()
    }
    /// Sets the flag.
    pub fn set(&self, on: bool) {
        self.0.set(Some(on));
    }
}

/// The greens and reds of a `can_enter_jit!`, without allocating.
pub struct Vals {
    len: usize,
    v: [Value; 16],
}

impl Default for Vals {
    #[inline]
    fn default() -> Vals {
        Vals {
            len: 0,
            v: [Value::Int(0); 16],
        }
    }
}

impl Vals {
    /// Appends a value (at most 16 registers of greens and reds).
    #[inline]
    pub fn push(&mut self, v: Value) {
        assert!(
            self.len < 16,
            "a portal may have at most 16 registers of greens and reds"
        );
        self.v[self.len] = v;
        self.len += 1;
    }
    /// The values.
    #[inline]
    pub fn as_slice(&self) -> &[Value] {
        &self.v[..self.len]
    }
    /// How many values.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A variable that can be a green or a red: its register values, read without moving it.
pub trait Live {
    /// Appends the values, as `JitType::to_values` orders them.
    fn push_values(&self, out: &mut Vals);
}

macro_rules! live_scalar {
    ($($t:ty),*) => {$(
        impl Live for $t {
            // Inlined so that the portal never passes the address of a green or red to an
            // opaque function: that would keep the variable in memory in the whole loop.
            #[inline]
            fn push_values(&self, out: &mut Vals) {
                out.push(crate::lower::Scalar::to_value(*self));
            }
        }
    )*};
}
live_scalar!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, f64);

impl<T> Live for &T {
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(*self as *const T as usize));
    }
}
impl<T> Live for &mut T {
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(&**self as *const T as usize));
    }
}
impl<T: 'static> Live for crate::gc::Gc<T> {
    #[inline]
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(self.as_ptr() as usize));
    }
}
impl<T: 'static> Live for Option<crate::gc::Gc<T>> {
    #[inline]
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(self.map_or(0, |g| g.as_ptr() as usize)));
    }
}
impl<T> Live for &[T] {
    fn push_values(&self, out: &mut Vals) {
        out.push(Value::Ref(self.as_ptr() as usize));
        out.push(Value::Int(self.len() as i64));
    }
}

/// Takes the next values of `it`, which are those of a pinned green (see
/// [`super::JitDriver::greens_pinned`]): they must equal the green's own, `now`. The expansion
/// does not assign pinned greens.
///
/// # Panics
/// If they differ (the JIT changed a green that the portal never changes: a bug in meta-jit).
pub fn take_pinned<T: Live>(it: &mut std::vec::IntoIter<Value>, now: &T) {
    let mut v = Vals::default();
    now.push_values(&mut v);
    for mine in v.as_slice() {
        let theirs = it.next().expect("the driver hands back every green");
        assert!(
            crate::trace::to_ir(*mine).bits() == crate::trace::to_ir(theirs).bits(),
            "meta-jit: a pinned green changed"
        );
    }
}

/// Takes the next values of `it` as a variable of type `T` (the expansion assigns greens and
/// reds back with it).
///
/// # Safety
/// The values are those of a live `T` (see `JitType::from_values`).
pub unsafe fn take<T: crate::lower::JitType>(it: &mut std::vec::IntoIter<Value>) -> T {
    // SAFETY: forwarded.
    unsafe { T::from_values(it) }
}
