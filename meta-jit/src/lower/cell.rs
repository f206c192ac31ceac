//! `Cell<T>` in traced code, for a `T` traced code copies between memory and registers: how an
//! interpreter changes an object it reaches through a shared reference (a `Gc<T>`, a `&T`).
//! `Cell<T>` has `T`'s layout (`#[repr(transparent)]`): `c.get()` is a load of the place,
//! `c.set(v)` a store, `Cell::new(x)` is `x`'s registers (stored whole where the cell goes),
//! all in the alias class of the place and never taken for immutable.
//!
//! Owns: [`CellMethods`], [`cell_new`], `Cell<T>` as a [`JitType`] and [`Stored`] type.
//! Must not know: syntax (the macro lowers `Cell::new(x)` to [`cell_new`]), or guest languages.

use super::types::{JitType, Stored};
use super::{Handle, Ptr};
use crate::jitcode::Builder;

/// Methods of `Cell<T>` for a `T` traced code copies between memory and registers: how an
/// object that traced code reaches through a shared reference (a `Gc<T>`, a `&T`) changes.
/// `Cell<T>` has `T`'s layout (`#[repr(transparent)]`), so `c.get()` is a load of the place
/// and `c.set(v)` a store, in the alias class of the place (the cell's field, or an item of
/// its `Vec`).
pub trait CellMethods<T: Stored> {
    /// `c.get()`.
    fn get(self, b: &mut Builder) -> T::Handle;
    /// `c.set(v)`.
    fn set(self, b: &mut Builder, v: T::Handle);
    /// `c.replace(v)`: the old value.
    fn replace(self, b: &mut Builder, v: T::Handle) -> T::Handle;
}
impl<T: Stored + Copy> CellMethods<T> for Ptr<std::cell::Cell<T>> {
    fn get(self, b: &mut Builder) -> T::Handle {
        T::load(b, contents(self))
    }
    fn set(self, b: &mut Builder, v: T::Handle) {
        T::store(b, contents(self), v)
    }
    fn replace(self, b: &mut Builder, v: T::Handle) -> T::Handle {
        let old = T::load(b, contents(self));
        T::store(b, contents(self), v);
        old
    }
}

/// The place of a cell's value: mutable whatever the cell sits in (a cell in an immutable field
/// or item, like an inline cache in a function's immutable code, still changes).
fn contents<T>(c: Ptr<std::cell::Cell<T>>) -> Ptr<T> {
    let mut p = c.cast::<T>();
    p.flags.immutable = false;
    p.flags.quasi_immutable = false;
    p.flags.immutable_items = false;
    p.flags.deep = false;
    p
}

/// `Cell::new(x)` in traced code: the cell is its value's registers (it has `T`'s layout), to
/// be stored where the cell goes (a field of a new object).
pub fn cell_new<H: Handle>(_b: &mut Builder, x: H) -> H {
    x
}

impl<T: JitType + Copy> JitType for std::cell::Cell<T> {
    type Handle = T::Handle;
    fn to_values(self, out: &mut Vec<crate::jitcode::Value>) {
        self.get().to_values(out)
    }
    unsafe fn from_values(vals: &mut dyn Iterator<Item = crate::jitcode::Value>) -> Self {
        // SAFETY: forwarded: the values are those of a `T`.
        std::cell::Cell::new(unsafe { T::from_values(vals) })
    }
}

/// A cell stored whole: its value (`Gc::new(Obj { c: Cell::new(x), .. })` initializes the
/// field this way); never taken for immutable.
impl<T: Stored + Copy> Stored for std::cell::Cell<T> {
    fn load(b: &mut Builder, p: Ptr<Self>) -> T::Handle {
        T::load(b, contents(p))
    }
    fn store(b: &mut Builder, p: Ptr<Self>, v: T::Handle) {
        T::store(b, contents(p), v)
    }
}
