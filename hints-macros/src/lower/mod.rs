//! The lowering of a function body: Rust syntax in, Rust code that drives the jitcode builder
//! out. Statements and blocks live here; expressions in [`expr`]; `match` and patterns in
//! [`pat`]; desugarings (`for`, `if let`, `while let`, `&&`, `||`, `matches!`) in [`desugar`].
//!
//! The generated code works on typed handles (`Reg<T>`, `Ptr<T>`, ...), so rustc's type
//! inference decides which jitcode op each construct becomes; this module never needs a type.
//! It tracks only what syntax tells: which names are local variables, which loops are open, and
//! which expressions diverge (`return`, `break`, `continue`, `panic!`), so that the values of
//! `if`/`match` arms that never complete are not joined.

pub mod desugar;
pub mod expr;
pub mod pat;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Block, Ident, Stmt};

/// A lowered expression: tokens evaluating to its handle, and whether control never leaves it
/// normally (then the tokens evaluate to `()` and the handle does not exist).
pub struct Lowered {
    pub ts: TokenStream,
    pub diverges: bool,
}

impl Lowered {
    pub fn value(ts: TokenStream) -> Lowered {
        Lowered {
            ts,
            diverges: false,
        }
    }
    pub fn diverging(ts: TokenStream) -> Lowered {
        Lowered { ts, diverges: true }
    }
}

/// The portal's greens and reds, when lowering a `#[jit::interpreter]` function.
pub struct Portal {
    pub greens: Vec<Ident>,
    pub reds: Vec<Ident>,
    pub merge_points: usize,
    /// The greens that are pinned (see `crate::pinned`).
    pub pinned: Vec<Ident>,
    /// Whether the greens are pinned as a whole.
    pub greens_pinned: bool,
    /// Whether every reference among the greens is `&'static` (see `crate::pinned`).
    pub greens_static: bool,
    /// `location = f`: renders the greens for the JIT log.
    pub location: Option<syn::Path>,
    /// `crate = path`: the path of meta-jit.
    pub krate: Option<syn::Path>,
    /// Whether the portal has a native resume function (`crate::resume`).
    pub resume: bool,
}

pub struct LoopCtx {
    pub label: Option<String>,
    pub head: Ident,
    pub exit: Ident,
    pub res: Ident,
    pub broke: bool,
    pub broke_value: bool,
}

pub struct Lowerer {
    scopes: Vec<Vec<Ident>>,
    pub loops: Vec<LoopCtx>,
    n: usize,
    pub portal: Option<Portal>,
    /// Loops are allowed (`#[unroll_safe]` or the portal).
    pub allow_loops: bool,
    /// The policy attribute, for error messages.
    pub policy: &'static str,
    /// Single-name callees and their arity (for the "not annotated" fallbacks).
    pub callees: Vec<(Ident, usize)>,
}

/// `__jit_b`, the builder every generated statement uses.
pub fn b() -> TokenStream {
    quote!(__jit_b)
}

/// The path of the typed lowering layer.
pub fn l() -> TokenStream {
    let mj = crate::krate::path();
    quote!(#mj::lower)
}

impl Lowerer {
    pub fn new(policy: &'static str, allow_loops: bool, portal: Option<Portal>) -> Lowerer {
        Lowerer {
            scopes: vec![Vec::new()],
            loops: Vec::new(),
            n: 0,
            portal,
            allow_loops,
            policy,
            callees: Vec::new(),
        }
    }

    /// A fresh hidden identifier.
    pub fn id(&mut self, base: &str) -> Ident {
        self.n += 1;
        format_ident!("__jit_{}{}", base, self.n, span = Span::call_site())
    }

    pub fn declare(&mut self, name: &Ident) {
        self.scopes.last_mut().unwrap().push(name.clone());
    }
    pub fn is_local(&self, name: &str) -> bool {
        self.lookup(name).is_some()
    }
    /// The identifier (with its hygiene) a local variable was declared with.
    pub fn lookup(&self, name: &str) -> Option<Ident> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|n| *n == name)
            .cloned()
    }
    pub fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }
    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// A block: its statements in a Rust block of the same scope; the value is the final
    /// expression's handle, or `()`.
    pub fn block(&mut self, block: &Block) -> syn::Result<Lowered> {
        self.push_scope();
        let r = self.stmts(&block.stmts);
        self.pop_scope();
        r
    }

    pub fn stmts(&mut self, stmts: &[Stmt]) -> syn::Result<Lowered> {
        let mut out = TokenStream::new();
        let n = stmts.len();
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                Stmt::Local(local) => {
                    let l = self.local(local)?;
                    out.extend(l.ts);
                    if l.diverges {
                        return Ok(Lowered::diverging(quote!({ #out })));
                    }
                }
                Stmt::Item(item) => {
                    // Items (consts, uses, ...) keep their meaning inside the generated block.
                    out.extend(quote!(#item));
                }
                Stmt::Expr(e, semi) => {
                    let le = self.expr(e)?;
                    if le.diverges {
                        let ts = le.ts;
                        return Ok(Lowered::diverging(quote!({ #out #ts; })));
                    }
                    let ts = le.ts;
                    if last && semi.is_none() {
                        return Ok(Lowered::value(quote!({ #out #ts })));
                    }
                    out.extend(quote!(let _ = #ts;));
                }
                Stmt::Macro(m) => {
                    let e = syn::Expr::Macro(syn::ExprMacro {
                        attrs: m.attrs.clone(),
                        mac: m.mac.clone(),
                    });
                    let le = self.expr(&e)?;
                    let ts = le.ts;
                    if le.diverges {
                        return Ok(Lowered::diverging(quote!({ #out #ts; })));
                    }
                    out.extend(quote!(let _ = #ts;));
                }
            }
        }
        Ok(Lowered::value(quote!({ #out })))
    }

    fn local(&mut self, local: &syn::Local) -> syn::Result<Lowered> {
        let (pat, ty) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let syn::Pat::Tuple(t) = pat {
            return self.let_tuple(local, t, ty);
        }
        let (ident, ty, bind) = match &local.pat {
            syn::Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                (pi.ident.clone(), None, pat::bind_fn(pi))
            }
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                    (pi.ident.clone(), Some((*pt.ty).clone()), pat::bind_fn(pi))
                }
                other => return Err(unsupported_pat_in_let(other)),
            },
            syn::Pat::Wild(_) => {
                let Some(init) = &local.init else {
                    return Err(syn::Error::new_spanned(
                        &local.pat,
                        "`let _;` without a value",
                    ));
                };
                let e = self.expr(&init.expr)?;
                let ts = e.ts;
                return Ok(Lowered {
                    ts: quote!(let _ = #ts;),
                    diverges: e.diverges,
                });
            }
            other => return Err(unsupported_pat_in_let(other)),
        };
        let init = let_init(local)?;
        let e = self.expr(&init.expr)?;
        if e.diverges {
            return Ok(e);
        }
        let (bb, ll, ts) = (b(), l(), e.ts);
        let name = ident.to_string();
        let annot = ty.map(|t| quote!(: <#t as #ll::JitType>::Handle));
        self.declare(&ident);
        Ok(Lowered::value(
            quote!(let #ident #annot = { let __jit_v = #ts; #ll::#bind(#bb, #name, __jit_v) };),
        ))
    }

    /// `let (a, (b, _), mut c) = e;` (with an optional type): the tuple's handle is taken apart
    /// element by element (see `meta_jit::lower::tuple`), each name bound as a `let` binds it.
    fn let_tuple(
        &mut self,
        local: &syn::Local,
        t: &syn::PatTuple,
        ty: Option<&syn::Type>,
    ) -> syn::Result<Lowered> {
        let init = let_init(local)?;
        let e = self.expr(&init.expr)?;
        if e.diverges {
            return Ok(e);
        }
        let (ll, ts) = (l(), e.ts);
        let whole = self.id("tuple");
        let annot = ty.map(|t| quote!(: <#t as #ll::JitType>::Handle));
        let mut out = quote!(let #whole #annot = #ts;);
        self.destructure(t, quote!(#whole), &mut out)?;
        Ok(Lowered::value(out))
    }

    /// The bindings of tuple pattern `t` against the tuple handle `h`.
    fn destructure(
        &mut self,
        t: &syn::PatTuple,
        h: TokenStream,
        out: &mut TokenStream,
    ) -> syn::Result<()> {
        let (bb, ll) = (b(), l());
        for (i, p) in t.elems.iter().enumerate() {
            let i = syn::Index::from(i);
            match p {
                syn::Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                    let id = &pi.ident;
                    let name = id.to_string();
                    let bind = pat::bind_fn(pi);
                    self.declare(id);
                    out.extend(quote!(let #id = #ll::#bind(#bb, #name, #h.#i);));
                }
                syn::Pat::Wild(_) => {}
                syn::Pat::Tuple(inner) => self.destructure(inner, quote!(#h.#i), out)?,
                syn::Pat::Rest(r) => {
                    return Err(syn::Error::new_spanned(
                        r,
                        "`..` in a `let` tuple pattern is not supported in traced code; name every element (`_` for the ones you skip)",
                    ))
                }
                other => return Err(unsupported_pat_in_let(other)),
            }
        }
        Ok(())
    }

    /// Finds the loop a `break`/`continue` with `label` targets.
    pub fn find_loop(
        &mut self,
        label: Option<&syn::Lifetime>,
        span: &dyn quote::ToTokens,
    ) -> syn::Result<usize> {
        let found = match label {
            None => self.loops.len().checked_sub(1),
            Some(l) => {
                let name = l.ident.to_string();
                self.loops
                    .iter()
                    .rposition(|c| c.label.as_deref() == Some(&name))
            }
        };
        found.ok_or_else(|| {
            syn::Error::new_spanned(
                span,
                "`break`/`continue` outside of a loop of this function",
            )
        })
    }
}

/// The initial value of `local`: an error for a `let` without one or a `let ... else`.
fn let_init(local: &syn::Local) -> syn::Result<&syn::LocalInit> {
    let Some(init) = &local.init else {
        return Err(syn::Error::new_spanned(
            local,
            "a `let` without an initial value is not supported in traced code; initialize the variable where it is declared",
        ));
    };
    if let Some((_, els)) = &init.diverge {
        return Err(syn::Error::new_spanned(
            els,
            "`let ... else` is not supported in traced code; use `match`",
        ));
    }
    Ok(init)
}

fn unsupported_pat_in_let(p: &syn::Pat) -> syn::Error {
    syn::Error::new_spanned(
        p,
        "only `let name = ...;`, `let name: Type = ...;` and tuple patterns of names (`let (a, _, mut b) = ...;`) are supported in traced code; destructure other values with `match` or field accesses",
    )
}
