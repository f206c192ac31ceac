//! `Option` and `Result` of scalars stored in memory (a field `Option<i64>`, a
//! `Vec<Result<u32, i64>>`), read and written out of line.
//!
//! Rust defines no layout for these types (where the tag is, which values it takes, whether a
//! niche in the payload replaces it), and stable Rust cannot ask for the offsets of an enum's
//! fields, so compiled code cannot read them in place the way it reads a `#[repr(C, u8)]`
//! enum. A load is two calls of small functions (tag, then payload) that read the value
//! natively and write nothing, so the heap caches survive them; a store is one call that may
//! write (the caches are flushed, as for any `#[dont_look_inside]` call). An interpreter that
//! keeps such values on a hot path declares its own `#[repr(C, u8)]` enum instead, which
//! traced code reads and writes inline (see `super::value`).
//!
//! Owns: the `Stored` impls of `Option<T>` and `Result<T, E>` for scalar `T`, `E`, and their
//! helper functions and call descriptors, and their `match` on a place.
//! Must not know: syntax; guest languages.

use super::calls::{call_descr, emit_call};
use super::place::MatchTarget;
use super::sum::{zero_value, OptionH, ResultH};
use super::types::{Scalar, ShimArg, ShimRet, Stored};
use super::{Handle, Ptr, Reg};
use crate::jitcode::{Builder, CallDescr, Effect, Kind, Register, Value};
use std::sync::Arc;

/// The descriptor of a helper that reads one part of a value in memory (its only argument is
/// the value's address) and writes nothing.
fn reader(
    name: &'static str,
    kind: Kind,
    shim: usize,
    dynamic: fn(&[Value]) -> Option<Value>,
) -> Arc<CallDescr> {
    call_descr(
        name,
        vec![Kind::Ref],
        Some(kind),
        Effect::ResidualWritesNothing,
        shim,
        dynamic,
    )
}

/// A zero of `T`, for the payload of the variant not held.
fn zero<T: Scalar>() -> T {
    // SAFETY: zero is a valid value of every scalar type traced code holds (integers, `bool`,
    // `char`, floats).
    unsafe { T::from_value(zero_value(<T as Scalar>::KIND)) }
}

// Each helper is an `extern "C"` function that compiled code calls, and a function on runner
// values that the jitcode runner, the tracer and the blackhole interpreter call, which
// converts its arguments and calls the first.
//
// # Safety (of every helper)
// The pointer is the address of a live value of its type that the caller may read (and write,
// for a store), and a payload argument is the ABI form of a value of its type.

// Option<T>.

unsafe extern "C" fn option_tag<T: Scalar>(p: *const Option<T>) -> i64 {
    // SAFETY: the helpers' contract.
    i64::from(unsafe { (*p).is_some() })
}
fn option_tag_dyn<T: Scalar>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract.
    let tag = unsafe { option_tag::<T>(a[0].addr() as *const Option<T>) };
    Some(Value::Int(tag))
}

unsafe extern "C" fn option_value<T: Scalar + ShimRet>(p: *const Option<T>) -> <T as ShimRet>::Abi {
    // SAFETY: the helpers' contract.
    unsafe { *p }.unwrap_or_else(zero).to_abi()
}
fn option_value_dyn<T: Scalar>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract.
    let v = unsafe { *(a[0].addr() as *const Option<T>) };
    Some(v.unwrap_or_else(zero).to_value())
}

unsafe extern "C" fn option_store<T: Scalar + ShimArg>(
    p: *mut Option<T>,
    tag: i64,
    v: <T as ShimArg>::Abi,
) {
    // SAFETY: the helpers' contract; the payload is a `T` when the tag says `Some`.
    unsafe { *p = (tag != 0).then(|| T::from_abi(v)) }
}
fn option_store_dyn<T: Scalar + ShimArg>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract; the runner's value is a `T`.
    unsafe {
        let v = T::from_value(a[2]).to_abi();
        option_store::<T>(a[0].addr() as *mut Option<T>, a[1].int(), v);
    }
    None
}

impl<T: Scalar + ShimArg + ShimRet> Stored for Option<T> {
    fn load(b: &mut Builder, p: Ptr<Self>) -> OptionH<T> {
        let at = p.regs(b);
        let tag = reader(
            "meta_jit::option_tag",
            Kind::Int,
            option_tag::<T> as unsafe extern "C" fn(_) -> _ as usize,
            option_tag_dyn::<T>,
        );
        let value = reader(
            "meta_jit::option_value",
            <T as Scalar>::KIND,
            option_value::<T> as unsafe extern "C" fn(_) -> _ as usize,
            option_value_dyn::<T>,
        );
        let tag: Reg<i64> = emit_call(b, &tag, at.clone());
        let val: Reg<T> = emit_call(b, &value, at);
        OptionH::from_regs(&mut [tag.reg, val.reg].into_iter())
    }
    fn store(b: &mut Builder, p: Ptr<Self>, v: OptionH<T>) {
        let mut args = p.regs(b);
        args.extend(v.regs(b));
        let store = call_descr(
            "meta_jit::option_store",
            vec![Kind::Ref, Kind::Int, <T as Scalar>::KIND],
            None,
            Effect::Residual,
            option_store::<T> as unsafe extern "C" fn(_, _, _) as usize,
            option_store_dyn::<T>,
        );
        emit_call::<()>(b, &store, args)
    }
}

// Result<T, E>.

unsafe extern "C" fn result_tag<T: Scalar, E: Scalar>(p: *const Result<T, E>) -> i64 {
    // SAFETY: the helpers' contract.
    i64::from(unsafe { (*p).is_ok() })
}
fn result_tag_dyn<T: Scalar, E: Scalar>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract.
    let tag = unsafe { result_tag::<T, E>(a[0].addr() as *const Result<T, E>) };
    Some(Value::Int(tag))
}

/// The value a `Result` holds, and zero for the other variant's payload.
fn parts<T: Scalar, E: Scalar>(r: Result<T, E>) -> (T, E) {
    match r {
        Ok(v) => (v, zero()),
        Err(e) => (zero(), e),
    }
}

unsafe extern "C" fn result_ok<T: Scalar + ShimRet, E: Scalar>(
    p: *const Result<T, E>,
) -> <T as ShimRet>::Abi {
    // SAFETY: the helpers' contract.
    parts(unsafe { *p }).0.to_abi()
}
fn result_ok_dyn<T: Scalar, E: Scalar>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract.
    let r = unsafe { *(a[0].addr() as *const Result<T, E>) };
    Some(parts(r).0.to_value())
}

unsafe extern "C" fn result_err<T: Scalar, E: Scalar + ShimRet>(
    p: *const Result<T, E>,
) -> <E as ShimRet>::Abi {
    // SAFETY: the helpers' contract.
    parts(unsafe { *p }).1.to_abi()
}
fn result_err_dyn<T: Scalar, E: Scalar>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract.
    let r = unsafe { *(a[0].addr() as *const Result<T, E>) };
    Some(parts(r).1.to_value())
}

unsafe extern "C" fn result_store<T: Scalar + ShimArg, E: Scalar + ShimArg>(
    p: *mut Result<T, E>,
    tag: i64,
    ok: <T as ShimArg>::Abi,
    err: <E as ShimArg>::Abi,
) {
    // SAFETY: the helpers' contract; the payload the tag names is a value of its type.
    unsafe {
        *p = if tag != 0 {
            Ok(T::from_abi(ok))
        } else {
            Err(E::from_abi(err))
        }
    }
}
fn result_store_dyn<T: Scalar + ShimArg, E: Scalar + ShimArg>(a: &[Value]) -> Option<Value> {
    // SAFETY: the helpers' contract; the runner's values are a `T` and an `E` (the one of the
    // variant not held is zero, a valid value of every scalar).
    unsafe {
        let (ok, err) = (T::from_value(a[2]).to_abi(), E::from_value(a[3]).to_abi());
        result_store::<T, E>(a[0].addr() as *mut Result<T, E>, a[1].int(), ok, err);
    }
    None
}

impl<T: Scalar + ShimArg + ShimRet, E: Scalar + ShimArg + ShimRet> Stored for Result<T, E> {
    fn load(b: &mut Builder, p: Ptr<Self>) -> ResultH<T, E> {
        let at = p.regs(b);
        let tag = reader(
            "meta_jit::result_tag",
            Kind::Int,
            result_tag::<T, E> as unsafe extern "C" fn(_) -> _ as usize,
            result_tag_dyn::<T, E>,
        );
        let ok = reader(
            "meta_jit::result_ok",
            <T as Scalar>::KIND,
            result_ok::<T, E> as unsafe extern "C" fn(_) -> _ as usize,
            result_ok_dyn::<T, E>,
        );
        let err = reader(
            "meta_jit::result_err",
            <E as Scalar>::KIND,
            result_err::<T, E> as unsafe extern "C" fn(_) -> _ as usize,
            result_err_dyn::<T, E>,
        );
        let tag: Reg<i64> = emit_call(b, &tag, at.clone());
        let okv: Reg<T> = emit_call(b, &ok, at.clone());
        let errv: Reg<E> = emit_call(b, &err, at);
        let regs: [Register; 3] = [tag.reg, okv.reg, errv.reg];
        ResultH::from_regs(&mut regs.into_iter())
    }
    fn store(b: &mut Builder, p: Ptr<Self>, v: ResultH<T, E>) {
        let mut args = p.regs(b);
        args.extend(v.regs(b));
        let store = call_descr(
            "meta_jit::result_store",
            vec![
                Kind::Ref,
                Kind::Int,
                <T as Scalar>::KIND,
                <E as Scalar>::KIND,
            ],
            None,
            Effect::Residual,
            result_store::<T, E> as unsafe extern "C" fn(_, _, _, _) as usize,
            result_store_dyn::<T, E>,
        );
        emit_call::<()>(b, &store, args)
    }
}

/// `match slot.value { Some(x) => .., None => .. }`: the value is loaded, then matched in
/// registers.
impl<T: Scalar + ShimArg + ShimRet> MatchTarget for Option<T> {
    type Scrutinee = OptionH<T>;
    fn scrutinee(b: &mut Builder, p: Ptr<Self>) -> OptionH<T> {
        <Self as Stored>::load(b, p)
    }
}

/// As for `Option`.
impl<T: Scalar + ShimArg + ShimRet, E: Scalar + ShimArg + ShimRet> MatchTarget for Result<T, E> {
    type Scrutinee = ResultH<T, E>;
    fn scrutinee(b: &mut Builder, p: Ptr<Self>) -> ResultH<T, E> {
        <Self as Stored>::load(b, p)
    }
}
