//! Calls from traced code: look-inside callees become `InlineCall`, elidable, loop-invariant and
//! residual ones become `Call` through their `extern "C"` shim's descriptor, and
//! `record_known_result!` becomes `RecordKnownResult` with the elidable callee's descriptor.
//!
//! Owns: the emission of those ops from handles. The companion module (or method trait) that a
//! policy attribute generates calls these; it is found by rustc's ordinary name resolution at the
//! call site, so there is no registry and no comparison of function pointers.
//! Must not know: syntax, guest languages.
#![deny(unsafe_code)]

use std::sync::Arc;

use super::Handle;
use crate::jitcode::{Builder, CallDescr, Effect, HintSite, JitCodeRef, Kind, Op, Register, Value};

/// Builds a call descriptor (the generated companion keeps it in a `OnceLock`).
pub fn call_descr(
    name: &'static str,
    arg_kinds: Vec<Kind>,
    result_kind: Option<Kind>,
    effect: Effect,
    shim: usize,
    dynamic: fn(&[Value]) -> Option<Value>,
) -> Arc<CallDescr> {
    Arc::new(CallDescr {
        name,
        arg_kinds,
        result_kind,
        effect,
        shim,
        dynamic,
    })
}

/// Whether compiled code can pass arguments of these kinds to a function it does not look
/// inside: at most 6 integer-class and 8 float arguments, in registers (`ir::verify`'s rule).
/// The companion of a `#[dont_look_inside]` function asserts it at compile time.
pub const fn shim_args_fit(kinds: &[Kind]) -> bool {
    let (mut ints, mut floats, mut i) = (0, 0, 0);
    while i < kinds.len() {
        match kinds[i] {
            Kind::Float => floats += 1,
            Kind::Int | Kind::Ref => ints += 1,
        }
        i += 1;
    }
    ints <= 6 && floats <= 8
}

/// Emits a call of a function the JIT does not look inside and returns its result handle.
pub fn emit_call<H: Handle>(b: &mut Builder, descr: &Arc<CallDescr>, args: Vec<Register>) -> H {
    let kinds = H::kinds();
    assert!(kinds.len() <= 1, "a shim returns at most one value");
    let dst = kinds.first().map(|&k| b.fresh(k));
    b.emit(Op::Call {
        descr: descr.clone(),
        args,
        dst,
    });
    H::from_regs(&mut dst.into_iter())
}

/// Emits a call of a look-inside function and returns its result handle.
pub fn emit_inline_call<H: Handle>(b: &mut Builder, callee: JitCodeRef, args: Vec<Register>) -> H {
    let dsts: Vec<Register> = H::kinds().into_iter().map(|k| b.fresh(k)).collect();
    b.emit(Op::InlineCall {
        callee,
        args,
        dsts: dsts.clone(),
    });
    H::from_regs(&mut dsts.into_iter())
}

/// Emits `record_known_result!(result, f, args...)`, written at `site`, for the elidable `f`
/// described by `descr`.
pub fn emit_known_result(
    b: &mut Builder,
    descr: &Arc<CallDescr>,
    result: Vec<Register>,
    args: Vec<Register>,
    site: &'static HintSite,
) {
    assert_eq!(
        descr.effect,
        Effect::Elidable,
        "record_known_result! needs an #[elidable] function"
    );
    let result = result
        .into_iter()
        .next()
        .expect("record_known_result! of a value without registers");
    b.emit(Op::RecordKnownResult {
        result,
        descr: descr.clone(),
        args,
        site,
    });
}

/// Collects the registers of call arguments (materializing interior addresses).
pub fn arg_regs<H: Handle>(b: &mut Builder, out: &mut Vec<Register>, h: H) {
    out.extend(h.regs(b));
}
