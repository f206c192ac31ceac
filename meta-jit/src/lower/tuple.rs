//! Tuples in traced code (up to six elements): built (`(a, b)`), passed to and returned from
//! inlined functions, destructured (`let (x, y) = t;`, `match t { (0, y) => .. }`), read and
//! written by field (`t.0`), and loaded from or stored to memory (`pairs[i] = (k, v)`, a field
//! of type `(i64, f64)`).
//!
//! Owns: the handle of a tuple, which is the tuple of its elements' handles (so building one
//! from its elements needs no Rust type: `(a, b)` lowers to the pair of `a`'s and `b`'s
//! handles); the `JitType` and `Stored` impls of tuples, which load and store element by
//! element at the offsets rustc chose (found by projection, as for a struct's fields, with the
//! descriptors a field of the tuple type gets); and the place of an element of a tuple held in
//! registers (a `RegPlace` of [`InRegs`]).
//! Must not know: syntax; guest languages.

use std::convert::Infallible;
use std::marker::PhantomData;

use super::place::{field_of_place, JitStruct, PlaceTarget};
use super::types::{JitType, Stored};
use super::value::{FieldBase, PlaceOf, RegPlace};
use super::{FieldFlags, Handle, Ptr};
use crate::jitcode::{Builder, Kind, Register, Value};

/// The type of a value that only registers hold, with handle `H`: the place of element `t.N`
/// of a tuple `t` held in registers is a `RegPlace<InRegs<H>>` (reading it gives the element's
/// handle). No value of it exists, and no place in memory holds one.
pub enum InRegs<H> {
    #[doc(hidden)]
    Never(Infallible, PhantomData<fn() -> H>),
}

impl<H: Handle> JitType for InRegs<H> {
    type Handle = H;
    fn to_values(self, _: &mut Vec<Value>) {
        match self {
            InRegs::Never(n, _) => match n {},
        }
    }
    unsafe fn from_values(_: &mut dyn Iterator<Item = Value>) -> Self {
        unreachable!("no value lives in registers only outside traced code")
    }
}

impl<H: Handle> Stored for InRegs<H> {
    fn load(_: &mut Builder, _: Ptr<Self>) -> H {
        unreachable!("no place in memory holds a value of registers only")
    }
    fn store(_: &mut Builder, _: Ptr<Self>, _: H) {
        unreachable!("no place in memory holds a value of registers only")
    }
}

macro_rules! tuples {
    ($( ($($T:ident $H:ident $i:tt),+) )*) => {$(
        impl<$($H: Handle),+> Handle for ($($H,)+) {
            fn fresh(b: &mut Builder) -> Self {
                ($($H::fresh(b),)+)
            }
            fn assign(self, b: &mut Builder, src: Self) {
                $( self.$i.assign(b, src.$i); )+
            }
            fn regs(self, b: &mut Builder) -> Vec<Register> {
                let mut v = Vec::new();
                $( v.extend(self.$i.regs(b)); )+
                v
            }
            fn kinds() -> Vec<Kind> {
                let mut v = Vec::new();
                $( v.extend($H::kinds()); )+
                v
            }
            fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
                ($($H::from_regs(regs),)+)
            }
            fn with_origin_of(self, from: Self) -> Self {
                ($(self.$i.with_origin_of(from.$i),)+)
            }
        }

        impl<$($T: JitType),+> JitType for ($($T,)+) {
            type Handle = ($($T::Handle,)+);
            fn to_values(self, out: &mut Vec<Value>) {
                $( self.$i.to_values(out); )+
            }
            unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
                // SAFETY: forwarded: the values are those of each element in turn.
                ($( unsafe { $T::from_values(vals) }, )+)
            }
        }

        // SAFETY: no field of a tuple is claimed immutable or quasi-immutable.
        unsafe impl<$($T),+> JitStruct for ($($T,)+) {
            fn field_flags(_: &str) -> FieldFlags {
                FieldFlags::default()
            }
        }

        impl<$($T),+> PlaceTarget for ($($T,)+) {
            type Struct = Self;
            fn to_struct(_b: &mut Builder, p: Ptr<Self>) -> Ptr<Self> {
                p
            }
        }

        impl<$($T: Stored),+> Stored for ($($T,)+) {
            fn load(b: &mut Builder, p: Ptr<Self>) -> Self::Handle {
                ($({
                    // SAFETY: only the element's address is computed, from a pointer to an
                    // uninitialized tuple (see `field_of_place`).
                    let e = field_of_place(b, p, stringify!($i), |t| unsafe {
                        ::core::ptr::addr_of!((*t).$i)
                    });
                    $T::load(b, e)
                },)+)
            }
            fn store(b: &mut Builder, p: Ptr<Self>, v: Self::Handle) {
                $({
                    // SAFETY: as in `load`.
                    let e = field_of_place(b, p, stringify!($i), |t| unsafe {
                        ::core::ptr::addr_of!((*t).$i)
                    });
                    $T::store(b, e, v.$i);
                })+
            }
        }

        impl<$($H: Handle),+> FieldBase<($($H,)+)> for ($($H,)+) {
            type Out<F> = RegPlace<InRegs<F>>;
            fn project<F>(
                self,
                b: &mut Builder,
                name: &'static str,
                _proj: impl FnOnce(*const Self) -> *const F,
            ) -> RegPlace<InRegs<F>> {
                // `F` is the element's handle type: the projection names `(*t).N` of a tuple
                // of handles, and `name` is `N`.
                let regs = match name {
                    $( stringify!($i) => self.$i.regs(b), )+
                    _ => unreachable!("a tuple's field is named by its index"),
                };
                RegPlace::new(&regs)
            }
        }

        impl<$($H: Handle),+> FieldBase<($($H,)+)> for RegPlace<InRegs<($($H,)+)>> {
            type Out<F> = RegPlace<InRegs<F>>;
            fn project<F>(
                self,
                b: &mut Builder,
                name: &'static str,
                proj: impl FnOnce(*const ($($H,)+)) -> *const F,
            ) -> RegPlace<InRegs<F>> {
                self.read_value(b).project(b, name, proj)
            }
        }
    )*};
}

tuples! {
    (A HA 0)
    (A HA 0, B HB 1)
    (A HA 0, B HB 1, C HC 2)
    (A HA 0, B HB 1, C HC 2, D HD 3)
    (A HA 0, B HB 1, C HC 2, D HD 3, E HE 4)
    (A HA 0, B HB 1, C HC 2, D HD 3, E HE 4, G HG 5)
}
