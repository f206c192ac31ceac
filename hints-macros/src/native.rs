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
//! `jit_merge_point!()` stays a no-op natively. When the JIT is off the cost is two
//! thread-local flag tests per `can_enter_jit!`: the driver's on flag and the collector's
//! request; when the collector asks (`meta_jit::gc::collection_wanted`), the greens and reds
//! are handed to its safe point as roots (through `Trace`; one that does not implement it
//! makes the safe point skip the collection). The driver gets the same roots as a closure, for
//! collections in compiled code; the closure captures copies of the greens and reds (or the
//! references they hold), never their addresses.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Expr, FnArg, Ident, ItemFn, Pat, Stmt};

use crate::lower::Portal;

/// Rewrites the native portal function.
pub fn rewrite(f: &mut ItemFn, portal: &Portal) {
    let name = f.sig.ident.clone();
    let vars: Vec<&Ident> = portal.greens.iter().chain(&portal.reds).collect();
    let mut rebinds: Vec<Stmt> = Vec::new();
    for arg in &f.sig.inputs {
        if let FnArg::Typed(pt) = arg {
            if let Pat::Ident(pi) = &*pt.pat {
                let id = &pi.ident;
                if vars.contains(&id) && pi.mutability.is_none() && !portal.pinned.contains(id) {
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
        sites: 0,
    };
    v.visit_block_mut(&mut f.block);
    if v.sites == 0 {
        rebinds.clear();
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

/// The expansion of one `can_enter_jit!()`. The variables are named with the span of the
/// macro call, so they resolve where it stands even when the body comes from a `macro_rules!`
/// macro (hygiene).
fn enter(v: &Expand, span: Span) -> TokenStream {
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
    quote! {{
        // The portal's roots for the collector: every live variable of the portal is a green
        // or a red. The closure captures views of them by value (copies, or the references
        // they hold), never their addresses, which would keep them in memory.
        #[allow(unused_imports)]
        use #gc::probe::{ViaCopy as _, ViaMut as _, ViaOpaque as _, ViaRef as _};
        #( let #views = (&&&&#gc::probe::Probe(&#all)).__jit_view(); )*
        let __jit_roots = move |__jit_t: &mut #gc::Tracer| {
            #( #gc::probe::View::trace_view(&#views, __jit_t); )*
        };
        // The collector's safe point.
        if #gc::collection_wanted() {
            let mut __jit_t = #gc::Tracer::new();
            __jit_roots(&mut __jit_t);
            // SAFETY: the roots are all the portal's greens and reds at its `can_enter_jit!`.
            #[allow(unsafe_code)]
            unsafe { #gc::__safepoint(__jit_t) };
        }
        #[allow(unsafe_code)]
        if #name::__jit_is_on() {
            let mut __jit_v = #w::Vals::default();
            #( #w::Live::push_values(&#green_ids, &mut __jit_v); )*
            let __jit_ng = __jit_v.len();
            #( #w::Live::push_values(&#reds, &mut __jit_v); )*
            // SAFETY: the values are this portal's greens and reds at `can_enter_jit!`, which
            // is directly followed by the jump to the merge point; what comes back is assigned
            // to them (or returned) before they are used again.
            // Compiled code that the driver runs may collect in its allocation slow path,
            // with these greens and reds (as of now) among the roots.
            let __jit_r = #name::with_driver(|__jit_d| unsafe {
                #w::can_enter_jit(__jit_d, &__jit_v, __jit_ng, &__jit_roots)
            });
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
    sites: usize,
}

/// A `can_enter_jit!()` to rewrite. One with arguments stays as written, so that the hint
/// macro itself reports the error (greens and reds belong in the portal's attribute).
fn is_can_enter(mac: &syn::Macro) -> bool {
    mac.tokens.is_empty()
        && mac
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "can_enter_jit")
}

impl VisitMut for Expand {
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Stmt::Macro(m) = s {
            if is_can_enter(&m.mac) {
                let call = enter(self, m.mac.path.span());
                self.sites += 1;
                *s = Stmt::Expr(parse_quote!(#call), None);
                return;
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Macro(m) = e {
            if is_can_enter(&m.mac) {
                let call = enter(self, m.mac.path.span());
                self.sites += 1;
                *e = parse_quote!(#call);
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}
