//! The purity check of `#[elidable]` functions in checked mode: the native function is wrapped
//! so that, with `debug_assertions` or `cfg(test)` in the user's crate, its outermost call runs
//! the body twice with the same arguments and, when every reference argument's target is
//! `Clone`, a third time with copies at other addresses, and reports a difference as a
//! violation (`meta_jit::check::purity`). In other builds the wrapper is one inlined call.
//!
//! Only functions whose parameters are plain names of scalar or shared-reference types are
//! wrapped (the arguments must be usable three times); others are left as written.

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

/// `f` with its body moved into an inner function and the purity check around it, or `f` as
/// written when its parameters do not allow the check.
pub fn wrap(f: &ItemFn) -> TokenStream {
    let mut names = Vec::new();
    let mut is_ref = Vec::new();
    for arg in &f.sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return quote!(#f);
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return quote!(#f);
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            return quote!(#f);
        }
        let Some(r) = reusable(&pt.ty) else {
            return quote!(#f);
        };
        names.push(pi.ident.clone());
        is_ref.push(r);
    }
    if f.sig.constness.is_some() || f.sig.asyncness.is_some() || f.sig.unsafety.is_some() {
        return quote!(#f);
    }
    let (attrs, vis, sig, block) = (&f.attrs, &f.vis, &f.sig, &f.block);
    let mut inner_sig = sig.clone();
    inner_sig.ident = format_ident!("__jit_elidable_body");
    // Parameters of the inner function are used as written; `mut` stays there.
    let mut outer_sig = sig.clone();
    for arg in outer_sig.inputs.iter_mut() {
        if let FnArg::Typed(pt) = arg {
            if let Pat::Ident(pi) = &mut *pt.pat {
                pi.mutability = None;
            }
        }
    }
    let name_str = sig.ident.to_string();
    let span = sig.ident.span();
    let c = quote!(::meta_jit::check::purity);
    let args_shown: Vec<TokenStream> = names
        .iter()
        .map(|n| {
            let s = n.to_string();
            quote!(::std::format!("{} = {}", #s, (&#c::Arg(&#n)).__jit_arg()))
        })
        .collect();
    // The copies at other addresses: `Some(Box<T>)` for each reference argument whose target
    // is `Clone`.
    let copies: Vec<TokenStream> = names
        .iter()
        .zip(&is_ref)
        .map(|(n, &r)| {
            let m = format_ident!("__jit_moved_{}", n);
            if r {
                quote!(let #m = (&#c::Moved(#n)).__jit_moved();)
            } else {
                quote!()
            }
        })
        .collect();
    let moved_ok: Vec<TokenStream> = names
        .iter()
        .zip(&is_ref)
        .filter(|(_, &r)| r)
        .map(|(n, _)| {
            let m = format_ident!("__jit_moved_{}", n);
            quote!(#m.is_some())
        })
        .collect();
    let moved_args: Vec<TokenStream> = names
        .iter()
        .zip(&is_ref)
        .map(|(n, &r)| {
            let m = format_ident!("__jit_moved_{}", n);
            if r {
                quote!(&**#m.as_ref().expect("checked above"))
            } else {
                quote!(#n)
            }
        })
        .collect();
    let any_ref = is_ref.iter().any(|&r| r);
    let moved_check = if any_ref {
        quote! {
            #(#copies)*
            if true #(&& #moved_ok)* {
                let __jit_r3 = __jit_elidable_body(#(#moved_args),*);
                if !(&#c::Show(&__jit_r1)).__jit_same_contents(&__jit_r3) {
                    #c::impure(__jit_site, true, ::std::vec![#(#args_shown),*],
                        (&#c::Show(&__jit_r1)).__jit_show(), (&#c::Show(&__jit_r3)).__jit_show());
                }
            }
        }
    } else {
        quote!()
    };
    let site = quote_spanned!(span=> #c::Site {
        file: ::core::file!(),
        line: ::core::line!(),
        column: ::core::column!(),
        name: #name_str,
    });
    quote! {
        #(#attrs)*
        #vis #outer_sig {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            #inner_sig #block
            if ::core::cfg!(any(debug_assertions, test)) {
                if let ::core::option::Option::Some(__jit_guard) = #c::outermost() {
                    #[allow(unused_imports)]
                    use #c::{ViaPartialEq as _, ViaHintValue as _, ViaDebugArg as _, ViaAnyArg as _, ViaClone as _, ViaNoClone as _};
                    let __jit_site = #site;
                    let __jit_r1 = __jit_elidable_body(#(#names),*);
                    let __jit_r2 = __jit_elidable_body(#(#names),*);
                    if !(&#c::Show(&__jit_r1)).__jit_same(&__jit_r2) {
                        #c::impure(__jit_site, false, ::std::vec![#(#args_shown),*],
                            (&#c::Show(&__jit_r1)).__jit_show(), (&#c::Show(&__jit_r2)).__jit_show());
                    }
                    #moved_check
                    drop(__jit_guard);
                    return __jit_r1;
                }
            }
            __jit_elidable_body(#(#names),*)
        }
    }
}
