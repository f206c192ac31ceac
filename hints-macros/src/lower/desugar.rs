//! Desugarings into the core subset, done on syntax before lowering: `for` over a range,
//! `if let`, `while let`, `&&`, `||`, `matches!`.

use syn::{parse_quote, Expr};

use super::Lowerer;

impl Lowerer {
    /// `a && b` is `if a { b } else { false }`; `a || b` is `if a { true } else { b }`.
    pub fn desugar_logic(&mut self, bin: &syn::ExprBinary) -> Expr {
        let (a, b) = (&bin.left, &bin.right);
        match bin.op {
            syn::BinOp::And(_) => parse_quote!(if #a { #b } else { false }),
            _ => parse_quote!(if #a { true } else { #b }),
        }
    }

    /// `for i in a..b { body }` and `for i in a..=b { body }` over integers.
    pub fn desugar_for(&mut self, f: &syn::ExprForLoop) -> syn::Result<Expr> {
        let syn::Pat::Ident(pi) = &*f.pat else {
            return Err(syn::Error::new_spanned(
                &f.pat,
                "a `for` loop in traced code needs a plain loop variable",
            ));
        };
        let var = &pi.ident;
        let Expr::Range(r) = &*f.expr else {
            return Err(syn::Error::new_spanned(
                &f.expr,
                "`for` loops in traced code iterate over integer ranges (`a..b`, `a..=b`) only; index the collection in a `while` loop",
            ));
        };
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return Err(syn::Error::new_spanned(
                r,
                "a `for` range in traced code needs both bounds",
            ));
        };
        let (i, e, go) = (self.id("i"), self.id("end"), self.id("go"));
        let label = &f.label;
        let body = &f.body;
        Ok(match r.limits {
            syn::RangeLimits::HalfOpen(_) => parse_quote!({
                let mut #i = #start;
                let #e = #end;
                #label while #i < #e {
                    let #var = #i;
                    #i += 1;
                    #body
                }
            }),
            syn::RangeLimits::Closed(_) => parse_quote!({
                let mut #i = #start;
                let #e = #end;
                let mut #go = #i <= #e;
                #label while #go {
                    let #var = #i;
                    #go = #var < #e;
                    if #go { #i += 1; }
                    #body
                }
            }),
        })
    }

    /// `if let P = e { A } else { B }` is `match e { P => A, _ => B }`.
    pub fn desugar_if_let(&mut self, i: &syn::ExprIf) -> syn::Result<Expr> {
        let Expr::Let(lt) = &*i.cond else {
            unreachable!()
        };
        let (pat, e, then) = (&lt.pat, &lt.expr, &i.then_branch);
        let els: Expr = match &i.else_branch {
            Some((_, e)) => (**e).clone(),
            None => parse_quote!({}),
        };
        Ok(parse_quote!(match #e { #pat => #then, _ => #els }))
    }

    /// `'l: while let P = e { body }` is `'l: loop { match e { P => body, _ => break } }`.
    pub fn desugar_while_let(&mut self, w: &syn::ExprWhile) -> syn::Result<Expr> {
        let Expr::Let(lt) = &*w.cond else {
            unreachable!()
        };
        let (pat, e, body, label) = (&lt.pat, &lt.expr, &w.body, &w.label);
        let brk = match label {
            Some(l) => {
                let n = &l.name;
                quote::quote!(break #n)
            }
            None => quote::quote!(break),
        };
        Ok(parse_quote!(#label loop { match #e { #pat => #body, _ => { #brk; } } }))
    }

    /// `matches!(e, P)` / `matches!(e, P if g)` is `match e { P if g => true, _ => false }`.
    pub fn desugar_matches(&mut self, mac: &syn::Macro) -> syn::Result<Expr> {
        struct Args {
            e: Expr,
            pat: syn::Pat,
            guard: Option<Expr>,
        }
        impl syn::parse::Parse for Args {
            fn parse(input: syn::parse::ParseStream) -> syn::Result<Args> {
                let e = input.parse()?;
                input.parse::<syn::Token![,]>()?;
                let pat = syn::Pat::parse_multi_with_leading_vert(input)?;
                let guard = if input.parse::<Option<syn::Token![if]>>()?.is_some() {
                    Some(input.parse()?)
                } else {
                    None
                };
                let _ = input.parse::<Option<syn::Token![,]>>()?;
                Ok(Args { e, pat, guard })
            }
        }
        let Args { e, pat, guard } = mac.parse_body()?;
        let g = guard.map(|g| quote::quote!(if #g));
        Ok(parse_quote!(match #e { #pat #g => true, _ => false }))
    }
}
