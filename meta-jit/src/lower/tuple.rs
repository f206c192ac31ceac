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
//! registers ([`ElemPlace`]).
//! Must not know: syntax; guest languages.

use std::convert::Infallible;
use std::marker::PhantomData;

use super::place::{field_of_place, JitStruct, PlaceTarget};
use super::types::{JitType, Stored};
use super::value::{FieldBase, PlaceOf, MAX_VALUE_REGS};
use super::{FieldFlags, Handle, Ptr};
use crate::jitcode::{Builder, Kind, Register, Value};

/// The place of element `t.N` of a tuple `t` held in registers: reads and writes are register
/// moves. `H` is the element's handle type.
pub struct ElemPlace<H> {
    regs: [Register; MAX_VALUE_REGS],
    n: u8,
    _h: PhantomData<fn() -> H>,
}
impl<H> Clone for ElemPlace<H> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<H> Copy for ElemPlace<H> {}

impl<H: Handle> ElemPlace<H> {
    fn handle(&self) -> H {
        let regs = &self.regs[..usize::from(self.n)];
        assert_eq!(
            regs.iter().map(|r| r.kind).collect::<Vec<Kind>>(),
            H::kinds(),
            "a tuple element's registers do not match its type"
        );
        H::from_regs(&mut regs.iter().copied())
    }
}

/// The type of a value that only registers hold: what reading an [`ElemPlace`] gives. No
/// value of it exists, and no place in memory holds one.
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

impl<H: Handle> PlaceOf<InRegs<H>> for ElemPlace<H> {
    fn read_value(self, _b: &mut Builder) -> H {
        self.handle()
    }
    fn write_value(self, b: &mut Builder, v: H) {
        self.handle().assign(b, v)
    }
}

/// The place of the element named `name` (its index) of a tuple whose elements' registers are
/// `regs`; `F` is that element's handle type (what [`ElemPlace::handle`] checks).
fn elem<F>(regs: Vec<Vec<Register>>, name: &str) -> ElemPlace<F> {
    let i: usize = name.parse().expect("a tuple's field is named by its index");
    let regs = &regs[i];
    assert!(
        regs.len() <= MAX_VALUE_REGS,
        "a tuple element of {} registers in traced code; at most {MAX_VALUE_REGS} are supported",
        regs.len()
    );
    let mut a = [regs.first().copied().unwrap_or(NO_REG); MAX_VALUE_REGS];
    a[..regs.len()].copy_from_slice(regs);
    ElemPlace {
        regs: a,
        n: regs.len() as u8,
        _h: PhantomData,
    }
}

/// Filler for the unused registers of an [`ElemPlace`].
const NO_REG: Register = Register {
    kind: Kind::Int,
    index: 0,
};

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
            type Out<F> = ElemPlace<F>;
            fn project<F>(
                self,
                b: &mut Builder,
                name: &'static str,
                _proj: impl FnOnce(*const Self) -> *const F,
            ) -> ElemPlace<F> {
                // `F` is the element's handle type: the projection names `(*t).N` of a tuple
                // of handles.
                let regs = vec![$( self.$i.regs(b) ),+];
                elem::<F>(regs, name)
            }
        }

        impl<$($H: Handle),+> FieldBase<($($H,)+)> for ElemPlace<($($H,)+)> {
            type Out<F> = ElemPlace<F>;
            fn project<F>(
                self,
                b: &mut Builder,
                name: &'static str,
                proj: impl FnOnce(*const ($($H,)+)) -> *const F,
            ) -> ElemPlace<F> {
                self.handle().project(b, name, proj)
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
