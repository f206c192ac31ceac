//! The portal resumed natively at its merge point: a copy of the portal function that starts
//! at the head of its dispatch loop with greens and reds it is given (see
//! `meta_jit::warm::ResumeFn`). The driver runs it to finish a portal call that compiled code
//! made (`call_assembler`) when the callee's code left it at a merge point, instead of the
//! portal's jitcode.
//!
//! Made only for a portal whose dispatch loop is a top-level `loop` starting with
//! `jit_merge_point!()`, whose greens and reds have types the macro can see (a parameter's, a
//! `let` with a type, or an initial value that names one: `0usize`, `x as i64`, `true`), and
//! whose other variables declared before the loop are not mentioned in the loop or after it.
//! Then declaring the greens and reds with the values given and running the loop and what
//! follows it is the portal from its merge point; what comes before the loop is not run again.
//! Any other portal finishes such calls in its jitcode.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{parse_quote, Expr, FnArg, Ident, ItemFn, Pat, Stmt, Type};

use crate::liveness::is_merge_point;
use crate::lower::Portal;
use crate::native;

/// The names a pattern binds, with their type when the pattern is `name: Type`.
fn bound(p: &Pat, out: &mut Vec<(Ident, Option<Type>)>) {
    match p {
        Pat::Ident(pi) => out.push((pi.ident.clone(), None)),
        Pat::Type(pt) => match &*pt.pat {
            Pat::Ident(pi) => out.push((pi.ident.clone(), Some((*pt.ty).clone()))),
            other => bound(other, out),
        },
        Pat::Tuple(t) => t.elems.iter().for_each(|e| bound(e, out)),
        Pat::Paren(pp) => bound(&pp.pat, out),
        _ => {}
    }
}

/// The type an initial value names: a suffixed literal, a `bool` literal or a cast.
fn named_type(e: &Expr) -> Option<Type> {
    match e {
        Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) if !i.suffix().is_empty() => syn::parse_str(i.suffix()).ok(),
            syn::Lit::Float(f) if !f.suffix().is_empty() => syn::parse_str(f.suffix()).ok(),
            syn::Lit::Bool(_) => Some(parse_quote!(bool)),
            _ => None,
        },
        Expr::Cast(c) => Some((*c.ty).clone()),
        Expr::Paren(p) => named_type(&p.expr),
        _ => None,
    }
}

/// Every identifier in `stmts`, macro arguments included.
fn mentioned(stmts: &[Stmt]) -> Vec<String> {
    fn idents(ts: TokenStream, out: &mut Vec<String>) {
        for t in ts {
            match t {
                proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    idents(quote!(#(#stmts)*), &mut out);
    out
}

/// The resume function of portal `f` (named `__jit_resume_<name>`, taking the values and
/// returning the portal's result), rewritten as the native portal is (`crate::native`);
/// `None` when the portal's shape does not allow one.
pub fn resume_fn(f: &ItemFn, portal: &Portal) -> Option<ItemFn> {
    let stmts = &f.block.stmts;
    let k = stmts.iter().position(|s| {
        matches!(s, Stmt::Expr(Expr::Loop(l), _) if l.body.stmts.first().is_some_and(is_merge_point))
    })?;
    // The variables declared before the loop, with their types where the macro sees them.
    // The identifiers keep their spans (their hygiene, when the portal comes from a macro).
    let mut types: HashMap<String, (Ident, Option<Type>)> = HashMap::new();
    for arg in &f.sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return None;
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return None;
        };
        types.insert(
            pi.ident.to_string(),
            (pi.ident.clone(), Some((*pt.ty).clone())),
        );
    }
    for s in &stmts[..k] {
        if let Stmt::Local(l) = s {
            let mut names = Vec::new();
            bound(&l.pat, &mut names);
            let init = l.init.as_ref().and_then(|i| named_type(&i.expr));
            for (id, ty) in names {
                types.insert(id.to_string(), (id, ty.or_else(|| init.clone())));
            }
        }
    }
    let rest = &stmts[k..];
    let live_names: Vec<String> = portal
        .greens
        .iter()
        .chain(&portal.reds)
        .map(ToString::to_string)
        .collect();
    let mentions = mentioned(rest);
    if types
        .keys()
        .any(|n| !live_names.contains(n) && mentions.contains(n))
    {
        return None;
    }
    let mj = crate::krate::path();
    let mut decls: Vec<Stmt> = vec![parse_quote!(let mut __jit_it = __jit_vals.into_iter();)];
    for name in &live_names {
        let (id, ty) = types.get(name).cloned()?;
        let ty = ty?;
        decls.push(parse_quote! {
            // SAFETY: the values are the greens' then the reds' at the merge point, of their
            // types (the resume function's contract).
            #[allow(unused_mut)]
            let mut #id: #ty = unsafe { #mj::warm::take(&mut __jit_it) };
        });
    }
    // Items declared in the body (`use`, `const`, helper functions) stay visible.
    let items: Vec<&Stmt> = stmts[..k]
        .iter()
        .filter(|s| matches!(s, Stmt::Item(_)))
        .collect();
    let name = format_ident!("__jit_resume_{}", f.sig.ident);
    let generics = &f.sig.generics;
    let output = &f.sig.output;
    let body: TokenStream = quote!(#(#items)* #(#rest)*);
    let jc = quote!(#mj::jitcode);
    let mut inner: ItemFn = parse_quote! {
        /// The portal resumed at its merge point (see `meta_jit::warm::ResumeFn`).
        ///
        /// # Safety
        /// As `meta_jit::warm::ResumeFn`.
        #[doc(hidden)]
        #[allow(unused_mut, unused_variables, unreachable_code, clippy::all)]
        unsafe fn #name #generics (__jit_vals: ::std::vec::Vec<#jc::Value>) #output {
            #body
        }
    };
    native::rewrite(&mut inner, portal, Some(&f.sig.ident));
    // The declarations go first: the rewrite's own first statement (the portal call's start)
    // reads the pinned greens.
    inner.block.stmts.splice(0..0, decls);
    Some(inner)
}
