//! `match` and patterns.
//!
//! A `match` is a chain of tests, arm by arm, each jumping to the next arm on failure; nested
//! payload fields are only read after the enclosing variant's tag has matched. When every arm's
//! top-level pattern is a literal, a constant, an enum variant or a catch-all, a `Switch` on the
//! discriminant first jumps to the first arm that can match (its own tag test then always
//! succeeds), so dispatch on an opcode costs one op.
//!
//! Bindings follow Rust's binding modes as far as syntax shows them: a scrutinee written as a
//! place expression (`program[pc]`, `self.op`) is matched by value, so payload fields are copied
//! into registers; anything else (a local holding a reference, a call result) is a reference, so
//! bindings are references to the payload fields.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Pat};

use super::expr::{field_call, is_place};
use super::{b, l, Lowered, Lowerer};
use crate::sig::FixSuper;

fn err(span: &dyn quote::ToTokens, msg: &str) -> syn::Error {
    syn::Error::new_spanned(span, msg)
}

/// The lowering function a binding uses: `bind_fixed` (a reference keeps its access path) unless
/// the binding is `mut`.
pub fn bind_fn(pi: &syn::PatIdent) -> syn::Ident {
    let name = if pi.mutability.is_some() {
        "bind"
    } else {
        "bind_fixed"
    };
    syn::Ident::new(name, proc_macro2::Span::call_site())
}

fn is_binding(pi: &syn::PatIdent) -> bool {
    pi.ident
        .to_string()
        .chars()
        .next()
        .is_some_and(|c| c.is_lowercase() || c == '_')
}

fn fixed_path(p: &syn::Path) -> syn::Path {
    let mut p = p.clone();
    syn::visit_mut::VisitMut::visit_path_mut(&mut FixSuper, &mut p);
    p
}

fn last_name(p: &syn::Path) -> String {
    p.segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

fn strip_expr(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_expr(&p.expr),
        Expr::Group(g) => strip_expr(&g.expr),
        other => other,
    }
}

fn strip(p: &Pat) -> &Pat {
    match p {
        Pat::Paren(pp) => strip(&pp.pat),
        other => other,
    }
}

impl Lowerer {
    /// The switch key of a top-level pattern (`None` for a catch-all), as tokens computing an
    /// `i64` from `&s` at build time.
    fn key_of(&self, p: &Pat, s: &Ident) -> syn::Result<Option<Vec<TokenStream>>> {
        let ll = l();
        Ok(match strip(p) {
            Pat::Wild(_) => None,
            Pat::Ident(pi) if is_binding(pi) => None,
            Pat::Ident(pi) => {
                let name = pi.ident.to_string();
                let id = &pi.ident;
                Some(vec![quote!(#ll::PathKey::path_key(&#s, #name, #id))])
            }
            Pat::Lit(lit) => Some(vec![quote!(#ll::literal_key(&#s, #lit))]),
            Pat::Path(pp) => {
                let path = fixed_path(&pp.path);
                let name = last_name(&pp.path);
                Some(vec![quote!(#ll::PathKey::path_key(&#s, #name, #path))])
            }
            Pat::TupleStruct(ts) => {
                let path = fixed_path(&ts.path);
                let name = last_name(&ts.path);
                Some(vec![
                    quote!(#ll::variant_key(&#s, #name, |__jit_v| matches!(__jit_v, #path(..)))),
                ])
            }
            Pat::Struct(st) => {
                let path = fixed_path(&st.path);
                let name = last_name(&st.path);
                Some(vec![
                    quote!(#ll::variant_key(&#s, #name, |__jit_v| matches!(__jit_v, #path { .. }))),
                ])
            }
            Pat::Or(o) => {
                let mut keys = Vec::new();
                for c in &o.cases {
                    match self.key_of(c, s)? {
                        Some(k) => keys.extend(k),
                        None => return Ok(None),
                    }
                }
                Some(keys)
            }
            other => return Err(unsupported(other)),
        })
    }

    /// A scrutinee: tokens preparing it, and whether it is matched by value (a place).
    fn scrutinee(&mut self, e: &Expr) -> syn::Result<Result<(TokenStream, bool), Lowered>> {
        let (bb, ll) = (b(), l());
        let span = e.span();
        let by_value = is_place(e);
        Ok(Ok(if by_value {
            let p = self.place(e)?;
            let pt = p.ts;
            (
                quote_spanned!(span=> { let __jit_p = #pt; #ll::scrutinee_place(#bb, __jit_p) }),
                true,
            )
        } else {
            let v = self.expr(e)?;
            if v.diverges {
                return Ok(Err(v));
            }
            let vt = v.ts;
            (
                quote_spanned!(span=> { let __jit_x = #vt; #ll::scrutinee_value(#bb, __jit_x) }),
                false,
            )
        }))
    }

    pub fn lower_match(&mut self, m: &syn::ExprMatch) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        // `match (a, b) { (X, Y) => .. }`: each element is a scrutinee of its own, and an arm's
        // tuple pattern tests them in turn (no tuple is built).
        let mut elems = Vec::new();
        if let Expr::Tuple(t) = strip_expr(&m.expr) {
            if t.elems.is_empty() {
                return Err(err(t, "`match ()` is not supported in traced code"));
            }
            for e in &t.elems {
                let (ts, by_value) = match self.scrutinee(e)? {
                    Ok(x) => x,
                    Err(d) => return Ok(d),
                };
                elems.push((self.id("t"), ts, by_value));
            }
        }
        // `match t { (X, y) => .. }` on a tuple that is not written as one (a variable, a call,
        // a place of tuple type): its elements are the scrutinees.
        let mut pre = TokenStream::new();
        let arity = m.arms.iter().find_map(|a| match strip(&a.pat) {
            Pat::Tuple(t) if !t.elems.iter().any(|e| matches!(strip(e), Pat::Rest(_))) => {
                Some(t.elems.len())
            }
            _ => None,
        });
        if let (true, Some(n)) = (elems.is_empty(), arity) {
            let whole = self.id("tuple");
            let by_value = is_place(&m.expr);
            let span = m.expr.span();
            if by_value {
                let p = self.place(&m.expr)?;
                let pt = p.ts;
                pre = quote_spanned!(span=> let #whole = #pt;);
            } else {
                let v = self.expr(&m.expr)?;
                if v.diverges {
                    return Ok(v);
                }
                let vt = v.ts;
                pre = quote_spanned!(span=> let #whole = #vt;);
            }
            for i in 0..n {
                let member = syn::Member::Unnamed(syn::Index::from(i));
                let elem = field_call(quote!(#whole), &member, span);
                let ts = if by_value {
                    quote_spanned!(span=> { let __jit_p = #elem; #ll::scrutinee_place(#bb, __jit_p) })
                } else {
                    quote_spanned!(span=> { let __jit_p = #elem; let __jit_x = #ll::read(#bb, __jit_p); #ll::scrutinee_value(#bb, __jit_x) })
                };
                elems.push((self.id("t"), ts, by_value));
            }
        }
        let (scrut, by_value) = if elems.is_empty() {
            match self.scrutinee(&m.expr)? {
                Ok(x) => x,
                Err(d) => return Ok(d),
            }
        } else {
            (quote!(()), false)
        };
        let elem_lets: Vec<TokenStream> = elems
            .iter()
            .map(|(id, ts, _)| quote!(let #id = #ts;))
            .collect();
        let s = self.id("s");
        let end = self.id("end");
        let res = self.id("res");
        // Every arm is tested in order (a chain that falls through to the next arm on a failed
        // test). When every arm's top-level pattern has switch keys (or is a catch-all), a
        // `Switch` on the discriminant first jumps straight to the first arm that can match.
        let keys: syn::Result<Vec<Option<Vec<TokenStream>>>> = m
            .arms
            .iter()
            .map(|a| {
                if matches!(strip(&a.pat), Pat::Range(_)) || !elems.is_empty() {
                    Err(err(&a.pat, "range or tuple"))
                } else {
                    self.key_of(&a.pat, &s)
                }
            })
            .collect();
        let starts: Vec<Ident> = m.arms.iter().map(|_| self.id("arm")).collect();
        let mut body = TokenStream::new();
        let nomatch = self.id("nomatch");
        if let Ok(keys) = keys {
            let d = self.id("d");
            let mut cases = TokenStream::new();
            let mut default = nomatch.clone();
            for (k, start) in keys.iter().zip(&starts) {
                match k {
                    None => {
                        default = start.clone();
                        break;
                    }
                    Some(ks) => {
                        for k in ks {
                            cases.extend(quote!(#ll::add_case(&mut __jit_cases, #k, #start);));
                        }
                    }
                }
            }
            body.extend(quote! {
                let #d = #ll::Scrutinee::discriminant(#s, #bb);
                let mut __jit_cases = Vec::new();
                #cases
                #bb.switch(#d.reg, __jit_cases, #default);
            });
        }
        let mut any_completes = false;
        for (arm, start) in m.arms.iter().zip(&starts) {
            let next = self.id("next");
            self.push_scope();
            let mut tests = TokenStream::new();
            let mut binds = TokenStream::new();
            let r = (|| {
                if elems.is_empty() {
                    self.pat_test(&arm.pat, &s, by_value, &next, &mut tests, &mut binds)?;
                } else {
                    let scruts: Vec<(Ident, bool)> =
                        elems.iter().map(|(id, _, v)| (id.clone(), *v)).collect();
                    self.tuple_test(&arm.pat, &scruts, &next, &mut tests, &mut binds)?;
                }
                if let Some((_, g)) = &arm.guard {
                    let gl = self.expr(g)?;
                    let gt = gl.ts;
                    binds.extend(
                        quote!(let __jit_g = #gt; #ll::branch_if_not(#bb, __jit_g, #next);),
                    );
                }
                self.expr(&arm.body)
            })();
            self.pop_scope();
            let r = r?;
            let rt = r.ts;
            let tail = if r.diverges {
                quote!(#rt;)
            } else {
                any_completes = true;
                quote!(let __jit_v = #rt; #ll::join(#bb, &mut #res, __jit_v); #bb.goto(#end);)
            };
            body.extend(quote!({
                let #next = #bb.new_label();
                #bb.bind(#start);
                { #tests #binds #tail }
                #bb.bind(#next);
            }));
        }
        let start_decls = starts.iter().map(|l| quote!(let #l = #bb.new_label();));
        let body = quote! {
            let #nomatch = #bb.new_label();
            #(#start_decls)*
            #body
            #bb.bind(#nomatch);
            #ll::panic(#bb, "no arm of this `match` matched");
        };
        let decl = if any_completes {
            quote!(let mut #res = None;)
        } else {
            quote!()
        };
        let value = if any_completes {
            quote!(#res.expect("an arm of this `match` completes"))
        } else {
            quote!(())
        };
        Ok(Lowered {
            ts: quote!({
                #pre
                #(#elem_lets)*
                let #s = #scrut;
                let #end = #bb.new_label();
                #decl
                #body
                #bb.bind(#end);
                #value
            }),
            diverges: !any_completes,
        })
    }

    /// Emits into `tests` the checks of `p` against scrutinee `s` (jumping to `fail`), and into
    /// `binds` its bindings.
    fn pat_test(
        &mut self,
        p: &Pat,
        s: &Ident,
        by_value: bool,
        fail: &Ident,
        tests: &mut TokenStream,
        binds: &mut TokenStream,
    ) -> syn::Result<()> {
        let (bb, ll) = (b(), l());
        let key_test = |key: TokenStream, tests: &mut TokenStream| {
            tests.extend(quote!({
                let __jit_d = #ll::Scrutinee::discriminant(#s, #bb);
                let __jit_k = #ll::konst(#bb, #key);
                let __jit_c = #ll::eq(#bb, __jit_d, __jit_k);
                #ll::branch_if_not(#bb, __jit_c, #fail);
            }));
        };
        match strip(p) {
            Pat::Wild(_) | Pat::Rest(_) => Ok(()),
            Pat::Ident(pi) if is_binding(pi) => {
                if let Some((_, sub)) = &pi.subpat {
                    return Err(err(
                        sub,
                        "`name @ pattern` bindings are not supported in traced code",
                    ));
                }
                let id = &pi.ident;
                let name = id.to_string();
                self.declare(id);
                let v = if by_value {
                    quote!(#ll::copy_scrutinee(#bb, #s))
                } else {
                    quote!(#s)
                };
                let bind = bind_fn(pi);
                binds.extend(
                    quote!(let #id = { let __jit_t = #v; #ll::#bind(#bb, #name, __jit_t) };),
                );
                Ok(())
            }
            Pat::Ident(_) | Pat::Lit(_) | Pat::Path(_) => {
                let key = self.key_of(p, s)?.expect("a key").remove(0);
                key_test(key, tests);
                Ok(())
            }
            Pat::Range(r) => {
                let bound = |e: &Option<Box<Expr>>| e.as_ref().map(|e| quote!(#ll::konst(#bb, #e)));
                let (lo, hi) = (bound(&r.start), bound(&r.end));
                if let Some(lo) = lo {
                    tests.extend(quote!({ let __jit_k = #lo; let __jit_c = #ll::ge(#bb, #s, __jit_k); #ll::branch_if_not(#bb, __jit_c, #fail); }));
                }
                if let Some(hi) = hi {
                    let cmp = match r.limits {
                        syn::RangeLimits::HalfOpen(_) => quote!(lt),
                        syn::RangeLimits::Closed(_) => quote!(le),
                    };
                    tests.extend(quote!({ let __jit_k = #hi; let __jit_c = #ll::#cmp(#bb, #s, __jit_k); #ll::branch_if_not(#bb, __jit_c, #fail); }));
                }
                Ok(())
            }
            Pat::TupleStruct(ts) => {
                let key = self.key_of(p, s)?.expect("a key").remove(0);
                key_test(key, tests);
                let path = fixed_path(&ts.path);
                let vname = last_name(&ts.path);
                let mut idx = 0usize;
                for (pos, elem) in ts.elems.iter().enumerate() {
                    if let Pat::Rest(_) = strip(elem) {
                        // Fields after `..` count from the end; not supported (rare).
                        if pos + 1 != ts.elems.len() {
                            return Err(err(elem, "`..` in the middle of a tuple-variant pattern is not supported in traced code"));
                        }
                        continue;
                    }
                    let blanks = (0..idx).map(|_| quote!(_));
                    let extract = quote!(|__jit_v| {
                        #[allow(unreachable_patterns)]
                        match __jit_v { #path(#(#blanks,)* __jit_x, ..) => __jit_x, _ => loop {} }
                    });
                    let field = idx.to_string();
                    self.sub_pattern(
                        elem, s, &vname, &field, extract, by_value, fail, tests, binds,
                    )?;
                    idx += 1;
                }
                Ok(())
            }
            Pat::Struct(st) => {
                let key = self.key_of(p, s)?.expect("a key").remove(0);
                key_test(key, tests);
                let path = fixed_path(&st.path);
                let vname = last_name(&st.path);
                for fp in &st.fields {
                    let member = &fp.member;
                    let field = match member {
                        syn::Member::Named(i) => i.to_string(),
                        syn::Member::Unnamed(i) => i.index.to_string(),
                    };
                    let extract = quote!(|__jit_v| {
                        #[allow(unreachable_patterns)]
                        match __jit_v { #path { #member: __jit_x, .. } => __jit_x, _ => loop {} }
                    });
                    self.sub_pattern(
                        &fp.pat, s, &vname, &field, extract, by_value, fail, tests, binds,
                    )?;
                }
                Ok(())
            }
            Pat::Or(o) => self.or_test(o, fail, tests, |me, case, next, t, bs| {
                me.pat_test(case, s, by_value, next, t, bs)
            }),
            other => Err(unsupported(other)),
        }
    }

    /// The checks of `a | b | ..`: each alternative's checks (`case` lowers one, jumping to the
    /// label it is given when it does not match) are tried in turn; none may bind.
    fn or_test(
        &mut self,
        o: &syn::PatOr,
        fail: &Ident,
        tests: &mut TokenStream,
        mut case: impl FnMut(
            &mut Self,
            &Pat,
            &Ident,
            &mut TokenStream,
            &mut TokenStream,
        ) -> syn::Result<()>,
    ) -> syn::Result<()> {
        let bb = b();
        let ok = self.id("ok");
        let mut inner = TokenStream::new();
        for alt in &o.cases {
            let next = self.id("alt");
            let mut t = TokenStream::new();
            let mut bs = TokenStream::new();
            case(self, alt, &next, &mut t, &mut bs)?;
            if !bs.is_empty() {
                return Err(err(alt, "bindings inside `|` patterns are not supported in traced code; use one arm per alternative"));
            }
            inner.extend(
                quote!({ let #next = #bb.new_label(); #t #bb.goto(#ok); #bb.bind(#next); }),
            );
        }
        tests.extend(quote!({ let #ok = #bb.new_label(); #inner #bb.goto(#fail); #bb.bind(#ok); }));
        Ok(())
    }

    /// The checks and bindings of an arm's pattern `p` against a tuple of scrutinees.
    fn tuple_test(
        &mut self,
        p: &Pat,
        scruts: &[(Ident, bool)],
        fail: &Ident,
        tests: &mut TokenStream,
        binds: &mut TokenStream,
    ) -> syn::Result<()> {
        match strip(p) {
            Pat::Wild(_) => Ok(()),
            Pat::Tuple(t) => {
                let n = t.elems.len();
                let rest = t.elems.iter().position(|e| matches!(strip(e), Pat::Rest(_)));
                if let Some(r) = rest {
                    if r + 1 != n {
                        return Err(err(&t.elems[r], "`..` in the middle of a tuple pattern is not supported in traced code"));
                    }
                } else if n != scruts.len() {
                    return Err(err(t, &format!("this pattern has {n} elements but the scrutinee tuple has {}", scruts.len())));
                }
                for (e, (s, by_value)) in t.elems.iter().zip(scruts) {
                    if matches!(strip(e), Pat::Rest(_)) {
                        break;
                    }
                    self.pat_test(e, s, *by_value, fail, tests, binds)?;
                }
                Ok(())
            }
            Pat::Or(o) => self.or_test(o, fail, tests, |me, case, next, t, bs| {
                me.tuple_test(case, scruts, next, t, bs)
            }),
            Pat::Ident(pi) if is_binding(pi) => Err(err(
                pi,
                "binding a whole tuple is not supported in traced code; bind its elements (`(a, b) => ..`)",
            )),
            other => Err(err(other, "a `match` on a tuple takes tuple patterns (`(X, Y)`) or `_` in traced code")),
        }
    }

    /// A payload field's sub-pattern: a binding, a wildcard, or a nested pattern on the field.
    #[allow(clippy::too_many_arguments)]
    fn sub_pattern(
        &mut self,
        p: &Pat,
        s: &Ident,
        variant: &str,
        field: &str,
        extract: TokenStream,
        by_value: bool,
        fail: &Ident,
        tests: &mut TokenStream,
        binds: &mut TokenStream,
    ) -> syn::Result<()> {
        let (bb, ll) = (b(), l());
        if let Pat::Wild(_) = strip(p) {
            return Ok(());
        }
        let fp = self.id("f");
        let place = quote!(let #fp = #ll::payload(#bb, #s, #variant, #field, #extract););
        match strip(p) {
            Pat::Ident(pi) if is_binding(pi) && pi.subpat.is_none() => {
                let id = &pi.ident;
                let name = id.to_string();
                self.declare(id);
                let v = if by_value {
                    quote!(#ll::bind_by_value(#bb, #fp))
                } else {
                    quote!(#ll::value::bind_field(#bb, #fp))
                };
                let bind = bind_fn(pi);
                binds.extend(
                    quote!(#place let #id = { let __jit_t = #v; #ll::#bind(#bb, #name, __jit_t) };),
                );
                Ok(())
            }
            other => {
                let sub = self.id("s");
                tests.extend(quote!(#place let #sub = #ll::sub_scrutinee(#bb, #fp);));
                self.pat_test(other, &sub, by_value, fail, tests, binds)
            }
        }
    }
}

fn unsupported(p: &Pat) -> syn::Error {
    let what = match p {
        Pat::Reference(_) => {
            "reference patterns (`&x`) are not supported in traced code; match on the place itself"
        }
        Pat::Tuple(_) => "this tuple pattern is not supported here in traced code; name every element of the tuple (`_` for those you skip)",
        Pat::Slice(_) => "slice patterns are not supported in traced code; index the slice",
        _ => "this pattern is not supported in traced code",
    };
    err(p, what)
}
