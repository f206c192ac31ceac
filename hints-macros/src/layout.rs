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
    let mj = crate::krate::path();
    let ll = quote!(#mj::lower);
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
                let (mut imm, mut quasi, mut items, mut vable) = (false, false, false, false);
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
                        } else if m.path.is_ident("immutable_items") {
                            items = true;
                            Ok(())
                        } else if m.path.is_ident("virtualizable") {
                            vable = true;
                            Ok(())
                        } else {
                            Err(m.error(
                                "expected `immutable`, `quasi_immutable`, `immutable_items` \
                                 or `virtualizable`",
                            ))
                        }
                    })?;
                }
                if imm || quasi || items || vable {
                    arms.extend(quote!(#fname => #ll::FieldFlags {
                        immutable: #imm,
                        quasi_immutable: #quasi,
                        immutable_items: #items,
                        deep: false,
                        private: false,
                        vable: #vable,
                        length: false,
                    },));
                }
            }
            let values = struct_values(&input, s)?;
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
                    fn to_struct(_b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Ptr<Self> {
                        p
                    }
                }
                #values
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
            // `#[jit(scalar)]` on a fieldless `Copy` enum makes it a scalar: a value of it can sit
            // in a register (its tag), be compared with `==` and be matched without memory.
            let unit_only = e.variants.iter().all(|v| matches!(v.fields, Fields::Unit));
            let mut wants_scalar = false;
            for a in input.attrs.iter().filter(|a| a.path().is_ident("jit")) {
                a.parse_nested_meta(|m| {
                    if m.path.is_ident("crate") {
                        // Read by `jit_layout` before the derive.
                        let _ = crate::krate::parse_value(&m)?;
                        Ok(())
                    } else if m.path.is_ident("scalar") {
                        wants_scalar = true;
                        Ok(())
                    } else {
                        Err(m.error("expected `scalar` or `crate = path`"))
                    }
                })?;
            }
            if wants_scalar && !unit_only {
                return Err(syn::Error::new_spanned(
                    name,
                    "`#[jit(scalar)]` needs an enum whose variants have no fields",
                ));
            }
            let scalar = if wants_scalar && input.generics.params.is_empty() {
                quote! {
                    impl #mj::lower::Scalar for #name {
                        const KIND: #mj::jitcode::Kind = #mj::jitcode::Kind::Int;
                        const INT: Option<#mj::jitcode::IntTy> =
                            Some(#mj::jitcode::IntTy { bits: #tag_size * 8, signed: #tag_signed });
                        fn to_value(self) -> #mj::jitcode::Value {
                            #mj::jitcode::Value::Int(self as #tag_ty as i64)
                        }
                        unsafe fn from_value(v: #mj::jitcode::Value) -> Self {
                            // SAFETY: by the contract of `from_value`, the value is the tag of a
                            // variant of this `#[repr(#tag_ty)]` fieldless enum.
                            unsafe { ::core::mem::transmute::<#tag_ty, #name>(v.int() as #tag_ty) }
                        }
                    }
                    impl #mj::lower::JitType for #name {
                        type Handle = #ll::Reg<#name>;
                        fn to_values(self, out: &mut Vec<#mj::jitcode::Value>) {
                            out.push(<Self as #mj::lower::Scalar>::to_value(self));
                        }
                        unsafe fn from_values(vals: &mut dyn Iterator<Item = #mj::jitcode::Value>) -> Self {
                            // SAFETY: forwarded contract.
                            unsafe { <Self as #mj::lower::Scalar>::from_value(vals.next().expect("missing value")) }
                        }
                    }
                    impl #mj::lower::Stored for #name {
                        fn load(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Reg<Self> {
                            #ll::load_scalar(b, p)
                        }
                        fn store(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>, v: #ll::Reg<Self>) {
                            #ll::store_scalar(b, p, v)
                        }
                    }
                    impl #ll::ops::Equatable for #name {}
                    impl #ll::ConstValue for #name {
                        fn constant(self, b: &mut #mj::jitcode::Builder) -> #ll::Reg<Self> {
                            #ll::konst(b, self)
                        }
                    }
                }
            } else {
                quote!()
            };
            let match_target = if scalar.is_empty() {
                quote! {
                    impl #ig #ll::MatchTarget for #name #tg #wc {
                        type Scrutinee = #ll::Ptr<Self>;
                        fn scrutinee(_b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Ptr<Self> {
                            p
                        }
                    }
                }
            } else {
                quote! {
                    impl #ll::MatchTarget for #name {
                        type Scrutinee = #ll::Reg<Self>;
                        fn scrutinee(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Reg<Self> {
                            #ll::load_scalar(b, p)
                        }
                    }
                }
            };
            let values = if scalar.is_empty() {
                enum_values(&input, e)?
            } else {
                quote!()
            };
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
                #match_target
                #scalar
                #values
            })
        }
        Data::Union(u) => Err(syn::Error::new_spanned(
            u.union_token,
            "JitLayout does not support unions",
        )),
    }
}

/// A field of a struct or variant: its key (name, or index of a tuple field), the member to
/// write in Rust (`x` or `0`) and its type.
struct FieldInfo {
    key: String,
    member: TokenStream,
    ty: syn::Type,
}

fn field_infos(fields: &Fields) -> Vec<FieldInfo> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(id) => FieldInfo {
                key: id.to_string(),
                member: quote!(#id),
                ty: f.ty.clone(),
            },
            None => {
                let idx = syn::Index::from(i);
                FieldInfo {
                    key: i.to_string(),
                    member: quote!(#idx),
                    ty: f.ty.clone(),
                }
            }
        })
        .collect()
}

/// The `where` clause of the value impls: the type's own clause, plus one bound per field type,
/// each behind a dummy higher-ranked lifetime so that an unsatisfied bound makes the impl not
/// apply (instead of failing to compile): a struct with a `String` field still gets its layout,
/// and only copying it by value is a compile error, at the copy.
fn value_where(input: &DeriveInput, bounds: &[TokenStream]) -> TokenStream {
    let preds = input
        .generics
        .where_clause
        .as_ref()
        .map(|w| {
            let p = &w.predicates;
            quote!(#p,)
        })
        .unwrap_or_default();
    quote!(where #preds #(for<'__jit> #bounds,)*)
}

/// The where-clauses of a value type's impls, from the types of its fields: `JitValue` and
/// `JitType` need every field's type to be one, `Stored` needs the type `Copy` and every field
/// type stored, `ConstValue` needs the type to be a `JitType`.
fn value_bounds(input: &DeriveInput, tys: &[&syn::Type]) -> [TokenStream; 3] {
    let crate_path = crate::krate::path();
    let ll = quote!(#crate_path::lower);
    let name = &input.ident;
    let (_, tg, _) = input.generics.split_for_impl();
    let jt: Vec<TokenStream> = tys.iter().map(|t| quote!(#t: #ll::JitType)).collect();
    let mut st = vec![quote!(#name #tg: ::core::marker::Copy)];
    st.extend(tys.iter().map(|t| quote!(#t: #ll::Stored)));
    [
        value_where(input, &jt),
        value_where(input, &st),
        value_where(input, &[quote!(#name #tg: #ll::JitType)]),
    ]
}

/// The impls that make a struct a value traced code holds in registers (`let p = *point;`) and
/// copies between places (`a.pos = b.pos`): `JitValue`, `JitType`, `Stored` (for `Copy` structs)
/// and `ConstValue`.
fn struct_values(input: &DeriveInput, s: &syn::DataStruct) -> syn::Result<TokenStream> {
    let mj = crate::krate::path();
    let ll = quote!(#mj::lower);
    let name = &input.ident;
    let name_str = name.to_string();
    let (ig, tg, _) = input.generics.split_for_impl();
    let fields = field_infos(&s.fields);
    let tys: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
    let keys: Vec<&String> = fields.iter().map(|f| &f.key).collect();
    let members: Vec<&TokenStream> = fields.iter().map(|f| &f.member).collect();
    let [jt, st, cv] = value_bounds(input, &tys);
    Ok(quote! {
        #[allow(private_bounds)]
        impl #ig #ll::JitValue for #name #tg #jt {
            const ENUM: bool = false;
            fn value_kinds() -> ::std::vec::Vec<#mj::jitcode::Kind> {
                #[allow(unused_mut)]
                let mut k = ::std::vec::Vec::new();
                #( k.extend(<<#tys as #ll::JitType>::Handle as #ll::Handle>::kinds()); )*
                k
            }
            fn value_slot(_variant: &str, field: &str) -> (usize, usize) {
                #[allow(unused_mut, unused_variables)]
                let mut at = 0usize;
                #({
                    let n = <<#tys as #ll::JitType>::Handle as #ll::Handle>::kinds().len();
                    if field == #keys {
                        return (at, n);
                    }
                    at += n;
                })*
                panic!("struct `{}` has no field `{}`", #name_str, field)
            }
            fn value_tag(_variant: &str) -> Option<i64> {
                None
            }
        }
        #[allow(private_bounds)]
        impl #ig #ll::JitType for #name #tg #jt {
            type Handle = #ll::Val<Self>;
            #[allow(unused_variables)]
            fn to_values(self, out: &mut ::std::vec::Vec<#mj::jitcode::Value>) {
                let this = ::core::mem::ManuallyDrop::new(self);
                // SAFETY: each field is read exactly once and `self` is not dropped, so every
                // field's value is moved exactly once.
                #( #ll::JitType::to_values(unsafe { ::core::ptr::read(&this.#members) }, out); )*
            }
            #[allow(unused_variables)]
            unsafe fn from_values(vals: &mut dyn Iterator<Item = #mj::jitcode::Value>) -> Self {
                // SAFETY: the values are those of a live value of this struct (the contract),
                // field after field.
                unsafe { Self { #( #members: <#tys as #ll::JitType>::from_values(vals), )* } }
            }
        }
        #[allow(private_bounds)]
        impl #ig #ll::Stored for #name #tg #st {
            fn load(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Val<Self> {
                let v = <#ll::Val<Self> as #ll::Handle>::fresh(b);
                #({
                    let fp = #ll::field_of_place(b, p, #keys, |q| {
                        // SAFETY: only the field's address is computed.
                        unsafe { ::core::ptr::addr_of!((*q).#members) }
                    });
                    let x = <#tys as #ll::Stored>::load(b, fp);
                    #ll::Handle::assign(v.field::<#tys>("", #keys), b, x);
                })*
                v
            }
            #[allow(unused_variables)]
            fn store(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>, v: #ll::Val<Self>) {
                #({
                    let fp = #ll::field_of_place(b, p, #keys, |q| {
                        // SAFETY: only the field's address is computed.
                        unsafe { ::core::ptr::addr_of!((*q).#members) }
                    });
                    #ll::write(b, fp, v.field::<#tys>("", #keys));
                })*
            }
        }
        #[allow(private_bounds)]
        impl #ig #ll::ConstValue for #name #tg #cv {
            fn constant(self, b: &mut #mj::jitcode::Builder) -> <Self as #ll::JitType>::Handle {
                #ll::const_value(b, self)
            }
        }
    })
}

/// The impls that make an enum with a primitive representation a value in registers (its tag
/// and every variant's fields): built by a variant expression (`Value::Int(x)`), copied between
/// places (`regs[a] = regs[b]`) when it is `Copy`.
fn enum_values(input: &DeriveInput, e: &syn::DataEnum) -> syn::Result<TokenStream> {
    let mj = crate::krate::path();
    let ll = quote!(#mj::lower);
    let v_ = quote!(#ll::value);
    let name = &input.ident;
    let name_str = name.to_string();
    let (ig, tg, _) = input.generics.split_for_impl();
    let mut all_tys = Vec::new();
    let mut slot_code = TokenStream::new();
    let mut to_arms = TokenStream::new();
    let mut tag_arms = TokenStream::new();
    let mut from_code = TokenStream::new();
    let mut load_arms = TokenStream::new();
    let mut store_arms = TokenStream::new();
    let mut all_names = Vec::new();
    let mut with_fields = Vec::new();
    for v in &e.variants {
        let vid = &v.ident;
        let vname = vid.to_string();
        all_names.push(vname.clone());
        let fields = field_infos(&v.fields);
        if !fields.is_empty() {
            with_fields.push(vname.clone());
        }
        let binds: Vec<syn::Ident> = (0..fields.len())
            .map(|i| format_ident!("__jit_f{}", i))
            .collect();
        let members: Vec<&TokenStream> = fields.iter().map(|f| &f.member).collect();
        let tys: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
        let keys: Vec<&String> = fields.iter().map(|f| &f.key).collect();
        for f in &fields {
            let (ty, key) = (&f.ty, &f.key);
            all_tys.push(ty.clone());
            slot_code.extend(quote!({
                let n = <<#ty as #ll::JitType>::Handle as #ll::Handle>::kinds().len();
                if (variant, field) == (#vname, #key) {
                    return (at, n);
                }
                at += n;
            }));
        }
        tag_arms.extend(quote!(Self::#vid { .. } => #vname,));
        to_arms.extend(quote!(Self::#vid { #( #members: #binds, )* .. } => {
            // SAFETY: each field is read exactly once and `self` is not dropped, so every
            // field's value is moved exactly once.
            #( #v_::put_field::<Self, #tys>(out, at, #vname, #keys, unsafe { ::core::ptr::read(#binds) }); )*
        }));
        from_code.extend(quote!(
            if tag == <Self as #ll::JitEnum>::variant_tag(#vname) {
                // SAFETY: the tag says the payload values are this variant's (the contract).
                return unsafe { Self::#vid { #( #members: #v_::take_field::<Self, #tys>(&rest, #vname, #keys), )* } };
            }
        ));
        load_arms.extend(quote!(#vname => { #( #v_::load_variant_field::<Self, #tys>(b, p, v, #vname, #keys); )* }));
        store_arms.extend(quote!(#vname => { #( #v_::store_variant_field::<Self, #tys>(b, p, v, #vname, #keys); )* }));
    }
    let [jt, st, cv] = value_bounds(input, &all_tys.iter().collect::<Vec<_>>());
    Ok(quote! {
        #[allow(private_bounds)]
        impl #ig #ll::JitValue for #name #tg #jt {
            const ENUM: bool = true;
            fn value_kinds() -> ::std::vec::Vec<#mj::jitcode::Kind> {
                #[allow(unused_mut)]
                let mut k = ::std::vec::Vec::new();
                #( k.extend(<<#all_tys as #ll::JitType>::Handle as #ll::Handle>::kinds()); )*
                k
            }
            fn value_slot(variant: &str, field: &str) -> (usize, usize) {
                #[allow(unused_mut, unused_variables)]
                let mut at = 0usize;
                #slot_code
                panic!("enum `{}` has no field `{}` in variant `{}`", #name_str, field, variant)
            }
            fn value_tag(variant: &str) -> Option<i64> {
                Some(<Self as #ll::JitEnum>::variant_tag(variant))
            }
        }
        #[allow(private_bounds)]
        impl #ig #ll::JitType for #name #tg #jt {
            type Handle = #ll::Val<Self>;
            #[allow(unused_variables)]
            fn to_values(self, out: &mut ::std::vec::Vec<#mj::jitcode::Value>) {
                let this = ::core::mem::ManuallyDrop::new(self);
                let variant = match &*this { #tag_arms };
                let at = #v_::start_values::<Self>(out, <Self as #ll::JitEnum>::variant_tag(variant));
                match &*this { #to_arms }
            }
            #[allow(unused_variables)]
            unsafe fn from_values(vals: &mut dyn Iterator<Item = #mj::jitcode::Value>) -> Self {
                let tag = vals.next().expect("missing value").int();
                let rest: ::std::vec::Vec<#mj::jitcode::Value> = <Self as #ll::JitValue>::value_kinds()
                    .iter()
                    .map(|_| vals.next().expect("missing value"))
                    .collect();
                #from_code
                panic!("{} is not a tag of `{}`", tag, #name_str)
            }
        }
        #[allow(private_bounds)]
        impl #ig #ll::Stored for #name #tg #st {
            fn load(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>) -> #ll::Val<Self> {
                let v = #v_::load_tag(b, p);
                let tag = v.tag.expect("an enum's tag");
                #v_::per_variant::<Self>(b, tag, &[#(#with_fields),*], |b, variant| match variant {
                    #load_arms
                    _ => {}
                });
                v
            }
            fn store(b: &mut #mj::jitcode::Builder, p: #ll::Ptr<Self>, v: #ll::Val<Self>) {
                let tag = v.tag.expect("an enum's tag");
                #v_::per_variant::<Self>(b, tag, &[#(#all_names),*], |b, variant| {
                    #v_::store_variant_tag::<Self>(b, p, variant);
                    match variant {
                        #store_arms
                        _ => {}
                    }
                });
            }
        }
        #[allow(private_bounds)]
        impl #ig #ll::ConstValue for #name #tg #cv {
            fn constant(self, b: &mut #mj::jitcode::Builder) -> <Self as #ll::JitType>::Handle {
                #ll::const_value(b, self)
            }
        }
    })
}
