//! The native side of the portal: what `#[jit::interpreter]` changes in the interpreter
//! function itself so that it can enter compiled code.
//!
//! Every `can_enter_jit!()` becomes a call of the portal's driver (`meta_jit::warm`) with the
//! values of the greens and reds; when the driver ran the JIT it hands back the greens and
//! reds at the merge point, which are assigned (the `continue` that follows goes to the merge
//! point), or the portal's return value, which is returned. Greens and reds that are
//! parameters (not already `mut`) are rebound `let mut` at the top of the body so they can be
//! assigned, except pinned greens (`crate::pinned`), which the JIT hands back unchanged and
//! which are not assigned; greens and reds declared with `let` must be `let mut`. The body
//! starts by telling the runtime that a portal call begins (`warm::portal_entered`).
//! `jit_merge_point!()` natively is a test of a local flag: the first time a portal call
//! passes it (the function's entry), it calls the driver's `function_entered` the same way, so
//! that a function entered often gets a function-entry trace. When the JIT is off the cost is
//! one local flag test per portal call and two thread-local flag tests per `can_enter_jit!`:
//! the driver's on flag and the collector's request; when the collector asks
//! (`meta_jit::gc::collection_wanted`), the greens and reds are handed to its safe point as
//! roots (through `Trace`; one that does not implement it makes the safe point skip the
//! collection). The driver gets the same roots as a closure, for collections in compiled code;
//! the closure captures copies of the greens and reds (or the references they hold), never
//! their addresses. `jit_merge_point!()` is no safe point.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Expr, FnArg, Ident, ItemFn, Pat, Stmt};

use crate::lower::Portal;

/// Rewrites the native portal function.
///
/// `resuming`: `f` is the resume function (`crate::resume`) of the portal of that name, which
/// is no function entry: its `jit_merge_point!()` does not count one.
pub fn rewrite(f: &mut ItemFn, portal: &Portal, resuming: Option<&Ident>) {
    let name = resuming.unwrap_or(&f.sig.ident).clone();
    let vars: Vec<&Ident> = portal.greens.iter().chain(&portal.reds).collect();
    let mut rebinds: Vec<Stmt> = Vec::new();
    // A parameter the body binds again at its top level needs no rebinding.
    let bound: Vec<Ident> = f
        .block
        .stmts
        .iter()
        .filter_map(|st| match st {
            Stmt::Local(l) => match &l.pat {
                Pat::Ident(pi) => Some(pi.ident.clone()),
                Pat::Type(pt) => match &*pt.pat {
                    Pat::Ident(pi) => Some(pi.ident.clone()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect();
    for arg in &f.sig.inputs {
        if let FnArg::Typed(pt) = arg {
            if let Pat::Ident(pi) = &*pt.pat {
                let id = &pi.ident;
                if vars.contains(&id)
                    && pi.mutability.is_none()
                    && !portal.pinned.contains(id)
                    && !bound.contains(id)
                {
                    rebinds.push(parse_quote!(#[allow(unused_mut, clippy::redundant_locals)] let mut #id = #id;));
                }
            }
        }
    }
    let mut v = Expand {
        name: name.clone(),
        greens: portal.greens.iter().map(ToString::to_string).collect(),
        pinned: portal.pinned.iter().map(ToString::to_string).collect(),
        reds: portal.reds.iter().map(ToString::to_string).collect(),
        greens_static: portal.greens_static,
        sites: 0,
        entries: 0,
    };
    v.visit_block_mut(&mut f.block);
    if v.sites == 0 {
        rebinds.clear();
    }
    if v.entries > 0 {
        let first = resuming.is_none();
        rebinds.push(
            parse_quote!(#[allow(unused_mut, unused_variables)] let mut __jit_first = #first;),
        );
    }
    rebinds.insert(0, {
        let mj = crate::krate::path();
        let pins = portal.pinned.iter().map(|g| {
            let id = Ident::new(&g.to_string(), Span::call_site());
            quote!(#mj::warm::Live::push_values(&#id, &mut __jit_pins);)
        });
        parse_quote!(let __jit_portal_call = {
            let mut __jit_pins = #mj::warm::Vals::default();
            #(#pins)*
            #mj::warm::portal_entered(&__jit_pins)
        };)
    });
    f.block.stmts.splice(0..0, rebinds);
}

/// The expansion of one `can_enter_jit!()` (`entry` false) or of `jit_merge_point!()`
/// (`entry` true: the driver is called the first time a portal call passes it). The variables
/// are named with the span of the macro call, so they resolve where it stands even when the
/// body comes from a `macro_rules!` macro (hygiene).
fn enter(v: &Expand, span: Span, entry: bool) -> TokenStream {
    let mj = crate::krate::path();
    let w = quote!(#mj::warm);
    let name = &v.name;
    let greens: Vec<TokenStream> = v
        .greens
        .iter()
        .map(|g| {
            let id = Ident::new(g, span);
            if v.pinned.contains(g) {
                quote!(#w::take_pinned(&mut __jit_it, &#id))
            } else {
                quote!(#id = #w::take(&mut __jit_it))
            }
        })
        .collect();
    let green_ids: Vec<Ident> = v.greens.iter().map(|g| Ident::new(g, span)).collect();
    let reds: Vec<Ident> = v.reds.iter().map(|r| Ident::new(r, span)).collect();
    let gc = quote!(#mj::gc);
    let all: Vec<&Ident> = green_ids.iter().chain(&reds).collect();
    let views: Vec<Ident> = (0..all.len())
        .map(|k| Ident::new(&format!("__jit_view{k}"), span))
        .collect();
    // `&'static` greens are no anchors (see `meta_jit::gc::probe::NoAnchor`).
    let static_views: Vec<TokenStream> = if v.greens_static {
        views[..green_ids.len()]
            .iter()
            .map(|w| quote!(let #w = #gc::probe::NoAnchor(#w);))
            .collect()
    } else {
        Vec::new()
    };
    let (test, safepoint, call) = if entry {
        (
            quote!(::core::mem::replace(&mut __jit_first, false) && #name::__jit_is_on()),
            quote!(),
            quote!(#w::function_entered(__jit_d, &__jit_v, __jit_ng)),
        )
    } else {
        let safepoint = quote! {
            // The portal's roots for the collector: every live variable of the portal is a
            // green or a red. The closure captures views of them by value (copies, or the
            // references they hold), never their addresses, which would keep them in memory.
            #[allow(unused_imports)]
            use #gc::probe::{ViaCopy as _, ViaMut as _, ViaOpaque as _, ViaRef as _};
            #( let #views = (&&&&#gc::probe::Probe(&#all)).__jit_view(); )*
            #( #static_views )*
            let __jit_roots = move |__jit_t: &mut #gc::Tracer| {
                #( #gc::probe::View::trace_view(&#views, __jit_t); )*
            };
            // The collector's safe point.
            if #gc::collection_wanted() {
                let mut __jit_t = #gc::Tracer::new();
                __jit_roots(&mut __jit_t);
                // SAFETY: the roots are all the portal's greens and reds at its
                // `can_enter_jit!`.
                #[allow(unsafe_code)]
                unsafe { #gc::__safepoint(__jit_t) };
            }
        };
        // Compiled code that the driver runs may collect in its allocation slow path, with
        // these greens and reds (as of now) among the roots.
        (
            quote!(#name::__jit_is_on()),
            safepoint,
            quote!(#w::can_enter_jit(__jit_d, &__jit_v, __jit_ng, &__jit_roots)),
        )
    };
    quote! {{
        #safepoint
        #[allow(unsafe_code)]
        if #test {
            let mut __jit_v = #w::Vals::default();
            #( #w::Live::push_values(&#green_ids, &mut __jit_v); )*
            let __jit_ng = __jit_v.len();
            #( #w::Live::push_values(&#reds, &mut __jit_v); )*
            // SAFETY: the values are this portal's greens and reds at `can_enter_jit!`, which
            // is directly followed by the jump to the merge point, or at the merge point
            // itself; what comes back is assigned to them (or returned) before they are used
            // again.
            let __jit_r = #name::with_driver(|__jit_d| unsafe { #call });
            match __jit_r {
                ::core::option::Option::None => {}
                ::core::option::Option::Some(#w::Resumed::MergePoint(__jit_vals)) => {
                    let mut __jit_it = __jit_vals.into_iter();
                    // SAFETY: the driver hands back values of the greens' and reds' types
                    // (those the interpreter's jitcode holds at the merge point).
                    unsafe {
                        #( #greens; )*
                        #( #reds = #w::take(&mut __jit_it); )*
                    }
                }
                ::core::option::Option::Some(#w::Resumed::Return(__jit_vals)) => {
                    let mut __jit_it = __jit_vals.into_iter();
                    // SAFETY: the values the portal's jitcode returned.
                    return unsafe { #w::take(&mut __jit_it) };
                }
            }
        }
    }}
}

struct Expand {
    name: Ident,
    greens: Vec<String>,
    pinned: Vec<String>,
    reds: Vec<String>,
    /// Every reference green is `&'static` (see `crate::pinned::greens_static`).
    greens_static: bool,
    sites: usize,
    /// `jit_merge_point!()`s rewritten.
    entries: usize,
}

/// A `can_enter_jit!()` to rewrite. One with arguments stays as written, so that the hint
/// macro itself reports the error (greens and reds belong in the portal's attribute).
fn is_can_enter(mac: &syn::Macro) -> bool {
    is_hint(mac, "can_enter_jit")
}

/// A `jit_merge_point!()` to rewrite (as `is_can_enter`).
fn is_merge_point(mac: &syn::Macro) -> bool {
    is_hint(mac, "jit_merge_point")
}

fn is_hint(mac: &syn::Macro, name: &str) -> bool {
    mac.tokens.is_empty() && mac.path.segments.last().is_some_and(|s| s.ident == name)
}

impl VisitMut for Expand {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Stmt::Macro(m) = s {
            if is_can_enter(&m.mac) {
                let call = enter(self, m.mac.path.span(), false);
                self.sites += 1;
                *s = Stmt::Expr(parse_quote!(#call), None);
                return;
            }
            if is_merge_point(&m.mac) {
                let call = enter(self, m.mac.path.span(), true);
                self.sites += 1;
                self.entries += 1;
                *s = Stmt::Expr(parse_quote!(#call), None);
                return;
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Macro(m) = e {
            if is_can_enter(&m.mac) {
                let call = enter(self, m.mac.path.span(), false);
                self.sites += 1;
                *e = parse_quote!(#call);
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}
