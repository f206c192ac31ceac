//! Objects of the framework's heap in traced code: [`Gc<T>`] as a value (one ref register,
//! the same handle as a reference: a [`Ptr<T>`]), its allocation, `Gc::new(T { .. })`, and
//! identity, `Gc::ptr_eq(a, b)`.
//!
//! Owns: how an allocation becomes a jitcode `new` plus the stores that initialize its fields.
//! Must not know: syntax (the macro recognizes `Gc::new` with a struct literal and calls
//! [`gc_new`] and [`init_field`]), or guest languages.

use std::mem::{align_of, size_of};
use std::sync::Arc;

use super::place::{JitStruct, PlaceTarget};
use super::types::{JitType, ShimArg, ShimRet, Stored};
use super::Ptr;
use crate::gc::Gc;
use crate::jitcode::{Builder, Kind, Op, SizeDescr, Value};

/// `Gc::new(T { .. })`: emits the allocation of a zeroed `T`; the macro then initializes every
/// field with [`init_field`]. The result is the new object (the handle of a `Gc<T>`). `T` must
/// be a plain object type (its `Gc`s in its own bytes, no drop glue: see `gc`'s object kinds),
/// since traced and compiled code allocate without a header: a compile-time error otherwise.
pub fn gc_new<T: JitStruct + crate::gc::Trace + 'static>(b: &mut Builder) -> Ptr<T> {
    const {
        assert!(
            T::INLINE && !std::mem::needs_drop::<T>(),
            "Gc::new in traced code: the object's type holds a Gc outside its own bytes or \
             needs Drop (allocate it in a #[dont_look_inside] function)"
        )
    };
    let dst = b.fresh(Kind::Ref);
    b.emit(Op::New {
        dst,
        descr: Arc::new(SizeDescr {
            name: std::any::type_name::<T>().to_string(),
            size: size_of::<T>(),
            align: align_of::<T>(),
        }),
    });
    Ptr::new(dst)
}

/// Initializes a field of an object [`gc_new`] just allocated (also an immutable one: this is
/// its construction).
pub fn init_field<F: Stored>(b: &mut Builder, p: Ptr<F>, v: F::Handle) {
    F::store(b, p, v)
}

/// The result of `Gc::new(..)` in traced code: rustc checks that the struct literal's type is
/// the `T` of the `Gc<T>` the code expects, natively; here the handle is the object's place.
pub fn gc_value<T>(p: Ptr<T>) -> Ptr<T> {
    p
}

/// `Gc::ptr_eq(a, b)` in traced code: whether two objects are the same, one comparison of
/// their addresses (the optimizer folds it when both are known).
pub fn gc_ptr_eq<T>(b: &mut Builder, x: Ptr<T>, y: Ptr<T>) -> super::Reg<bool> {
    let (a, c) = (x.materialize(b), y.materialize(b));
    let dst = b.fresh(Kind::Int);
    b.emit(Op::RefCompare {
        eq: true,
        dst,
        a,
        b: c,
    });
    super::Reg::new(dst)
}

impl<T: 'static> JitType for Gc<T> {
    type Handle = Ptr<T>;
    fn to_values(self, out: &mut Vec<Value>) {
        out.push(Value::Ref(self.as_ptr() as usize));
    }
    unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
        let a = vals.next().expect("missing value").addr();
        // SAFETY: by the contract, `a` is the address of a live object of the heap.
        unsafe { Gc::from_addr(a) }
    }
}

impl<T: 'static> Stored for Gc<T> {
    fn load(b: &mut Builder, p: Ptr<Self>) -> Ptr<T> {
        // A `Gc<T>` is one non-null pointer, stored like a reference.
        <&'static T as Stored>::load(b, p.cast::<&'static T>())
    }
    fn store(b: &mut Builder, p: Ptr<Self>, v: Ptr<T>) {
        <&'static T as Stored>::store(b, p.cast::<&'static T>(), v)
    }
}

impl<T: PlaceTarget + 'static> PlaceTarget for Gc<T> {
    type Struct = T::Struct;
    fn to_struct(b: &mut Builder, p: Ptr<Self>) -> Ptr<T::Struct> {
        let inner = <Gc<T> as Stored>::load(b, p);
        T::to_struct(b, inner)
    }
}

impl<T: 'static> ShimArg for Gc<T> {
    type Abi = usize;
    const KIND: Kind = Kind::Ref;
    #[inline(always)]
    unsafe fn from_abi(v: usize) -> Self {
        // SAFETY: `v` is the address of a live object of the heap (the contract).
        unsafe { Gc::from_addr(v) }
    }
    #[inline(always)]
    fn to_abi(self) -> usize {
        self.as_ptr() as usize
    }
}

impl<T: 'static> ShimRet for Gc<T> {
    type Abi = usize;
    const KIND: Option<Kind> = Some(Kind::Ref);
    #[inline(always)]
    fn to_abi(self) -> usize {
        self.as_ptr() as usize
    }
    fn abi_value(v: usize) -> Option<Value> {
        Some(Value::Ref(v))
    }
}
