//! `#[derive(JitLayout)]`: describes a struct's or enum's layout to the JIT.
//!
//! Structs get `JitStruct` (field flags from `#[jit(immutable)]` / `#[jit(quasi_immutable)]`;
//! offsets come from the projection closures at each field access). Enums must have a primitive
//! representation (`#[repr(u8)]`, `#[repr(C, u8)]`, ...); they get `JitEnum` with tag values and
//! payload offsets computed by `offset_of!` on `#[repr(C)]` mirror structs that follow RFC 2195's
//! definition of those layouts.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{Data, DeriveInput, Fields};

struct StaticLt;
impl VisitMut for StaticLt {
    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        *l = syn::Lifetime::new("'static", l.span());
    }
}

pub fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    if let Some(p) = input.generics.type_params().next() {
        return Err(syn::Error::new_spanned(
            p,
            "JitLayout does not support generic types; only lifetime parameters",
        ));
    }
    if let Some(p) = input.generics.const_params().next() {
        return Err(syn::Error::new_spanned(
            p,
            "JitLayout does not support const generics",
        ));
    }
    let ll = quote!(::meta_jit::lower);
    let name = &input.ident;
    let (ig, tg, wc) = input.generics.split_for_impl();
    match &input.data {
        Data::Struct(s) => {
            let mut arms = TokenStream::new();
            for (i, f) in s.fields.iter().enumerate() {
                let fname = f
                    .ident
                    .as_ref()
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| i.to_string());
                let (mut imm, mut quasi) = (false, false);
                for a in &f.attrs {
                    if !a.path().is_ident("jit") {
                        continue;
                    }
                    a.parse_nested_meta(|m| {
                        if m.path.is_ident("immutable") {
                            imm = true;
                            Ok(())
                        } else if m.path.is_ident("quasi_immutable") {
                            quasi = true;
                            Ok(())
                        } else {
                            Err(m.error("expected `immutable` or `quasi_immutable`"))
                        }
                    })?;
                }
                if imm || quasi {
                    arms.extend(quote!(#fname => #ll::FieldFlags { immutable: #imm, quasi_immutable: #quasi },));
                }
            }
            Ok(quote! {
                // SAFETY: the flags are the author's `#[jit(...)]` claims, checked by nothing but
                // documented as their responsibility.
                unsafe impl #ig #ll::JitStruct for #name #tg #wc {
                    fn field_flags(name: &str) -> #ll::FieldFlags {
                        match name {
                            #arms
                            _ => #ll::FieldFlags::default(),
                        }
                    }
                }
                impl #ig #ll::PlaceTarget for #name #tg #wc {
                    type Struct = Self;
                    fn to_struct(_b: &mut ::meta_jit::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Ptr<Self> {
                        p
                    }
                }
            })
        }
        Data::Enum(e) => {
            let mut prim = None;
            let mut c = false;
            for a in &input.attrs {
                if !a.path().is_ident("repr") {
                    continue;
                }
                a.parse_nested_meta(|m| {
                    let id = m
                        .path
                        .get_ident()
                        .map(|i| i.to_string())
                        .unwrap_or_default();
                    match id.as_str() {
                        "C" => c = true,
                        "u8" | "i8" | "u16" | "i16" | "u32" | "i32" | "u64" | "i64" => {
                            prim = Some(id)
                        }
                        _ => {}
                    }
                    Ok(())
                })?;
            }
            let Some(prim) = prim else {
                return Err(syn::Error::new_spanned(
                    name,
                    "enums that traced code matches on need a defined layout: add `#[repr(u8)]` or `#[repr(C, u8)]`",
                ));
            };
            let tag_ty = format_ident!("{}", prim);
            let tag_size: u8 = prim[1..].parse::<u8>().unwrap() / 8;
            let tag_signed = prim.starts_with('i');
            let mut next: i128 = 0;
            let mut tag_arms = TokenStream::new();
            let mut mirrors = TokenStream::new();
            let mut union_fields = TokenStream::new();
            let mut off_arms = TokenStream::new();
            for v in &e.variants {
                let vname = v.ident.to_string();
                if let Some((_, d)) = &v.discriminant {
                    let syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(li),
                        ..
                    }) = d
                    else {
                        return Err(syn::Error::new_spanned(
                            d,
                            "JitLayout needs integer literal discriminants",
                        ));
                    };
                    next = li.base10_parse::<i128>()?;
                }
                let tag = next as i64;
                tag_arms.extend(quote!(#vname => #tag,));
                next += 1;
                if matches!(v.fields, Fields::Unit) {
                    continue;
                }
                let mname = format_ident!("__JitV_{}", v.ident);
                let mut fdecls = Vec::new();
                for (i, f) in v.fields.iter().enumerate() {
                    let key = f
                        .ident
                        .as_ref()
                        .map(|i| i.to_string())
                        .unwrap_or_else(|| i.to_string());
                    let fid = format_ident!("f_{}", key);
                    let mut ty = f.ty.clone();
                    StaticLt.visit_type_mut(&mut ty);
                    fdecls.push(quote!(#fid: #ty));
                    if c {
                        off_arms.extend(quote!((#vname, #key) => ::core::mem::offset_of!(__JitOuter, u) + ::core::mem::offset_of!(#mname, #fid),));
                    } else {
                        off_arms.extend(
                            quote!((#vname, #key) => ::core::mem::offset_of!(#mname, #fid),),
                        );
                    }
                }
                if c {
                    mirrors.extend(quote!(#[repr(C)] #[allow(non_camel_case_types, dead_code)] struct #mname { #(#fdecls),* }));
                    let uf = &v.ident;
                    union_fields.extend(quote!(#uf: ::core::mem::ManuallyDrop<#mname>,));
                } else {
                    mirrors.extend(quote!(#[repr(C)] #[allow(non_camel_case_types, dead_code)] struct #mname { __tag: #tag_ty, #(#fdecls),* }));
                }
            }
            if c {
                mirrors.extend(quote! {
                    #[repr(C)] #[allow(non_snake_case, dead_code)] union __JitUnion { #union_fields __jit_empty: () }
                    #[repr(C)] #[allow(dead_code)] struct __JitOuter { tag: #tag_ty, u: __JitUnion }
                });
            }
            let name_str = name.to_string();
            Ok(quote! {
                // SAFETY: the enum has the primitive representation checked above, so its tag is
                // at offset 0 and its payloads are laid out as the `#[repr(C)]` mirrors below
                // (RFC 2195).
                unsafe impl #ig #ll::JitEnum for #name #tg #wc {
                    const NAME: &'static str = #name_str;
                    const TAG_SIZE: u8 = #tag_size;
                    const TAG_SIGNED: bool = #tag_signed;
                    fn variant_tag(variant: &str) -> i64 {
                        match variant {
                            #tag_arms
                            other => panic!("enum `{}` has no variant `{}`", #name_str, other),
                        }
                    }
                    #[allow(unreachable_code)]
                    fn payload_offset(variant: &str, field: &str) -> usize {
                        #mirrors
                        match (variant, field) {
                            #off_arms
                            (v, f) => panic!("enum `{}` has no field `{}` in variant `{}`", #name_str, f, v),
                        }
                    }
                }
                impl #ig #ll::MatchTarget for #name #tg #wc {
                    type Scrutinee = #ll::Ptr<Self>;
                    fn scrutinee(_b: &mut ::meta_jit::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Ptr<Self> {
                        p
                    }
                }
            })
        }
        Data::Union(u) => Err(syn::Error::new_spanned(
            u.union_token,
            "JitLayout does not support unions",
        )),
    }
}
