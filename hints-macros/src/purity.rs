//! The purity check of `#[elidable]` functions in checked mode: the native function is wrapped
//! so that, with `debug_assertions` or `cfg(test)` in the user's crate, its outermost call runs
//! the body twice with the same arguments and, when every reference argument's target is
//! `Clone`, a third time with copies at other addresses, and reports a difference as a
//! violation (`meta_jit::check::purity`). In other builds the wrapper is one inlined call.
//!
//! Only functions whose parameters are plain names of scalar or shared-reference types (and
//! methods taking `&self`) are wrapped (the arguments must be usable three times); others are
//! left as written. An `#[elidable]` method's body moves into a hidden method of its block.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{FnArg, ItemFn, Pat, Type};

const SCALARS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64", "bool", "char",
];

/// Whether a parameter of this type can be passed several times: a scalar or `&T`.
fn reusable(ty: &Type) -> Option<bool> {
    match ty {
        Type::Reference(r) if r.mutability.is_none() => Some(true),
        Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
            let id = p.path.get_ident()?.to_string();
            SCALARS.contains(&id.as_str()).then_some(false)
        }
        Type::Paren(p) => reusable(&p.elem),
        _ => None,
    }
}

/// The parameters of a signature as (name, is a shared reference), the receiver (`&self`)
/// first as `self`; `None` when the check cannot be made (see the module doc).
fn params(sig: &syn::Signature) -> Option<Vec<(syn::Ident, bool)>> {
    if sig.constness.is_some() || sig.asyncness.is_some() || sig.unsafety.is_some() {
        return None;
    }
    let mut out = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => {
                if r.reference.is_none() || r.mutability.is_some() {
                    return None;
                }
                out.push((format_ident!("self"), true));
            }
            FnArg::Typed(pt) => {
                let Pat::Ident(pi) = &*pt.pat else {
                    return None;
                };
                if pi.by_ref.is_some() || pi.subpat.is_some() {
                    return None;
                }
                out.push((pi.ident.clone(), reusable(&pt.ty)?));
            }
        }
    }
    Some(out)
}

/// The body of the checked function: `call(args)` calls the original body on those argument
/// expressions.
fn checked_body(
    sig: &syn::Signature,
    display: &str,
    ps: &[(syn::Ident, bool)],
    call: impl Fn(&[TokenStream]) -> TokenStream,
) -> TokenStream {
    let span = sig.ident.span();
    let krate = crate::krate::path();
    let c = quote!(#krate::check::purity);
    let names: Vec<TokenStream> = ps.iter().map(|(n, _)| quote!(#n)).collect();
    let args_shown: Vec<TokenStream> = ps
        .iter()
        .map(|(n, _)| {
            let s = n.to_string();
            quote!(::std::format!("{} = {}", #s, (&#c::Arg(&#n)).__jit_arg()))
        })
        .collect();
    let moved =
        |n: &syn::Ident| format_ident!("__jit_moved_{}", n.to_string().trim_start_matches("r#"));
    let copies: Vec<TokenStream> = ps
        .iter()
        .filter(|(_, r)| *r)
        .map(|(n, _)| {
            let m = moved(n);
            quote!(let #m = (&#c::Moved(#n)).__jit_moved();)
        })
        .collect();
    let moved_ok: Vec<TokenStream> = ps
        .iter()
        .filter(|(_, r)| *r)
        .map(|(n, _)| {
            let m = moved(n);
            quote!(#m.is_some())
        })
        .collect();
    let moved_args: Vec<TokenStream> = ps
        .iter()
        .map(|(n, r)| {
            if *r {
                let m = moved(n);
                quote!(&**#m.as_ref().expect("checked above"))
            } else {
                quote!(#n)
            }
        })
        .collect();
    let (first, second, third) = (call(&names), call(&names), call(&moved_args));
    let moved_check = if copies.is_empty() {
        quote!()
    } else {
        quote! {
            #(#copies)*
            if true #(&& #moved_ok)* {
                let __jit_r3 = #third;
                if !(&#c::Show(&__jit_r1)).__jit_same_contents(&__jit_r3) {
                    #c::impure(__jit_site, true, ::std::vec![#(#args_shown),*],
                        (&#c::Show(&__jit_r1)).__jit_show(), (&#c::Show(&__jit_r3)).__jit_show());
                }
            }
        }
    };
    let site = quote_spanned!(span=> #c::Site {
        file: ::core::file!(),
        line: ::core::line!(),
        column: ::core::column!(),
        name: #display,
    });
    quote! {
        if ::core::cfg!(any(debug_assertions, test)) {
            if let ::core::option::Option::Some(__jit_guard) = #c::outermost() {
                #[allow(unused_imports)]
                use #c::{ViaPartialEq as _, ViaHintValue as _, ViaDebugArg as _, ViaAnyArg as _, ViaClone as _, ViaNoClone as _};
                let __jit_site = #site;
                let __jit_r1 = #first;
                let __jit_r2 = #second;
                if !(&#c::Show(&__jit_r1)).__jit_same(&__jit_r2) {
                    #c::impure(__jit_site, false, ::std::vec![#(#args_shown),*],
                        (&#c::Show(&__jit_r1)).__jit_show(), (&#c::Show(&__jit_r2)).__jit_show());
                } else {
                    // One report per call: the copies are tried when the plain repeat agreed.
                    #moved_check
                }
                drop(__jit_guard);
                return __jit_r1;
            }
        }
    }
}

/// `f` with its body moved into an inner function and the purity check around it, or `f` as
/// written when its parameters do not allow the check.
pub fn wrap(f: &ItemFn) -> TokenStream {
    let Some(ps) = params(&f.sig) else {
        return quote!(#f);
    };
    let (attrs, vis, sig, block) = (&f.attrs, &f.vis, &f.sig, &f.block);
    let mut inner_sig = sig.clone();
    inner_sig.ident = format_ident!("__jit_elidable_body");
    // The parameters' `mut` stays on the inner function, which runs the body.
    let mut outer_sig = sig.clone();
    strip_mut(&mut outer_sig);
    let check = checked_body(
        sig,
        &sig.ident.to_string(),
        &ps,
        |args| quote!(__jit_elidable_body(#(#args),*)),
    );
    let names: Vec<&syn::Ident> = ps.iter().map(|(n, _)| n).collect();
    quote! {
        #(#attrs)*
        #vis #outer_sig {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            #inner_sig #block
            #check
            __jit_elidable_body(#(#names),*)
        }
    }
}

fn strip_mut(sig: &mut syn::Signature) {
    for arg in sig.inputs.iter_mut() {
        if let FnArg::Typed(pt) = arg {
            if let Pat::Ident(pi) = &mut *pt.pat {
                pi.mutability = None;
            }
        }
    }
}

/// An `#[elidable]` method of a `#[jit::methods]` block: its body moves into a hidden method
/// of the same block (returned second), and the method itself runs the check around calls of
/// it. `None` when the method's parameters do not allow the check.
pub fn wrap_method(
    m: &syn::ImplItemFn,
    display: &str,
) -> Option<(syn::ImplItemFn, syn::ImplItemFn)> {
    let ps = params(&m.sig)?;
    let (recv, rest) = ps.split_first()?;
    if recv.0 != "self" {
        return None;
    }
    let hidden = format_ident!("__jit_elidable_body_{}", m.sig.ident);
    let mut body_fn = m.clone();
    body_fn.sig.ident = hidden.clone();
    body_fn.attrs = vec![
        syn::parse_quote!(#[doc(hidden)]),
        syn::parse_quote!(#[inline(always)]),
        syn::parse_quote!(#[allow(clippy::too_many_arguments)]),
    ];
    body_fn.vis = syn::Visibility::Inherited;
    let mut outer = m.clone();
    strip_mut(&mut outer.sig);
    let check = checked_body(&m.sig, display, &ps, |args| {
        let (r, a) = args.split_first().expect("the receiver");
        quote!((#r).#hidden(#(#a),*))
    });
    let names: Vec<&syn::Ident> = rest.iter().map(|(n, _)| n).collect();
    outer.block = syn::parse_quote!({
        #check
        self.#hidden(#(#names),*)
    });
    Some((outer, body_fn))
}
