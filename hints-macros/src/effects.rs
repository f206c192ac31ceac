//! Declared effects of `#[dont_look_inside]` functions: the attribute's arguments, and the
//! checks a declaration gets at compile time.
//!
//! `#[dont_look_inside(writes_nothing)]` says the function writes no memory that traced code
//! reads, so a call keeps what the tracer's and the optimizer's heap caches know. Rejected at
//! the parameter's span: a `&mut` parameter (the function may write through it). Checked at
//! trace time in debug builds by the tracer's heap cache (a load it shares must still read what
//! memory holds). Must not know: how calls are recorded or optimized.

use syn::{FnArg, Signature, Type};

use crate::companion::Policy;

/// The policy of `#[dont_look_inside(ARGS)]`: `writes_nothing` or nothing. `crate = path` is
/// handled by the caller (`other` gets every other argument).
pub fn residual_arg(
    m: &syn::meta::ParseNestedMeta,
    policy: &mut Policy,
) -> Option<syn::Result<()>> {
    if m.path.is_ident("writes_nothing") {
        *policy = Policy::ResidualWritesNothing;
        return Some(Ok(()));
    }
    None
}

/// A `writes_nothing` function may not take `&mut` parameters: the error points at the first.
pub fn check(policy: Policy, sig: &Signature) -> syn::Result<()> {
    if policy != Policy::ResidualWritesNothing {
        return Ok(());
    }
    for input in &sig.inputs {
        let mutable = match input {
            FnArg::Receiver(r) => r.reference.is_some() && r.mutability.is_some(),
            FnArg::Typed(t) => matches!(&*t.ty, Type::Reference(r) if r.mutability.is_some()),
        };
        if mutable {
            return Err(syn::Error::new_spanned(
                input,
                "a `#[dont_look_inside(writes_nothing)]` function takes no `&mut` parameter: it \
                 could write through it; take `&` or drop `writes_nothing`",
            ));
        }
    }
    Ok(())
}
