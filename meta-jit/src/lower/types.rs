//! Which Rust types traced code can hold, and how their values cross into jitcode registers,
//! runner values and `extern "C"` shims.
//!
//! Owns: [`Scalar`] (one-register types), [`JitType`] (every type a parameter, result, variable
//! or loaded field may have, with its handle), and the shim ABI ([`ShimArg`], [`ShimRet`]).
//! Must not know: syntax or ops beyond loads and stores of a value.

use std::sync::Arc;

use super::place::{probe_slice_layout, scalar_descr};
use super::{Handle, Ptr, Reg, SliceRef};
use crate::jitcode::{ArrayDescr, Builder, IntTy, Kind, Op, Value};

/// A type held in one register.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a scalar traced code can hold in a register",
    label = "not a scalar",
    note = "scalars are the integer types, `bool`, `char` and `f64`; an `Option` or `Result` \
            traced code holds or stores needs scalar payloads (or is an `Option<Gc<T>>`): for \
            other payloads declare a `#[repr(C, u8)]` enum with `#[derive(JitLayout)]`"
)]
pub trait Scalar: Copy + 'static {
    /// The register kind.
    const KIND: Kind;
    /// For integer-like types, the width and signedness.
    const INT: Option<IntTy>;
    /// The value as a register value.
    fn to_value(self) -> Value;
    /// The value back from a register value.
    ///
    /// # Safety
    /// `v` came from [`Scalar::to_value`] of a `Self` or from an operation jitcode performed
    /// on such values with this type's semantics (so it is in range for `Self`).
    unsafe fn from_value(v: Value) -> Self;
}

macro_rules! int_scalars {
    ($($t:ty => $bits:expr, $signed:expr;)*) => {$(
        impl Scalar for $t {
            const KIND: Kind = Kind::Int;
            const INT: Option<IntTy> = Some(IntTy { bits: $bits, signed: $signed });
            #[inline]
            fn to_value(self) -> Value {
                Value::Int(self as i64)
            }
            #[inline]
            unsafe fn from_value(v: Value) -> Self {
                v.int() as $t
            }
        }
    )*};
}

int_scalars! {
    i8 => 8, true; i16 => 16, true; i32 => 32, true; i64 => 64, true; isize => 64, true;
    u8 => 8, false; u16 => 16, false; u32 => 32, false; u64 => 64, false; usize => 64, false;
}

const _: () = assert!(
    std::mem::size_of::<usize>() == 8,
    "meta-jit supports 64-bit targets only"
);

impl Scalar for bool {
    const KIND: Kind = Kind::Int;
    const INT: Option<IntTy> = Some(IntTy::BOOL);
    #[inline]
    fn to_value(self) -> Value {
        Value::Int(i64::from(self))
    }
    #[inline]
    unsafe fn from_value(v: Value) -> Self {
        v.int() != 0
    }
}

impl Scalar for char {
    const KIND: Kind = Kind::Int;
    const INT: Option<IntTy> = Some(IntTy {
        bits: 32,
        signed: false,
    });
    #[inline]
    fn to_value(self) -> Value {
        Value::Int(i64::from(u32::from(self)))
    }
    #[inline]
    unsafe fn from_value(v: Value) -> Self {
        // SAFETY: by the contract, the value is a valid char's scalar value.
        unsafe { char::from_u32_unchecked(v.int() as u32) }
    }
}

impl Scalar for f64 {
    const KIND: Kind = Kind::Float;
    const INT: Option<IntTy> = None;
    #[inline]
    fn to_value(self) -> Value {
        Value::Float(self)
    }
    #[inline]
    unsafe fn from_value(v: Value) -> Self {
        v.float()
    }
}

/// A type a parameter, result or variable of traced code may have, with the handle that holds it
/// in jitcode.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a value in traced code",
    label = "this value has type `{Self}`, which jitcode cannot hold in registers",
    note = "traced code holds integers, `bool`, `char`, `f64`, references `&T`/`&mut T`, slices `&[T]` and \
            `Option`/`Result` of scalars (and fieldless enums marked `#[jit(scalar)]`); take a reference to a \
            struct or enum instead of copying it, or move this code into a `#[dont_look_inside]` function"
)]
pub trait JitType {
    /// The handle holding a value of this type.
    type Handle: Handle;
    /// Appends the runner values of `self` (one per register of the handle).
    fn to_values(self, out: &mut Vec<Value>);
    /// Rebuilds a value from runner values (consuming as many as the handle has registers).
    ///
    /// # Safety
    /// The values are those of a live value of this type (for references: the address of a
    /// live object, valid for the lifetime the caller picks).
    unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self;
}

/// A [`JitType`] whose values traced code reads from and writes to memory (struct fields, array
/// elements, through references).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied between memory and registers by traced code",
    label = "this place has type `{Self}`",
    note = "traced code loads and stores integers, `bool`, `char`, `f64`, references, slices, `Gc<T>`, \
            `Option<Gc<T>>`, tuples, `Option`s and `Result`s of scalars, and `Copy` structs and enums \
            with `#[derive(JitLayout)]` whose fields are such values (an `Option` or `Result` of anything \
            else has no layout Rust defines: declare a `#[repr(C, u8)]` enum); a type that is not `Copy` \
            is not copied, since assigning it drops the old value natively: take a reference (`&place`), \
            match on it in place, or write it in a `#[dont_look_inside]` function"
)]
pub trait Stored: JitType {
    /// Emits the load of a value of this type stored at `p`.
    fn load(b: &mut Builder, p: Ptr<Self>) -> Self::Handle;
    /// Emits the store of `v` into `p`.
    fn store(b: &mut Builder, p: Ptr<Self>, v: Self::Handle);
}

fn emit_load(
    b: &mut Builder,
    base: Register3,
    descr: crate::jitcode::FieldDescr,
    dst: crate::jitcode::Register,
) {
    match base.index {
        None => b.emit(Op::GetField {
            dst,
            base: base.base,
            descr: Arc::new(descr),
        }),
        Some((index, item_size)) => b.emit(Op::GetArrayItem {
            dst,
            base: base.base,
            index,
            descr: Arc::new(ArrayDescr {
                item_size,
                item: descr,
            }),
        }),
    }
}

fn emit_store(
    b: &mut Builder,
    base: Register3,
    descr: crate::jitcode::FieldDescr,
    src: crate::jitcode::Register,
) {
    match base.index {
        None => b.emit(Op::SetField {
            base: base.base,
            src,
            descr: Arc::new(descr),
        }),
        Some((index, item_size)) => b.emit(Op::SetArrayItem {
            base: base.base,
            index,
            src,
            descr: Arc::new(ArrayDescr {
                item_size,
                item: descr,
            }),
        }),
    }
}

/// The address part of a place.
#[derive(Clone, Copy)]
struct Register3 {
    base: crate::jitcode::Register,
    index: Option<(crate::jitcode::Register, usize)>,
}

fn addr_of<T: ?Sized>(p: &Ptr<T>) -> Register3 {
    Register3 {
        base: p.base,
        index: p.index,
    }
}

/// Loads a scalar stored at `p` (used by `Stored` impls, including derived ones).
pub fn load_scalar<T: Scalar>(b: &mut Builder, p: Ptr<T>) -> Reg<T> {
    let dst = b.fresh(T::KIND);
    emit_load(b, addr_of(&p), scalar_descr::<T>(&p), dst);
    Reg::new(dst)
}

/// Stores a scalar into `p`.
pub fn store_scalar<T: Scalar>(b: &mut Builder, p: Ptr<T>, v: Reg<T>) {
    emit_store(b, addr_of(&p), scalar_descr::<T>(&p), v.reg);
}

macro_rules! scalar_jit_type {
    ($($t:ty),*) => {$(
        impl JitType for $t {
            type Handle = Reg<$t>;
            fn to_values(self, out: &mut Vec<Value>) {
                out.push(Scalar::to_value(self));
            }
            unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
                // SAFETY: forwarded contract.
                unsafe { <$t as Scalar>::from_value(vals.next().expect("missing value")) }
            }
        }
        impl Stored for $t {
            fn load(b: &mut Builder, p: Ptr<Self>) -> Reg<$t> {
                let dst = b.fresh(<$t as Scalar>::KIND);
                emit_load(b, addr_of(&p), scalar_descr::<$t>(&p), dst);
                Reg::new(dst)
            }
            fn store(b: &mut Builder, p: Ptr<Self>, v: Reg<$t>) {
                emit_store(b, addr_of(&p), scalar_descr::<$t>(&p), v.reg);
            }
        }
    )*};
}
scalar_jit_type!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, char, f64);

impl JitType for () {
    type Handle = ();
    fn to_values(self, _: &mut Vec<Value>) {}
    unsafe fn from_values(_: &mut dyn Iterator<Item = Value>) {}
}

fn ref_descr<T: ?Sized>(
    p: &Ptr<T>,
    size: u8,
    kind: Kind,
    signed: bool,
) -> crate::jitcode::FieldDescr {
    ref_descr_part(p, size, kind, signed, "")
}

/// [`ref_descr`] for the part `suffix` of the place (a slice reference's `.ptr` or `.len`).
fn ref_descr_part<T: ?Sized>(
    p: &Ptr<T>,
    size: u8,
    kind: Kind,
    signed: bool,
    suffix: &str,
) -> crate::jitcode::FieldDescr {
    crate::jitcode::FieldDescr {
        name: p.field.to_string(),
        offset: p.offset,
        size,
        signed,
        kind,
        immutable: p.flags.immutable,
        quasi_immutable: p.flags.quasi_immutable,
        vable: p.flags.vable,
        length: false,
        class: super::place::alias_class_part(p, suffix),
    }
}

macro_rules! ref_jit_type {
    ($($r:ty),*) => {$(
        impl<'a, T> JitType for $r {
            type Handle = Ptr<T>;
            fn to_values(self, out: &mut Vec<Value>) {
                out.push(Value::Ref(self as *const T as usize));
            }
            unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
                let a = vals.next().expect("missing value").addr();
                // SAFETY: by the contract, `a` is the address of a live `T` the caller may
                // borrow this way.
                unsafe { &mut *(a as *mut T) }
            }
        }
        impl<'a, T> Stored for $r {
            fn load(b: &mut Builder, p: Ptr<Self>) -> Ptr<T> {
                let dst = b.fresh(Kind::Ref);
                emit_load(b, addr_of(&p), ref_descr(&p, 8, Kind::Ref, false), dst);
                Ptr::new(dst)
            }
            fn store(b: &mut Builder, p: Ptr<Self>, v: Ptr<T>) {
                let src = v.materialize(b);
                emit_store(b, addr_of(&p), ref_descr(&p, 8, Kind::Ref, false), src);
            }
        }
    )*};
}
ref_jit_type!(&'a T, &'a mut T);

macro_rules! slice_jit_type {
    ($($r:ty),*) => {$(
        impl<'a, T> JitType for $r {
            type Handle = SliceRef<T>;
            fn to_values(self, out: &mut Vec<Value>) {
                out.push(Value::Ref(self.as_ptr() as usize));
                out.push(Value::Int(self.len() as i64));
            }
            unsafe fn from_values(vals: &mut dyn Iterator<Item = Value>) -> Self {
                let p = vals.next().expect("missing value").addr();
                let n = vals.next().expect("missing value").int() as usize;
                // SAFETY: by the contract, `p` and `n` describe a live slice.
                unsafe { std::slice::from_raw_parts_mut(p as *mut T, n) }
            }
        }
        impl<'a, T> Stored for $r {
            fn load(b: &mut Builder, p: Ptr<Self>) -> SliceRef<T> {
                let (ptr_off, len_off) = probe_slice_layout();
                let ptr = b.fresh(Kind::Ref);
                let len = b.fresh(Kind::Int);
                let base = addr_of(&p);
                let mut d = ref_descr_part(&p, 8, Kind::Ref, false, ".ptr");
                d.offset += ptr_off;
                emit_load(b, base, d, ptr);
                let mut d = ref_descr_part(&p, 8, Kind::Int, false, ".len");
                d.offset += len_off;
                d.length = size_of::<T>() > 0;
                emit_load(b, base, d, len);
                SliceRef::new(ptr, len)
            }
            fn store(b: &mut Builder, p: Ptr<Self>, v: SliceRef<T>) {
                let (ptr_off, len_off) = probe_slice_layout();
                let base = addr_of(&p);
                let mut d = ref_descr_part(&p, 8, Kind::Ref, false, ".ptr");
                d.offset += ptr_off;
                emit_store(b, base, d, v.ptr);
                let mut d = ref_descr_part(&p, 8, Kind::Int, false, ".len");
                d.offset += len_off;
                emit_store(b, base, d, v.len);
            }
        }
    )*};
}
slice_jit_type!(&'a [T], &'a mut [T]);

/// A type that can be an argument of an `extern "C"` shim: one `i64`, `f64` or pointer-sized
/// value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a function the JIT does not look inside",
    label = "not an integer, `bool`, `char`, `f64` or reference",
    note = "`#[elidable]`, `#[dont_look_inside]` and `#[loop_invariant]` functions are called through \
            an `extern \"C\"` shim whose arguments are integers, floats and pointers (pass a tuple's \
            elements as separate arguments, or a reference to a struct)"
)]
pub trait ShimArg: JitType {
    /// The shim's parameter type for `Self`.
    type Abi: Copy;
    /// The register kind.
    const KIND: Kind;
    /// Converts the shim parameter back.
    ///
    /// # Safety
    /// `v` is the ABI form of a live value of type `Self`.
    unsafe fn from_abi(v: Self::Abi) -> Self;
    /// Converts into the ABI form.
    fn to_abi(self) -> Self::Abi;
}

/// A type a shim may return: a [`ShimArg`] or `()`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a function the JIT does not look inside",
    note = "shims return an integer, `bool`, `char`, `f64`, a reference or `()`; to return more \
            than one value, write them through a `&mut` argument, or make the function \
            `#[look_inside]` (inlined functions return tuples)"
)]
pub trait ShimRet: JitType {
    /// The shim's return type.
    type Abi;
    /// The kind of the result register, `None` for `()`.
    const KIND: Option<Kind>;
    /// Converts into the ABI form.
    fn to_abi(self) -> Self::Abi;
    /// The runner value of an ABI result, `None` for `()`.
    fn abi_value(v: Self::Abi) -> Option<Value>;
}

macro_rules! shim_scalar {
    ($($t:ty => $abi:ty, $wrap:path, $unwrap:ident;)*) => {$(
        impl ShimArg for $t {
            type Abi = $abi;
            const KIND: Kind = <$t as Scalar>::KIND;
            #[inline(always)]
            unsafe fn from_abi(v: $abi) -> Self {
                // SAFETY: `v` came from `to_abi` of a `$t` (the contract).
                unsafe { <$t as Scalar>::from_value($wrap(v)) }
            }
            #[inline(always)]
            fn to_abi(self) -> $abi {
                Scalar::to_value(self).$unwrap()
            }
        }
        impl ShimRet for $t {
            type Abi = $abi;
            const KIND: Option<Kind> = Some(<$t as Scalar>::KIND);
            #[inline(always)]
            fn to_abi(self) -> $abi {
                Scalar::to_value(self).$unwrap()
            }
            fn abi_value(v: $abi) -> Option<Value> {
                Some($wrap(v))
            }
        }
    )*};
}

shim_scalar! {
    i8 => i64, Value::Int, int; i16 => i64, Value::Int, int; i32 => i64, Value::Int, int;
    i64 => i64, Value::Int, int; isize => i64, Value::Int, int; u8 => i64, Value::Int, int;
    u16 => i64, Value::Int, int; u32 => i64, Value::Int, int; u64 => i64, Value::Int, int;
    usize => i64, Value::Int, int; bool => i64, Value::Int, int; char => i64, Value::Int, int;
    f64 => f64, Value::Float, float;
}

/// Never implemented: makes "a slice passed to a shim" a compile error that explains itself.
#[diagnostic::on_unimplemented(
    message = "a slice `&[{Self}]` cannot be passed to or returned from a function the JIT does not look inside",
    label = "slices are two words (pointer and length); shims take one word per argument",
    note = "pass a reference to a struct that holds the data (for example `&Vec<T>`) instead of a slice"
)]
pub trait SliceThroughShim {}

macro_rules! shim_slice {
    ($($r:ty),*) => {$(
        impl<'a, U: SliceThroughShim> ShimArg for $r {
            type Abi = usize;
            const KIND: Kind = Kind::Ref;
            #[inline(always)]
            unsafe fn from_abi(_: usize) -> Self {
                unreachable!("SliceThroughShim is never implemented")
            }
            #[inline(always)]
            fn to_abi(self) -> usize {
                unreachable!("SliceThroughShim is never implemented")
            }
        }
    )*};
}
shim_slice!(&'a [U], &'a mut [U]);

macro_rules! shim_ref {
    ($($r:ty),*) => {$(
        impl<'a, T> ShimArg for $r {
            type Abi = usize;
            const KIND: Kind = Kind::Ref;
            #[inline(always)]
            unsafe fn from_abi(v: usize) -> Self {
                // SAFETY: `v` is the address of a live `T` (the contract).
                unsafe { &mut *(v as *mut T) }
            }
            #[inline(always)]
            fn to_abi(self) -> usize {
                self as *const T as usize
            }
        }
        impl<'a, T> ShimRet for $r {
            type Abi = usize;
            const KIND: Option<Kind> = Some(Kind::Ref);
            #[inline(always)]
            fn to_abi(self) -> usize {
                self as *const T as usize
            }
            fn abi_value(v: usize) -> Option<Value> {
                Some(Value::Ref(v))
            }
        }
    )*};
}
shim_ref!(&'a T, &'a mut T);

impl ShimRet for () {
    type Abi = ();
    const KIND: Option<Kind> = None;
    #[inline(always)]
    fn to_abi(self) {}
    fn abi_value(_: ()) -> Option<Value> {
        None
    }
}
