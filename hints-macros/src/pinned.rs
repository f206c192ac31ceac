//! Which greens of a portal are *pinned*: the same object for the whole portal call, so that
//! the driver may check what traces folded from them once per call (see
//! `meta_jit::warm::JitDriver::greens_pinned`).
//!
//! A green is pinned when it is a parameter of shared-reference type (`&T`, `&[T]`), bound by
//! a plain name (not `mut`, not `ref`), that the body never rebinds: no pattern anywhere in the
//! body binds its name, and no macro call other than the formatting and assertion macros of
//! `std` and the hints mentions it (a macro could expand to a `let`). The object is then
//! borrowed for the whole call, so it can be neither freed nor, through its immutable
//! fields, changed. The expansion does not assign pinned greens (rustc rejects an assignment,
//! which would otherwise compile after the `let mut` rebinding of other greens).
//!
//! The portal's greens are pinned as a whole when every green is pinned or has a scalar type
//! (an integer, `bool`, `char` or float) written on its parameter, or on every `let` that
//! binds it when no other pattern does.
//!
//! Must not know: the runtime's checks, or any guest language.

use syn::visit::Visit;
use syn::{Expr, FnArg, Ident, ItemFn, Pat, Type};

/// Macros that cannot bind a name at their call site.
const HARMLESS_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "dbg",
    "eprint",
    "eprintln",
    "format",
    "format_args",
    "matches",
    "panic",
    "print",
    "println",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
    "jit_merge_point",
    "can_enter_jit",
    "promote",
    "record_exact_value",
    "record_known_result",
];

/// Whether every green that is a parameter of reference type is a shared `&'static`
/// reference: its object can never be freed, so no other object can take its address while
/// compiled code exists (see `meta_jit::warm::JitDriver::with_static_greens`). Greens of
/// scalar type (on the parameter, or on every `let` that binds a green declared in the body)
/// do not matter; a reference green of any other lifetime makes it false.
pub fn greens_static(f: &ItemFn, greens: &[Ident]) -> bool {
    greens.iter().all(|g| {
        // A type passed through a `macro_rules!` fragment comes wrapped in a group.
        let mut ty = param(f, g).map(|(_, ty)| ty);
        while let Some(
            Type::Group(syn::TypeGroup { elem, .. }) | Type::Paren(syn::TypeParen { elem, .. }),
        ) = ty
        {
            ty = Some(&**elem);
        }
        match ty {
            Some(Type::Reference(r)) => {
                r.mutability.is_none() && r.lifetime.as_ref().is_some_and(|l| l.ident == "static")
            }
            Some(ty) => is_scalar(ty),
            // Declared in the body: a scalar if every binding is a `let` with a written
            // scalar type (as for pinning).
            None => Uses::of(f, g).scalar_in_body(),
        }
    })
}

/// The parameter named `g`, with its type.
fn param<'a>(f: &'a ItemFn, g: &Ident) -> Option<(&'a syn::PatIdent, &'a Type)> {
    f.sig.inputs.iter().find_map(|a| match a {
        FnArg::Typed(pt) => match &*pt.pat {
            Pat::Ident(pi) if pi.ident == *g => Some((pi, &*pt.ty)),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    })
}

/// The pinned greens, and whether the portal's greens are pinned as a whole.
pub fn pinned(f: &ItemFn, greens: &[Ident]) -> (Vec<Ident>, bool) {
    let mut pinned = Vec::new();
    let mut all = true;
    for g in greens {
        let param = param(f, g);
        let uses = Uses::of(f, g);
        match param {
            Some((pi, Type::Reference(r)))
                if r.mutability.is_none()
                    && pi.mutability.is_none()
                    && pi.by_ref.is_none()
                    && pi.subpat.is_none()
                    && uses.bindings == 0
                    && !uses.assigned
                    && !uses.in_macro =>
            {
                pinned.push(g.clone());
            }
            Some((_, ty)) if is_scalar(ty) && uses.bindings == 0 && !uses.in_macro => {}
            // Declared in the body: every binding is a `let` with a written scalar type.
            None if uses.scalar_in_body() => {}
            _ => all = false,
        }
    }
    (pinned, all)
}

fn is_scalar(ty: &Type) -> bool {
    const SCALARS: &[&str] = &[
        "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize", "bool", "char",
        "f32", "f64",
    ];
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| SCALARS.contains(&i.to_string().as_str())))
}

/// How a function's body uses one name.
struct Uses<'a> {
    g: &'a Ident,
    /// Patterns that bind it (`let`, `match` arms, `if let`, closure parameters, ...).
    bindings: usize,
    /// Of those, `let g: T` with a scalar `T`.
    scalar_lets: usize,
    /// It is assigned or borrowed `&mut`.
    assigned: bool,
    /// A macro call other than [`HARMLESS_MACROS`] mentions it (and might bind it).
    in_macro: bool,
}

impl Uses<'_> {
    fn of<'a>(f: &ItemFn, g: &'a Ident) -> Uses<'a> {
        let mut u = Uses {
            g,
            bindings: 0,
            scalar_lets: 0,
            assigned: false,
            in_macro: false,
        };
        u.visit_block(&f.block);
        u
    }
    /// A green declared in the body whose every binding is a `let` with a written scalar
    /// type.
    fn scalar_in_body(&self) -> bool {
        self.bindings > 0 && self.scalar_lets == self.bindings && !self.in_macro
    }
    fn is_g(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.g))
    }
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Pat::Type(pt) = &l.pat {
            if matches!(&*pt.pat, Pat::Ident(pi) if pi.ident == *self.g) && is_scalar(&pt.ty) {
                self.scalar_lets += 1;
            }
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.ident == *self.g {
            self.bindings += 1;
        }
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_expr_assign(&mut self, e: &'ast syn::ExprAssign) {
        if self.is_g(&e.left) {
            self.assigned = true;
        }
        syn::visit::visit_expr_assign(self, e);
    }
    fn visit_expr_reference(&mut self, e: &'ast syn::ExprReference) {
        if e.mutability.is_some() && self.is_g(&e.expr) {
            self.assigned = true;
        }
        syn::visit::visit_expr_reference(self, e);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = m.path.segments.last().map(|s| s.ident.to_string());
        if name.is_some_and(|n| HARMLESS_MACROS.contains(&n.as_str())) {
            return;
        }
        fn mentions(ts: proc_macro2::TokenStream, g: &Ident) -> bool {
            ts.into_iter().any(|t| match t {
                proc_macro2::TokenTree::Ident(i) => i == *g,
                proc_macro2::TokenTree::Group(gr) => mentions(gr.stream(), g),
                _ => false,
            })
        }
        if mentions(m.tokens.clone(), self.g) {
            self.in_macro = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn greens() -> Vec<Ident> {
        vec![parse_quote!(pc), parse_quote!(code)]
    }

    fn names(f: &ItemFn) -> (Vec<String>, bool) {
        let (p, all) = pinned(f, &greens());
        (p.iter().map(ToString::to_string).collect(), all)
    }

    #[test]
    fn a_shared_reference_parameter_never_rebound_is_pinned() {
        let f: ItemFn = parse_quote! {
            fn run(code: &Code, regs: &mut Regs) -> i64 {
                let mut pc: usize = 0;
                loop { println!("{}", code.ops.len()); pc += 1; }
            }
        };
        assert_eq!(names(&f), (vec!["code".to_string()], true));
    }

    #[test]
    fn rebinding_assigning_or_an_unknown_macro_unpins() {
        let bodies: Vec<ItemFn> = vec![
            parse_quote!(
                fn run(mut code: &Code) {
                    let mut pc: usize = 0;
                }
            ),
            parse_quote!(
                fn run(code: &mut Code) {
                    let mut pc: usize = 0;
                }
            ),
            parse_quote!(
                fn run(code: &Code) {
                    let mut pc: usize = 0;
                    let code = other();
                }
            ),
            parse_quote!(
                fn run(code: &Code) {
                    let mut pc: usize = 0;
                    if let Some(code) = x {}
                }
            ),
            parse_quote!(
                fn run(code: &Code) {
                    let mut pc: usize = 0;
                    code = other();
                }
            ),
            parse_quote!(
                fn run(code: &Code) {
                    let mut pc: usize = 0;
                    swap(&mut code, y);
                }
            ),
            parse_quote!(
                fn run(code: &Code) {
                    let mut pc: usize = 0;
                    rebind!(code);
                }
            ),
            parse_quote!(
                fn run(code: &Code) {
                    let mut pc: usize = 0;
                    f(|code| 1);
                }
            ),
        ];
        for f in &bodies {
            assert_eq!(names(f), (vec![], false), "{}", quote::quote!(#f));
        }
    }

    #[test]
    fn a_scalar_green_needs_its_type_written() {
        let typed: ItemFn = parse_quote!(
            fn run(code: &Code) {
                let mut pc: u32 = 0;
            }
        );
        assert_eq!(names(&typed), (vec!["code".to_string()], true));
        let param: ItemFn = parse_quote!(
            fn run(code: &Code, pc: usize) {}
        );
        assert_eq!(names(&param), (vec!["code".to_string()], true));
        let untyped: ItemFn = parse_quote!(
            fn run(code: &Code) {
                let mut pc = 0;
            }
        );
        assert_eq!(names(&untyped), (vec!["code".to_string()], false));
        let shadowed: ItemFn = parse_quote!(
            fn run(code: &Code) {
                let mut pc: usize = 0;
                if let Some(pc) = find(code) {}
            }
        );
        assert_eq!(names(&shadowed), (vec!["code".to_string()], false));
    }
}
