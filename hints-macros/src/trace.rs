//! `#[derive(Trace)]`: tells meta-jit's collector where a struct's or enum's `Gc` pointers are.
//!
//! The impl reports every field to the tracer and computes `NO_GC` and `INLINE` from the
//! fields' impls, with a `where` clause per field type (so a generic type is traceable when
//! its fields are). It also refuses a type that implements `Drop`: the collector drops the
//! objects it frees in any order, so a `Drop` that read a `Gc` field could read a dropped
//! object (`Trace`'s contract); a type that needs its own `Drop` implements `Trace` by hand,
//! with `unsafe`. The check is an impl of a private trait for the type next to a blanket impl
//! for every `T: Drop`: rustc rejects the two as conflicting when the type implements `Drop`.
//! Owns nothing else; must not know the collector's workings.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Fields};

/// The pattern that binds a variant's (or the struct's) fields, and the bindings.
fn bind(fields: &Fields) -> (TokenStream, Vec<syn::Ident>) {
    let names: Vec<syn::Ident> = (0..fields.len()).map(|i| format_ident!("__f{i}")).collect();
    let pat = match fields {
        Fields::Named(f) => {
            let ids = f.named.iter().map(|f| f.ident.as_ref().expect("named"));
            quote!({ #(#ids: #names),* })
        }
        Fields::Unnamed(_) => quote!(( #(#names),* )),
        Fields::Unit => quote!(),
    };
    (pat, names)
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let mj = crate::krate::path();
    let tr = quote!(#mj::gc::Trace);
    let name = &input.ident;
    let mut types: Vec<&syn::Type> = Vec::new();
    let arms: Vec<TokenStream> = match &input.data {
        Data::Struct(s) => {
            types.extend(s.fields.iter().map(|f| &f.ty));
            let (pat, names) = bind(&s.fields);
            vec![quote!(#name #pat => { #( #tr::trace(#names, __jit_t); )* })]
        }
        Data::Enum(e) => e
            .variants
            .iter()
            .map(|v| {
                types.extend(v.fields.iter().map(|f| &f.ty));
                let vn = &v.ident;
                let (pat, names) = bind(&v.fields);
                quote!(#name::#vn #pat => { #( #tr::trace(#names, __jit_t); )* })
            })
            .collect(),
        Data::Union(u) => return Err(syn::Error::new_spanned(
            u.union_token,
            "Trace cannot be derived for a union (the collector cannot tell which field is live)",
        )),
    };
    let (ig, tg, wc) = input.generics.split_for_impl();
    let mut preds: Vec<TokenStream> = wc
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    preds.extend(types.iter().map(|t| quote!(#t: #tr)));
    let empty = arms.is_empty();
    let body = if empty {
        quote!(match *self {})
    } else {
        quote!(#[allow(unused_variables)] match self { #(#arms)* })
    };
    Ok(quote! {
        // `#[derive(Trace)]` refuses a type that implements `Drop` (an error "conflicting
        // implementations of trait `DeriveTraceForbidsDropImplementTraceByHand`" means the
        // type has one): see meta-jit's `gc::Trace`.
        const _: () = {
            #[allow(non_camel_case_types, dead_code)]
            trait DeriveTraceForbidsDropImplementTraceByHand {}
            #[allow(drop_bounds)]
            impl<T> DeriveTraceForbidsDropImplementTraceByHand for T
            where
                T: ::core::ops::Drop + ?::core::marker::Sized,
            {
            }
            impl #ig DeriveTraceForbidsDropImplementTraceByHand for #name #tg #wc {}
        };
        // SAFETY: every field is reported to the tracer; `NO_GC` and `INLINE` hold when they
        // hold for every field (the fields are the value's own bytes).
        #[automatically_derived]
        unsafe impl #ig #tr for #name #tg where #(#preds),* {
            const NO_GC: bool = true #(&& <#types as #tr>::NO_GC)*;
            const INLINE: bool = true #(&& <#types as #tr>::INLINE)*;
            fn trace(&self, __jit_t: &mut #mj::gc::Tracer) {
                #body
            }
        }
    })
}
