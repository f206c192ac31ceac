//! The path generated code names meta-jit by: `::meta_jit` unless the attribute says
//! `crate = path` (as serde's `#[serde(crate = "...")]`), for a user who renamed the dependency
//! (`jit = { package = "meta-jit", ... }`) or re-exports it from a crate of their own.
//!
//! Every macro sets it for the length of its expansion ([`with`]); the code that generates
//! tokens asks [`path`].

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use std::cell::RefCell;

thread_local! {
    static CRATE: RefCell<Option<TokenStream>> = const { RefCell::new(None) };
}

/// The path of meta-jit in the code being generated.
pub fn path() -> TokenStream {
    CRATE.with(|c| c.borrow().clone().unwrap_or_else(|| quote!(::meta_jit)))
}

/// Runs `f` with `krate` (or `::meta_jit`) as the path of meta-jit.
pub fn with<R>(krate: Option<&syn::Path>, f: impl FnOnce() -> R) -> R {
    let old = CRATE.with(|c| c.replace(krate.map(ToTokens::to_token_stream)));
    let r = f();
    CRATE.with(|c| *c.borrow_mut() = old);
    r
}

/// Parses the value of `crate = path` (a path, or a string holding one, as serde takes it).
pub fn parse_value(m: &syn::meta::ParseNestedMeta) -> syn::Result<syn::Path> {
    let v = m.value()?;
    if v.peek(syn::LitStr) {
        let s: syn::LitStr = v.parse()?;
        s.parse()
    } else {
        v.parse()
    }
}
