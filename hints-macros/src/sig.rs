//! Function signatures of annotated functions: parameters, receiver, result, and the type
//! rewrites companions need (lifetimes made `'static` in handle positions, `Self` and `super`
//! paths made valid inside the companion module).

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::visit_mut::VisitMut;
use syn::{FnArg, Ident, Pat, ReturnType, Signature, Type};

/// A parameter: its name in the body and its declared type.
pub struct Param {
    pub name: Ident,
    pub ty: Type,
}

/// What a companion needs from a signature.
pub struct Sig {
    pub name: Ident,
    /// `Some(is_mut)` for `&self` / `&mut self`.
    pub receiver: Option<bool>,
    pub params: Vec<Param>,
    pub ret: Type,
}

pub fn analyze(sig: &Signature, self_ty: Option<&Type>) -> syn::Result<Sig> {
    if let Some(g) = sig.generics.type_params().next() {
        return Err(syn::Error::new_spanned(
            g,
            "generic functions are not supported by the codewriter; write a non-generic wrapper and annotate it",
        ));
    }
    if let Some(c) = sig.generics.const_params().next() {
        return Err(syn::Error::new_spanned(
            c,
            "const generic functions are not supported by the codewriter",
        ));
    }
    if let Some(a) = &sig.asyncness {
        return Err(syn::Error::new_spanned(
            a,
            "async functions are not supported by the codewriter",
        ));
    }
    let mut receiver = None;
    let mut params = Vec::new();
    for (i, arg) in sig.inputs.iter().enumerate() {
        match arg {
            FnArg::Receiver(r) => {
                if r.reference.is_none() {
                    return Err(syn::Error::new_spanned(
                        r,
                        "methods that take `self` by value are not supported in traced code; take `&self` or `&mut self`",
                    ));
                }
                if self_ty.is_none() {
                    return Err(syn::Error::new_spanned(
                        r,
                        "a method needs `#[jit::methods]` on its `impl` block so the JIT can find it",
                    ));
                }
                receiver = Some(r.mutability.is_some());
            }
            FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => pi.ident.clone(),
                    Pat::Wild(_) => Ident::new(&format!("__jit_arg{i}"), Span::call_site()),
                    other => {
                        return Err(syn::Error::new_spanned(
                            other,
                            "parameters of annotated functions must be plain names (`x: T`); destructure inside the body",
                        ))
                    }
                };
                let mut ty = (*pt.ty).clone();
                if let Some(st) = self_ty {
                    ReplaceSelf(st).visit_type_mut(&mut ty);
                }
                if let Type::ImplTrait(_) = ty {
                    return Err(syn::Error::new_spanned(
                        &pt.ty,
                        "`impl Trait` parameters are not supported by the codewriter",
                    ));
                }
                params.push(Param { name, ty });
            }
        }
    }
    let mut ret = match &sig.output {
        ReturnType::Default => syn::parse_quote!(()),
        ReturnType::Type(_, t) => (**t).clone(),
    };
    if let Some(st) = self_ty {
        ReplaceSelf(st).visit_type_mut(&mut ret);
    }
    Ok(Sig {
        name: sig.ident.clone(),
        receiver,
        params,
        ret,
    })
}

/// The type with every lifetime (named, `'_` or elided) made `'static` and `super::` paths
/// adjusted for one more module level: the form used inside a companion module.
pub fn static_ty(ty: &Type) -> TokenStream {
    let mut t = ty.clone();
    StaticLifetimes.visit_type_mut(&mut t);
    FixSuper.visit_type_mut(&mut t);
    t.into_token_stream()
}

/// `ty` as written, with `super::` adjusted (for signatures copied into a companion).
pub fn inner_ty(ty: &Type) -> TokenStream {
    let mut t = ty.clone();
    FixSuper.visit_type_mut(&mut t);
    t.into_token_stream()
}

/// Makes every lifetime (named, `'_` or elided) `'static`.
pub(crate) struct StaticLifetimes;
impl VisitMut for StaticLifetimes {
    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        *l = syn::Lifetime::new("'static", l.span());
    }
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        if r.lifetime.is_none() {
            r.lifetime = Some(syn::Lifetime::new("'static", Span::call_site()));
        }
        syn::visit_mut::visit_type_reference_mut(self, r);
    }
}

/// Rewrites `super::x` to `super::super::x` (the companion is one module deeper).
pub struct FixSuper;
impl VisitMut for FixSuper {
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        if p.leading_colon.is_none() && p.segments.first().is_some_and(|s| s.ident == "super") {
            let first = p.segments[0].clone();
            p.segments.insert(0, first);
        }
        syn::visit_mut::visit_path_mut(self, p);
    }
}

/// Rewrites `Self` to the impl's self type.
pub struct ReplaceSelf<'a>(pub &'a Type);
impl VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, t: &mut Type) {
        if let Type::Path(tp) = t {
            if tp.qself.is_none() && tp.path.is_ident("Self") {
                *t = self.0.clone();
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, t);
    }
    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        if p.segments.len() > 1 && p.segments[0].ident == "Self" {
            if let Type::Path(tp) = self.0 {
                let rest: Vec<_> = p.segments.iter().skip(1).cloned().collect();
                let mut np = tp.path.clone();
                // Generic arguments on the type go away in expression/pattern position.
                for s in np.segments.iter_mut() {
                    s.arguments = syn::PathArguments::None;
                }
                np.segments.extend(rest);
                *p = np;
            }
        }
        syn::visit_mut::visit_path_mut(self, p);
    }
}

pub fn self_type_name(ty: &Type) -> syn::Result<Ident> {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => Ok(tp.path.segments.last().unwrap().ident.clone()),
        _ => Err(syn::Error::new_spanned(
            ty,
            "`#[jit::methods]` needs an impl of a named type",
        )),
    }
}
