//! [`Trace`]: how the collector finds the `Gc` pointers a value holds, with the impls for the
//! standard types (`#[derive(Trace)]` writes it for an interpreter's own structs and enums).
//!
//! Two kinds of impls: a type whose `Gc`s are all words of its own bytes ([`Trace::INLINE`]:
//! `Option<Gc<T>>`, arrays, tuples, `Cell<T: Copy>`, derived structs of such fields) can be
//! scanned word by word by the collector with no type information, which is what lets compiled
//! code allocate it with no header; a type that keeps `Gc`s in memory it owns (`Vec`,
//! `Box<[T]>`, `HashMap`, `RefCell`) is traced precisely, through this trait, from the type
//! descriptor in its object's header (see `gc::heap`).
//!
//! Owns: the trait, its impls for std types (and `hashbrown`'s maps), and the probe the
//! portal's safe point uses to tell a traceable green or red from one the collector cannot
//! see. Must not know: how the heap marks (it only receives words through [`Tracer`]),
//! jitcode or any guest language.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::Gc;

/// The roots a collection starts from, as the words that point into the heap.
#[derive(Default)]
pub struct Tracer {
    pub(crate) words: Vec<usize>,
    pub(crate) opaque: bool,
    /// The addresses of memory outside the heap that holds `Gc`s, which the portal's greens
    /// and reds point to (a red `&mut Out`): a compiled run collects only if it was entered
    /// with these among its inputs.
    pub(crate) anchors: Vec<usize>,
    /// A value could not report its `Gc`s ([`Tracer::cannot_see`]): the collection is
    /// abandoned and frees nothing.
    pub(crate) blocked: bool,
    /// Reporting anchors only (`gc::anchors`): the views of the greens and reds note their
    /// addresses without tracing what they hold, which is what a compiled run's entry needs
    /// and costs nothing per value the reds hold.
    pub(crate) shallow: bool,
}

impl Tracer {
    /// An empty set of roots.
    pub fn new() -> Tracer {
        Tracer::default()
    }

    /// Adds the object `g` points to.
    #[inline]
    pub fn mark<T: 'static>(&mut self, g: Gc<T>) {
        self.words.push(g.as_ptr() as usize);
    }

    /// Adds everything `v` holds.
    pub fn root<T: Trace + ?Sized>(&mut self, v: &T) {
        v.trace(self);
    }

    /// Says that a value cannot report its `Gc`s now (the `Trace` of a `RefCell` that is
    /// mutably borrowed: reading its contents would alias the `&mut`). The collection that
    /// asked is abandoned: it frees nothing, and counts in [`HeapStats`](super::HeapStats)'s
    /// `abandoned`.
    pub fn cannot_see(&mut self) {
        self.blocked = true;
    }
}

/// A type whose values the collector can trace: [`Trace::trace`] hands every [`Gc`] the value
/// holds (directly or through memory it owns) to the [`Tracer`].
///
/// The collector calls `trace` on the objects it marks whose type is not [`Trace::INLINE`]
/// (or needs `Drop`), and on the roots; `trace` runs in the middle of a collection, so it must
/// not allocate or look at the heap (it would panic); it only calls [`Tracer::mark`] (or
/// [`Tracer::root`], [`Tracer::cannot_see`]).
///
/// # Safety
/// `trace` must report every `Gc` reachable from the value without going through another
/// `Gc`'s object; [`Trace::NO_GC`] may be `true` only if the value holds no `Gc` at all, and
/// [`Trace::INLINE`] only if every such `Gc` is stored in the value's own bytes as an aligned
/// word (so a copy of the value in the heap, which the collector scans word by word, shows
/// them). The type's `Drop`, if it has one (its own impl, not its fields'), must not read a
/// `Gc` it holds: the collector drops the objects it frees in no particular order, so the
/// object a `Gc` points to may have been dropped already. `#[derive(Trace)]` writes a correct
/// impl from the fields' impls, and refuses a type that implements `Drop`.
pub unsafe trait Trace {
    /// No `Gc` is reachable from a value of this type.
    const NO_GC: bool;
    /// Every `Gc` reachable from a value of this type is one of its own (aligned) words: the
    /// type may be the `T` of a `Gc<T>` (`Gc::new` asserts it at compile time).
    const INLINE: bool;
    /// Hands every `Gc` this value holds to `t`.
    fn trace(&self, t: &mut Tracer);
}

macro_rules! no_gc {
    ($($t:ty),*) => {$(
        // SAFETY: holds no `Gc`.
        unsafe impl Trace for $t {
            const NO_GC: bool = true;
            const INLINE: bool = true;
            #[inline]
            fn trace(&self, _: &mut Tracer) {}
        }
    )*};
}
no_gc!(
    (),
    bool,
    char,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    String,
    str
);

// SAFETY: a `Gc` is one aligned word, reported as itself.
unsafe impl<T: 'static> Trace for Gc<T> {
    const NO_GC: bool = false;
    const INLINE: bool = true;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        t.mark(*self);
    }
}

// SAFETY: the referent's `Gc`s are behind a pointer, so inline only when there are none.
unsafe impl<T: Trace + ?Sized> Trace for &T {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::NO_GC;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        (**self).trace(t)
    }
}

// SAFETY: as for `&T`.
unsafe impl<T: Trace + ?Sized> Trace for &mut T {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::NO_GC;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        (**self).trace(t)
    }
}

// SAFETY: as for `&T` (the items live in the box's or vector's own allocation).
unsafe impl<T: Trace + ?Sized> Trace for Box<T> {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::NO_GC;
    fn trace(&self, t: &mut Tracer) {
        (**self).trace(t)
    }
}

// SAFETY: as for `Box`.
unsafe impl<T: Trace> Trace for Vec<T> {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::NO_GC;
    fn trace(&self, t: &mut Tracer) {
        if T::NO_GC {
            return;
        }
        self.iter().for_each(|x| x.trace(t))
    }
}

// SAFETY: the items are the slice's own bytes.
unsafe impl<T: Trace> Trace for [T] {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::INLINE;
    fn trace(&self, t: &mut Tracer) {
        if T::NO_GC {
            return;
        }
        self.iter().for_each(|x| x.trace(t))
    }
}

// SAFETY: the items are the array's own bytes.
unsafe impl<T: Trace, const N: usize> Trace for [T; N] {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::INLINE;
    fn trace(&self, t: &mut Tracer) {
        self.iter().for_each(|x| x.trace(t))
    }
}

// SAFETY: the payload is stored in the option's bytes.
unsafe impl<T: Trace> Trace for Option<T> {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::INLINE;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        if let Some(x) = self {
            x.trace(t)
        }
    }
}

// SAFETY: the value is stored in the cell's bytes; reading a copy is what `Cell` allows.
unsafe impl<T: Trace + Copy> Trace for Cell<T> {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::INLINE;
    #[inline]
    fn trace(&self, t: &mut Tracer) {
        self.get().trace(t)
    }
}

// SAFETY: `try_borrow` fails only while a `RefMut` is alive; then the contents cannot be read
// without aliasing it, and the collection is abandoned. Not inline even when `T` is: the word
// by word scan of a heap object cannot tell whether the cell is mutably borrowed.
unsafe impl<T: Trace + ?Sized> Trace for RefCell<T> {
    const NO_GC: bool = T::NO_GC;
    const INLINE: bool = T::NO_GC;
    fn trace(&self, t: &mut Tracer) {
        if T::NO_GC {
            return;
        }
        match self.try_borrow() {
            Ok(v) => v.trace(t),
            Err(_) => t.cannot_see(),
        }
    }
}

/// Impls for containers whose items live in memory the container owns: `$iter` turns the
/// container into an iterator of traceable items.
macro_rules! owning {
    ($([$($g:tt)*] $t:ty => |$v:ident| $iter:expr, $($item:ty),+;)*) => {$(
        // SAFETY: the items are in the container's own allocation, never inline; every item is
        // reported.
        unsafe impl<$($g)*> Trace for $t {
            const NO_GC: bool = true $(&& <$item as Trace>::NO_GC)+;
            const INLINE: bool = Self::NO_GC;
            fn trace(&self, t: &mut Tracer) {
                if Self::NO_GC {
                    return;
                }
                let $v = self;
                $iter.for_each(|x| x.trace(t))
            }
        }
    )*};
}
owning!(
    [T: Trace] VecDeque<T> => |v| v.iter(), T;
    [T: Trace, S] HashSet<T, S> => |v| v.iter(), T;
    [T: Trace] BTreeSet<T> => |v| v.iter(), T;
    [T: Trace, S] hashbrown::HashSet<T, S> => |v| v.iter(), T;
);

/// Impls for maps: every key and every value is reported.
macro_rules! map {
    ($([$($g:tt)*] $t:ty;)*) => {$(
        // SAFETY: the entries are in the map's own allocation, never inline; every key and
        // value is reported.
        unsafe impl<$($g)*> Trace for $t {
            const NO_GC: bool = K::NO_GC && V::NO_GC;
            const INLINE: bool = Self::NO_GC;
            fn trace(&self, t: &mut Tracer) {
                if Self::NO_GC {
                    return;
                }
                for (k, v) in self {
                    k.trace(t);
                    v.trace(t);
                }
            }
        }
    )*};
}
map!(
    [K: Trace, V: Trace, S] HashMap<K, V, S>;
    [K: Trace, V: Trace] BTreeMap<K, V>;
    [K: Trace, V: Trace, S] hashbrown::HashMap<K, V, S>;
);

macro_rules! tuple {
    ($($n:tt $t:ident),*) => {
        // SAFETY: the fields are the tuple's own bytes.
        unsafe impl<$($t: Trace),*> Trace for ($($t,)*) {
            const NO_GC: bool = true $(&& $t::NO_GC)*;
            const INLINE: bool = true $(&& $t::INLINE)*;
            fn trace(&self, t: &mut Tracer) {
                $(self.$n.trace(t);)*
            }
        }
    };
}
tuple!(0 A);
tuple!(0 A, 1 B);
tuple!(0 A, 1 B, 2 C);
tuple!(0 A, 1 B, 2 C, 3 D);
tuple!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);

/// The safe point's probe (autoref specialization): `(&&&&Probe(&x)).__jit_view()` turns a
/// green or red `x` into a value the portal's roots closure captures *by value*, so that the
/// closure (whose address the driver keeps while compiled code runs) never holds the address
/// of the portal's variable, which would keep it in memory for the whole loop:
/// a copy when `x`'s type is `Trace + Copy` (`Gc`, scalars, `&T`), the reference it holds when
/// it is a `&mut T` with `T: Trace`, a reference to `x` for another `Trace` type (an owned
/// `Vec`), and an opaque marker otherwise (the collection is then skipped).
#[doc(hidden)]
pub mod probe {
    use super::{Trace, Tracer};

    /// A green or red of the portal.
    pub struct Probe<'a, T: ?Sized>(pub &'a T);

    /// What a roots closure captures of a green or red.
    pub trait View {
        /// Reports the `Gc`s (or marks the roots opaque).
        fn trace_view(&self, t: &mut Tracer);
    }

    /// A copy of a `Trace + Copy` value.
    pub struct Copied<T>(T);
    impl<T: Trace> View for Copied<T> {
        #[inline]
        fn trace_view(&self, t: &mut Tracer) {
            if !t.shallow {
                self.0.trace(t);
            }
            if !T::INLINE {
                // A reference to memory holding `Gc`s: its address (0, which no input
                // equals, if it is not one word).
                let a = if std::mem::size_of::<T>() == 8 {
                    // SAFETY: `T` is one word (a thin reference); its bits are the address.
                    unsafe { std::mem::transmute_copy::<T, usize>(&self.0) }
                } else {
                    0
                };
                t.anchors.push(a);
            }
        }
    }

    /// A reference to a `Trace` value.
    pub struct Borrowed<'a, T: ?Sized>(&'a T);
    impl<T: Trace + ?Sized> View for Borrowed<'_, T> {
        #[inline]
        fn trace_view(&self, t: &mut Tracer) {
            if !t.shallow {
                self.0.trace(t);
            }
            if !T::NO_GC {
                t.anchors.push(self.0 as *const T as *const () as usize);
            }
        }
    }

    /// A `&'static` green of a portal whose reference greens are all `&'static`: traced as
    /// the view it wraps, but no anchor. Compiled code may collect after it moved on to other
    /// greens than those it was entered with; an anchor is there so that the roots closure
    /// still describes the run's state, which a green that is not an input cannot promise.
    /// A `&'static` object cannot go away, but the contract of `gc::enable_collection` asks
    /// that such a portal's green objects hold no `Gc` that nothing else roots (a program's
    /// constants that the interpreter also holds among its roots).
    pub struct NoAnchor<V>(pub V);
    impl<V: View> View for NoAnchor<V> {
        #[inline]
        fn trace_view(&self, t: &mut Tracer) {
            let n = t.anchors.len();
            self.0.trace_view(t);
            t.anchors.truncate(n);
        }
    }

    /// A value the collector cannot see into.
    pub struct Opaque;
    impl View for Opaque {
        #[inline]
        fn trace_view(&self, t: &mut Tracer) {
            t.opaque = true;
        }
    }

    /// Chosen for `Trace + Copy` values.
    pub trait ViaCopy {
        /// The view.
        type V: View;
        /// Makes the view.
        fn __jit_view(&self) -> Self::V;
    }
    impl<T: Trace + Copy> ViaCopy for &&&Probe<'_, T> {
        type V = Copied<T>;
        #[inline]
        fn __jit_view(&self) -> Copied<T> {
            Copied(*self.0)
        }
    }

    /// Chosen for `&mut T` with `T: Trace`.
    pub trait ViaMut<'a> {
        /// The view.
        type V: View;
        /// Makes the view.
        fn __jit_view(&self) -> Self::V;
    }
    impl<'a, T: Trace + ?Sized> ViaMut<'a> for &&Probe<'a, &mut T> {
        type V = Borrowed<'a, T>;
        #[inline]
        fn __jit_view(&self) -> Borrowed<'a, T> {
            Borrowed(&**self.0)
        }
    }

    /// Chosen for other `Trace` values.
    pub trait ViaRef<'a> {
        /// The view.
        type V: View;
        /// Makes the view.
        fn __jit_view(&self) -> Self::V;
    }
    impl<'a, T: Trace + ?Sized> ViaRef<'a> for &Probe<'a, T> {
        type V = Borrowed<'a, T>;
        #[inline]
        fn __jit_view(&self) -> Borrowed<'a, T> {
            Borrowed(self.0)
        }
    }

    /// Chosen otherwise.
    pub trait ViaOpaque {
        /// The view.
        type V: View;
        /// Makes the view.
        fn __jit_view(&self) -> Self::V;
    }
    impl<T: ?Sized> ViaOpaque for Probe<'_, T> {
        type V = Opaque;
        #[inline]
        fn __jit_view(&self) -> Opaque {
            Opaque
        }
    }
}
