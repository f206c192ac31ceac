//! Expressions: value context (`expr`), place context (`place`), calls, hints.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Lit, UnOp};

use super::{b, l, LoopCtx, Lowered, Lowerer};
use crate::sig::FixSuper;

/// The `&'static HintSite` of a hint written at `span` (`file!()`, `line!()` and `column!()`
/// expand at the user's hint, and the struct of literals is promoted to a static).
fn hint_site(span: Span, call: &str, args: &[String]) -> TokenStream {
    let krate = crate::krate::path();
    quote_spanned!(span=> &#krate::jitcode::HintSite {
        file: ::core::file!(),
        line: ::core::line!(),
        column: ::core::column!(),
        call: #call,
        args: &[#(#args),*],
    })
}

/// The primitive scalar types, whose associated functions (`f64::from_bits`) traced code may
/// call when they are built-ins.
const PRIMITIVES: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64", "bool", "char",
];

/// The built-in associated functions of primitive types (see `meta_jit::lower::builtin::prims`).
const PRIMITIVE_CALLS: &[(&str, &str)] = &[("f64", "from_bits")];

/// `f64::from_bits` and its kin: the path of the built-in's companion, or an error for an
/// associated function of a primitive type that is not a built-in; `None` for other paths.
fn primitive_call(p: &syn::Path) -> syn::Result<Option<syn::Path>> {
    let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
    let [ty, f] = segs.as_slice() else {
        return Ok(None);
    };
    if p.leading_colon.is_some() || !PRIMITIVES.contains(&ty.as_str()) {
        return Ok(None);
    }
    if !PRIMITIVE_CALLS.contains(&(ty.as_str(), f.as_str())) {
        return Err(err(
            p,
            &format!("`{ty}::{f}` is not a built-in of traced code; call the method form (`x.{f}(..)`) if it is one, or wrap the call in a small `#[elidable]` (pure) or `#[dont_look_inside]` function and call that"),
        ));
    }
    let (t, f) = (&p.segments[0].ident, &p.segments[1].ident);
    let krate = crate::krate::path();
    Ok(Some(
        syn::parse_quote!(#krate::lower::builtin::prims::#t::#f),
    ))
}

/// Whether a called path is `Gc::new` (the allocation of an object of the JIT's heap, as
/// `Gc::new`, `jit::Gc::new` or `meta_jit::gc::Gc::new`).
fn is_gc_new(p: &syn::Path) -> bool {
    let n = p.segments.len();
    n >= 2 && p.segments[n - 1].ident == "new" && p.segments[n - 2].ident == "Gc"
}

/// Whether a called path is `Gc::ptr_eq` (object identity, as `Gc::ptr_eq` or
/// `meta_jit::gc::Gc::ptr_eq`).
fn is_gc_ptr_eq(p: &syn::Path) -> bool {
    let n = p.segments.len();
    n >= 2 && p.segments[n - 1].ident == "ptr_eq" && p.segments[n - 2].ident == "Gc"
}

/// `Cell::new` (or `std::cell::Cell::new`): a cell holding its argument, in traced code the
/// argument's registers.
fn is_cell_new(p: &syn::Path) -> bool {
    let n = p.segments.len();
    n >= 2 && p.segments[n - 1].ident == "new" && p.segments[n - 2].ident == "Cell"
}

/// Whether a called path names a tuple struct or tuple variant (`Value::Int`, `Point`): by
/// Rust's naming convention, its last segment starts with an uppercase letter (functions are
/// snake case).
fn is_ctor_path(p: &syn::Path) -> bool {
    p.segments
        .last()
        .and_then(|s| s.ident.to_string().chars().next())
        .is_some_and(|c| c.is_uppercase())
}

/// `ts` with every token's span set to `span` (so that an error about the call it names points
/// at the user's code).
fn respan(ts: TokenStream, span: Span) -> TokenStream {
    ts.into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}

fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        Expr::Group(g) => strip_parens(&g.expr),
        _ => e,
    }
}

fn err(span: &dyn ToTokens, msg: &str) -> syn::Error {
    syn::Error::new_spanned(span, msg)
}

/// The call of `lower::field` for member `member` (a field, or an element of a tuple) of the
/// place or value `base`: the macro-written projection computes the member's address from a
/// pointer to the struct, and the struct type is inferred from `base`'s handle.
pub fn field_call(base: TokenStream, member: &syn::Member, span: Span) -> TokenStream {
    let (bb, ll) = (b(), l());
    // At the user's span, where an error about the base's type points.
    let base = respan(base, span);
    let (name, access) = match member {
        syn::Member::Named(i) => (i.to_string(), quote!(#i)),
        syn::Member::Unnamed(idx) => (idx.index.to_string(), quote!(#idx)),
    };
    quote_spanned!(span=> #ll::field(#bb, #base, #name, |__jit_p| {
        // SAFETY: only the address of the field is computed (no reference to the
        // uninitialized value is created); see `meta_jit::lower::field`.
        unsafe { ::core::ptr::addr_of!((*__jit_p).#access) }
    }))
}

/// Whether `e` is a place expression whose address traced code computes (field, index, deref).
pub fn is_place(e: &Expr) -> bool {
    match e {
        Expr::Field(_) | Expr::Index(_) => true,
        Expr::Unary(u) => matches!(u.op, UnOp::Deref(_)),
        Expr::Paren(p) => is_place(&p.expr),
        _ => false,
    }
}

impl Lowerer {
    /// Lowers `e` in a value context.
    pub fn expr(&mut self, e: &Expr) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        let span = e.span();
        match e {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Int(_) | Lit::Float(_) | Lit::Bool(_) | Lit::Char(_) | Lit::Byte(_) => {
                    Ok(Lowered::value(quote_spanned!(span=> #ll::konst(#bb, #lit))))
                }
                _ => Err(err(lit, "string and byte-string literals are not supported in traced code; pass the data in through a reference or a `#[dont_look_inside]` function")),
            },
            Expr::Path(p) => self.path_value(p),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Block(bl) => {
                if let Some(label) = &bl.label {
                    return Err(err(label, "labeled blocks are not supported in traced code; use a labeled `loop`"));
                }
                if bl.block.stmts.is_empty() {
                    return Ok(Lowered::value(quote!(())));
                }
                self.block(&bl.block)
            }
            Expr::Unsafe(u) => Err(err(u, "`unsafe` blocks are not supported in traced code; move them into a `#[dont_look_inside]` function")),
            Expr::Binary(bin) => self.binary(bin),
            Expr::Unary(u) => match u.op {
                UnOp::Deref(_) => self.read_place(e),
                UnOp::Neg(_) => {
                    // A negative literal is a literal (so `-128i8` stays in range).
                    if let Expr::Lit(lit) = &*u.expr {
                        if matches!(lit.lit, Lit::Int(_) | Lit::Float(_)) {
                            return Ok(Lowered::value(quote_spanned!(span=> #ll::konst(#bb, #e))));
                        }
                    }
                    let x = self.expr(&u.expr)?;
                    self.unary(x, span, quote!(neg), true)
                }
                UnOp::Not(_) => {
                    let x = self.expr(&u.expr)?;
                    self.unary(x, span, quote!(not), false)
                }
                _ => Err(err(u, "this unary operator is not supported in traced code")),
            },
            Expr::Field(_) | Expr::Index(_) => self.read_place(e),
            Expr::Reference(r) => {
                if r.mutability.is_none() && !is_place(&r.expr) && !matches!(&*r.expr, Expr::Path(_)) {
                    return Err(err(r, "references to temporaries are not supported in traced code; take a reference to a field, an array element or through another reference"));
                }
                let p = self.place(&r.expr)?;
                let ts = p.ts;
                Ok(Lowered::value(quote_spanned!(span=> { let __jit_p = #ts; #ll::addr_of(#bb, __jit_p) })))
            }
            Expr::Assign(a) => self.assign(&a.left, None, &a.right, span),
            Expr::Cast(c) => {
                let x = self.expr(&c.expr)?;
                if x.diverges {
                    return Ok(x);
                }
                let (ts, ty) = (x.ts, &c.ty);
                Ok(Lowered::value(quote_spanned!(span=> { let __jit_x = #ts; #ll::cast::<_, #ty>(#bb, __jit_x) })))
            }
            Expr::If(i) => self.lower_if(i),
            Expr::Match(m) => self.lower_match(m),
            Expr::Loop(lp) => self.lower_loop(lp),
            Expr::While(w) => self.lower_while(w),
            Expr::ForLoop(f) => {
                let d = self.desugar_for(f)?;
                self.expr(&d)
            }
            Expr::Break(br) => {
                let i = self.find_loop(br.label.as_ref(), br)?;
                let exit = self.loops[i].exit.clone();
                self.loops[i].broke = true;
                match &br.expr {
                    None => Ok(Lowered::diverging(quote!(#bb.goto(#exit);))),
                    Some(v) => {
                        let v = self.expr(v)?;
                        if v.diverges {
                            return Ok(v);
                        }
                        self.loops[i].broke_value = true;
                        let res = self.loops[i].res.clone();
                        let ts = v.ts;
                        Ok(Lowered::diverging(quote!({ let __jit_v = #ts; #ll::join(#bb, &mut #res, __jit_v); #bb.goto(#exit); })))
                    }
                }
            }
            Expr::Continue(c) => {
                let i = self.find_loop(c.label.as_ref(), c)?;
                let head = self.loops[i].head.clone();
                Ok(Lowered::diverging(quote!(#bb.goto(#head);)))
            }
            Expr::Return(r) => {
                let v = match &r.expr {
                    Some(v) => self.expr(v)?,
                    None => Lowered::value(quote!(())),
                };
                if v.diverges {
                    return Ok(v);
                }
                let ts = v.ts;
                Ok(Lowered::diverging(quote_spanned!(span=> { let __jit_v = #ts; #ll::ret::<__JitRet>(#bb, __jit_v); })))
            }
            Expr::Call(c) => self.call(c),
            Expr::MethodCall(m) => self.method_call(m),
            Expr::Macro(m) => self.macro_expr(&m.mac),
            Expr::Tuple(t) if t.elems.is_empty() => Ok(Lowered::value(quote!(()))),
            Expr::Let(lt) => Err(err(lt, "`let` is only supported as the condition of `if let` / `while let`")),
            Expr::Try(t) => {
                let x = self.expr(&t.expr)?;
                if x.diverges {
                    return Ok(x);
                }
                let xt = x.ts;
                Ok(Lowered::value(quote_spanned!(span=> {
                    let __jit_t = #xt;
                    let __jit_fail = #bb.new_label();
                    let __jit_done = #bb.new_label();
                    let __jit_c = #ll::try_continue(#bb, __jit_t);
                    #ll::branch_if_not(#bb, __jit_c, __jit_fail);
                    #bb.goto(__jit_done);
                    #bb.bind(__jit_fail);
                    let __jit_r: __JitRet = #ll::try_residual(#bb, __jit_t);
                    #ll::ret::<__JitRet>(#bb, __jit_r);
                    #bb.bind(__jit_done);
                    #ll::try_output(__jit_t)
                })))
            }
            Expr::Closure(c) => Err(err(c, "closures are not supported in traced code; write an annotated function instead")),
            Expr::Struct(s) => {
                if let Some(rest) = &s.rest {
                    return Err(err(rest, "`..base` in a struct literal is not supported in traced code; list every field"));
                }
                if s.qself.is_some() {
                    return Err(err(s, "qualified paths (`<T as Trait>::X`) are not supported in traced code"));
                }
                let fields = s
                    .fields
                    .iter()
                    .map(|f| match &f.member {
                        syn::Member::Named(i) => (i.to_string(), quote!(#i), f.expr.clone()),
                        syn::Member::Unnamed(i) => (i.index.to_string(), quote!(#i), f.expr.clone()),
                    })
                    .collect();
                self.ctor(&s.path, fields, false, span)
            }
            Expr::Array(a) => Err(err(a, "array literals are not supported in traced code; keep the array in a struct field or a `static`")),
            Expr::Repeat(a) => Err(err(a, "array literals are not supported in traced code; keep the array in a struct field or a `static`")),
            Expr::Tuple(t) => {
                // The handle of a tuple is the tuple of its elements' handles (see
                // `meta_jit::lower::tuple`), evaluated left to right.
                let (stmts, names) = match self.args(t.elems.iter().cloned())? {
                    Ok(x) => x,
                    Err(d) => return Ok(d),
                };
                Ok(Lowered::value(quote_spanned!(span=> { #stmts (#(#names,)*) })))
            }
            Expr::Range(r) => Err(err(r, "ranges are only supported as the iterator of a `for` loop in traced code")),
            Expr::Async(a) => Err(err(a, "async blocks are not supported in traced code")),
            Expr::Await(a) => Err(err(a, "`.await` is not supported in traced code")),
            other => Err(err(other, "this expression is not supported in traced code")),
        }
    }

    fn unary(
        &mut self,
        x: Lowered,
        span: Span,
        f: TokenStream,
        checked: bool,
    ) -> syn::Result<Lowered> {
        if x.diverges {
            return Ok(x);
        }
        let (bb, ll, ts) = (b(), l(), x.ts);
        let extra = if checked {
            quote!(, cfg!(debug_assertions))
        } else {
            quote!()
        };
        Ok(Lowered::value(
            quote_spanned!(span=> { let __jit_x = #ts; #ll::#f(#bb, __jit_x #extra) }),
        ))
    }

    fn path_value(&mut self, p: &syn::ExprPath) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        if p.qself.is_none() && p.path.segments.len() == 1 && p.path.leading_colon.is_none() {
            let id = &p.path.segments[0].ident;
            if id == "self" {
                return Ok(Lowered::value(quote!(__jit_self)));
            }
            if self.is_local(&id.to_string()) {
                return Ok(Lowered::value(quote!(#id)));
            }
        }
        if p.qself.is_none() && p.path.is_ident("None") {
            // Its handle comes from where it goes (an `Option` of a scalar or of a `Gc`).
            let span = p.span();
            return Ok(Lowered::value(quote_spanned!(span=> #ll::none(#bb))));
        }
        let mut p = p.clone();
        syn::visit_mut::VisitMut::visit_expr_path_mut(&mut FixSuper, &mut p);
        let span = p.span();
        Ok(Lowered::value(
            quote_spanned!(span=> #ll::constant(#bb, #p)),
        ))
    }

    fn binary(&mut self, bin: &syn::ExprBinary) -> syn::Result<Lowered> {
        let span = bin.span();
        let (f, checked) = match bin.op {
            BinOp::And(_) | BinOp::Or(_) => {
                let d = self.desugar_logic(bin);
                return self.expr(&d);
            }
            BinOp::AddAssign(_) => {
                return self.assign(&bin.left, Some((quote!(add), true)), &bin.right, span)
            }
            BinOp::SubAssign(_) => {
                return self.assign(&bin.left, Some((quote!(sub), true)), &bin.right, span)
            }
            BinOp::MulAssign(_) => {
                return self.assign(&bin.left, Some((quote!(mul), true)), &bin.right, span)
            }
            BinOp::DivAssign(_) => {
                return self.assign(&bin.left, Some((quote!(div), true)), &bin.right, span)
            }
            BinOp::RemAssign(_) => {
                return self.assign(&bin.left, Some((quote!(rem), true)), &bin.right, span)
            }
            BinOp::BitAndAssign(_) => {
                return self.assign(&bin.left, Some((quote!(bitand), false)), &bin.right, span)
            }
            BinOp::BitOrAssign(_) => {
                return self.assign(&bin.left, Some((quote!(bitor), false)), &bin.right, span)
            }
            BinOp::BitXorAssign(_) => {
                return self.assign(&bin.left, Some((quote!(bitxor), false)), &bin.right, span)
            }
            BinOp::ShlAssign(_) => {
                return self.assign(&bin.left, Some((quote!(shl), true)), &bin.right, span)
            }
            BinOp::ShrAssign(_) => {
                return self.assign(&bin.left, Some((quote!(shr), true)), &bin.right, span)
            }
            BinOp::Add(_) => (quote!(add), true),
            BinOp::Sub(_) => (quote!(sub), true),
            BinOp::Mul(_) => (quote!(mul), true),
            BinOp::Div(_) => (quote!(div), true),
            BinOp::Rem(_) => (quote!(rem), true),
            BinOp::BitAnd(_) => (quote!(bitand), false),
            BinOp::BitOr(_) => (quote!(bitor), false),
            BinOp::BitXor(_) => (quote!(bitxor), false),
            BinOp::Shl(_) => (quote!(shl), true),
            BinOp::Shr(_) => (quote!(shr), true),
            BinOp::Eq(_) => (quote!(eq), false),
            BinOp::Ne(_) => (quote!(ne), false),
            BinOp::Lt(_) => (quote!(lt), false),
            BinOp::Le(_) => (quote!(le), false),
            BinOp::Gt(_) => (quote!(gt), false),
            BinOp::Ge(_) => (quote!(ge), false),
            _ => return Err(err(bin, "this operator is not supported in traced code")),
        };
        let lhs = self.expr(&bin.left)?;
        if lhs.diverges {
            return Ok(lhs);
        }
        let rhs = self.expr(&bin.right)?;
        if rhs.diverges {
            return Ok(rhs);
        }
        let (bb, ll, lt, rt) = (b(), l(), lhs.ts, rhs.ts);
        let extra = if checked {
            quote!(, cfg!(debug_assertions))
        } else {
            quote!()
        };
        Ok(Lowered::value(quote_spanned!(span=> {
            let __jit_l = #lt;
            let __jit_r = #rt;
            #ll::#f(#bb, __jit_l, __jit_r #extra)
        })))
    }

    /// `left = right` or `left op= right`.
    fn assign(
        &mut self,
        left: &Expr,
        op: Option<(TokenStream, bool)>,
        right: &Expr,
        span: Span,
    ) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        let rhs = self.expr(right)?;
        if rhs.diverges {
            return Ok(rhs);
        }
        let rt = rhs.ts;
        let combine = |cur: TokenStream| match &op {
            None => quote!(__jit_r),
            Some((f, checked)) => {
                let extra = if *checked {
                    quote!(, cfg!(debug_assertions))
                } else {
                    quote!()
                };
                quote_spanned!(span=> { let __jit_c = #cur; #ll::#f(#bb, __jit_c, __jit_r #extra) })
            }
        };
        match left {
            Expr::Path(p) if p.path.get_ident().is_some_and(|i| self.is_local(&i.to_string())) => {
                let id = p.path.get_ident().unwrap();
                let v = combine(quote!(#id));
                Ok(Lowered::value(quote_spanned!(span=> { let __jit_r = #rt; let __jit_v = #v; #ll::assign(#bb, #id, __jit_v); })))
            }
            Expr::Paren(p) => self.assign(&p.expr, op, right, span),
            e if is_place(e) => {
                let p = self.place(e)?;
                let pt = p.ts;
                let v = combine(quote!(#ll::read(#bb, __jit_p)));
                // Spanned at the assignment, so that a type traced code does not store is an
                // error there.
                let write = respan(quote!(#ll::write), span);
                Ok(Lowered::value(quote_spanned!(span=> {
                    let __jit_r = #rt;
                    let __jit_p = #pt;
                    let __jit_v = #v;
                    #write(#bb, __jit_p, __jit_v);
                })))
            }
            Expr::Path(p) => Err(err(p, "assignment to something that is not a local variable of this function (a `static`?) is not supported in traced code")),
            other => Err(err(other, "unsupported assignment target in traced code")),
        }
    }

    /// Lowers a place expression to a `Ptr`/`SliceRef` (no load).
    pub fn place(&mut self, e: &Expr) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        let span = e.span();
        match e {
            Expr::Paren(p) => self.place(&p.expr),
            Expr::Field(f) => {
                let base = self.place(&f.base)?;
                let bt = base.ts;
                let field = field_call(quote!(__jit_base), &f.member, span);
                Ok(Lowered::value(quote_spanned!(span=> {
                    let __jit_base = #bt;
                    #field
                })))
            }
            Expr::Index(ix) => {
                let base = self.place(&ix.expr)?;
                let i = self.expr(&ix.index)?;
                if i.diverges {
                    return Ok(i);
                }
                let (bt, it) = (base.ts, i.ts);
                Ok(Lowered::value(quote_spanned!(span=> {
                    let __jit_base = #bt;
                    let __jit_i = #it;
                    #ll::index(#bb, __jit_base, __jit_i)
                })))
            }
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => {
                let v = self.expr(&u.expr)?;
                let vt = v.ts;
                Ok(Lowered::value(
                    quote_spanned!(span=> { let __jit_r = #vt; #ll::deref(#bb, __jit_r) }),
                ))
            }
            other => self.expr(other),
        }
    }

    /// A place expression in a value context: its value is loaded.
    fn read_place(&mut self, e: &Expr) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        let span = e.span();
        let p = self.place(e)?;
        let pt = p.ts;
        Ok(Lowered::value(
            quote_spanned!(span=> { let __jit_p = #pt; #ll::read(#bb, __jit_p) }),
        ))
    }

    /// Lowers call arguments left to right into `let` temporaries; returns (statements, names).
    fn args(
        &mut self,
        args: impl Iterator<Item = Expr>,
    ) -> syn::Result<Result<(TokenStream, Vec<proc_macro2::Ident>), Lowered>> {
        let mut stmts = TokenStream::new();
        let mut names = Vec::new();
        for a in args {
            let la = self.expr(&a)?;
            if la.diverges {
                let ts = la.ts;
                return Ok(Err(Lowered::diverging(quote!({ #stmts #ts }))));
            }
            let id = self.id("a");
            let ts = la.ts;
            stmts.extend(quote!(let #id = #ts;));
            names.push(id);
        }
        Ok(Ok((stmts, names)))
    }

    /// `Gc::new(T { f: e, .. })`: the field values left to right, then the allocation of a
    /// zeroed `T` and one store per field (see `meta_jit::lower::objects`).
    fn gc_new(&mut self, c: &syn::ExprCall) -> syn::Result<Lowered> {
        const USE: &str = "`Gc::new` in traced code takes a struct literal, `Gc::new(T { field: value, .. })` (`T { 0: x }` for a tuple struct), so that the JIT sees the allocation; build other values in a `#[dont_look_inside]` function";
        let (bb, ll) = (b(), l());
        let span = c.span();
        let arg = match c.args.first() {
            Some(a) if c.args.len() == 1 => strip_parens(a),
            _ => return Err(err(c, USE)),
        };
        let Expr::Struct(s) = arg else {
            return Err(err(arg, USE));
        };
        if let Some(rest) = &s.rest {
            return Err(err(
                rest,
                "`..base` is not supported in `Gc::new(T { .. })` in traced code; list every field",
            ));
        }
        if s.qself.is_some() {
            return Err(err(
                s,
                "qualified paths (`<T as Trait>::X`) are not supported in traced code",
            ));
        }
        let mut ty = s.path.clone();
        FixSuper.visit_path_mut_pub(&mut ty);
        let (stmts, names) = match self.args(s.fields.iter().map(|f| f.expr.clone()))? {
            Ok(x) => x,
            Err(d) => return Ok(d),
        };
        let mut inits = TokenStream::new();
        for (f, v) in s.fields.iter().zip(&names) {
            let fspan = f.span();
            let field = field_call(quote!(__jit_o), &f.member, fspan);
            inits.extend(quote_spanned!(fspan=> {
                let __jit_f = #field;
                #ll::init_field(#bb, __jit_f, #v);
            }));
        }
        Ok(Lowered::value(quote_spanned!(span=> {
            #stmts
            let __jit_o = #ll::gc_new::<#ty>(#bb);
            #inits
            #ll::gc_value(__jit_o)
        })))
    }

    /// A struct or enum variant built as a value (`Value::Int(x)`, `Point { x, y }`): the
    /// field values left to right, then a value in registers whose tag is the variant's (see
    /// `meta_jit::lower::value`). `tuple` says the fields were written as call arguments.
    fn ctor(
        &mut self,
        path: &syn::Path,
        fields: Vec<(String, TokenStream, Expr)>,
        tuple: bool,
        span: Span,
    ) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        let mut path = path.clone();
        FixSuper.visit_path_mut_pub(&mut path);
        let variant = path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let (stmts, names) = match self.args(fields.iter().map(|f| f.2.clone()))? {
            Ok(x) => x,
            Err(d) => return Ok(d),
        };
        let pspan = path.span();
        let check = if tuple {
            quote_spanned!(pspan=> |__jit_v| matches!(__jit_v, #path(..)))
        } else {
            quote_spanned!(pspan=> |__jit_v| matches!(__jit_v, #path { .. }))
        };
        let mut inits = TokenStream::new();
        for ((key, member, e), v) in fields.iter().zip(&names) {
            let extract = if tuple {
                let blanks = (0..key.parse::<usize>().unwrap_or(0)).map(|_| quote!(_));
                quote!(|__jit_v| {
                    #[allow(unreachable_patterns)]
                    match __jit_v { #path(#(#blanks,)* __jit_x, ..) => __jit_x, _ => loop {} }
                })
            } else {
                quote!(|__jit_v| {
                    #[allow(unreachable_patterns)]
                    match __jit_v { #path { #member: __jit_x, .. } => __jit_x, _ => loop {} }
                })
            };
            let fspan = e.span();
            inits.extend(quote_spanned!(fspan=>
                let __jit_o = #ll::ctor_field(#bb, __jit_o, #variant, #key, #extract, #v);
            ));
        }
        let ctor = respan(quote!(#ll::ctor), pspan);
        Ok(Lowered::value(quote_spanned!(span=> {
            #stmts
            let __jit_o = #ctor(#bb, #variant, #check);
            #inits
            __jit_o
        })))
    }

    fn call(&mut self, c: &syn::ExprCall) -> syn::Result<Lowered> {
        let bb = b();
        let span = c.span();
        let Expr::Path(p) = &*c.func else {
            return Err(err(&c.func, "calls through function pointers or closures are not supported in traced code; call an annotated function by name"));
        };
        if p.qself.is_some() {
            return Err(err(
                p,
                "qualified paths (`<T as Trait>::f`) are not supported in traced code",
            ));
        }
        if is_gc_new(&p.path) {
            return self.gc_new(c);
        }
        if is_gc_ptr_eq(&p.path) && c.args.len() == 2 {
            let x = self.expr(&c.args[0])?;
            if x.diverges {
                return Ok(x);
            }
            let y = self.expr(&c.args[1])?;
            if y.diverges {
                return Ok(y);
            }
            let (xt, yt, ll) = (x.ts, y.ts, l());
            return Ok(Lowered::value(quote_spanned!(span=> {
                let __jit_x = #xt;
                let __jit_y = #yt;
                #ll::gc_ptr_eq(#bb, __jit_x, __jit_y)
            })));
        }
        if is_cell_new(&p.path) && c.args.len() == 1 {
            let x = self.expr(&c.args[0])?;
            if x.diverges {
                return Ok(x);
            }
            let (xt, ll) = (x.ts, l());
            return Ok(Lowered::value(
                quote_spanned!(span=> { let __jit_x = #xt; #ll::cell_new(#bb, __jit_x) }),
            ));
        }
        if p.path
            .segments
            .last()
            .is_some_and(|s| !s.arguments.is_empty())
        {
            return Err(err(
                p,
                "generic arguments on calls are not supported in traced code",
            ));
        }
        if p.path.segments.len() == 1 && self.is_local(&p.path.segments[0].ident.to_string()) {
            return Err(err(
                p,
                "calling a local variable is not supported in traced code",
            ));
        }
        if let Some(id) = p.path.get_ident() {
            let ctor = match id.to_string().as_str() {
                "Some" => Some(quote!(some)),
                "Ok" => Some(quote!(ok)),
                "Err" => Some(quote!(err)),
                _ => None,
            };
            if let (Some(f), 1) = (ctor, c.args.len()) {
                let x = self.expr(&c.args[0])?;
                if x.diverges {
                    return Ok(x);
                }
                let (xt, ll) = (x.ts, l());
                return Ok(Lowered::value(
                    quote_spanned!(span=> { let __jit_x = #xt; #ll::#f(#bb, __jit_x) }),
                ));
            }
        }
        if is_ctor_path(&p.path) {
            let fields = c
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let idx = syn::Index::from(i);
                    (i.to_string(), quote!(#idx), a.clone())
                })
                .collect();
            return self.ctor(&p.path, fields, true, span);
        }
        let mut path = p.path.clone();
        FixSuper.visit_path_mut_pub(&mut path);
        if let Some(prim) = primitive_call(&p.path)? {
            path = prim;
        }
        if let Some(id) = p.path.get_ident() {
            if !self.callees.iter().any(|(c, _)| c == id) {
                self.callees.push((id.clone(), c.args.len()));
            }
        }
        let (stmts, names) = match self.args(c.args.iter().cloned())? {
            Ok(x) => x,
            Err(d) => return Ok(d),
        };
        Ok(Lowered::value(
            quote_spanned!(span=> { #stmts #path::__jit_call(#bb, #(#names),*) }),
        ))
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> syn::Result<Lowered> {
        let span = m.span();
        if m.turbofish.is_some() {
            return Err(err(
                m,
                "turbofish method calls are not supported in traced code",
            ));
        }
        let recv = if is_place(&m.receiver) {
            self.place(&m.receiver)?
        } else {
            self.expr(&m.receiver)?
        };
        if recv.diverges {
            return Ok(recv);
        }
        let (stmts, names) = match self.args(m.args.iter().cloned())? {
            Ok(x) => x,
            Err(d) => return Ok(d),
        };
        let rt = recv.ts;
        let method = &m.method;
        // A fallback trait in scope only here: its method is found (at the autoref step) only
        // when no JIT policy provides `method` on the receiver's handle, and its bound then fails
        // with a message that says to annotate the method.
        let msg = format!("method `{method}` is called from traced code but has no JIT policy");
        let note = format!("`{method}` is not a built-in of traced code (the supported standard methods are listed in the book's \"supported subset\"); for a method of a standard type, wrap the call in a small `#[elidable]` (pure) or `#[dont_look_inside]` function and call that; for your own method, mark it `#[look_inside]`, `#[elidable]` or `#[dont_look_inside]` inside a `#[jit::methods]` impl block and bring the generated `<Type>JitMethods` trait into scope");
        let tys: Vec<Ident> = (0..names.len())
            .map(|i| quote::format_ident!("__JitA{}", i))
            .collect();
        // The builder argument carries the method's span, so that the error points at the call.
        let mspan = method.span();
        let bm = quote_spanned!(mspan=> __jit_b);
        Ok(Lowered::value(quote_spanned!(span=> {
            let __jit_recv = #rt;
            #stmts
            #[diagnostic::on_unimplemented(message = #msg, label = "no JIT policy", note = #note)]
            trait MethodWithoutJitPolicy {}
            #[allow(dead_code)]
            trait __JitFallback {
                fn #method<__JitB: MethodWithoutJitPolicy, #(#tys),*>(&self, b: __JitB, #(_: #tys),*) -> !;
            }
            impl<__JitT: ?Sized> __JitFallback for __JitT {
                fn #method<__JitB: MethodWithoutJitPolicy, #(#tys),*>(&self, _: __JitB, #(_: #tys),*) -> ! {
                    unreachable!()
                }
            }
            __jit_recv.#method(#bm, #(#names),*)
        })))
    }

    fn macro_expr(&mut self, mac: &syn::Macro) -> syn::Result<Lowered> {
        let (bb, ll) = (b(), l());
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let span = mac.span();
        match name.as_str() {
            "panic" | "unreachable" | "todo" | "unimplemented" => {
                let msg = format!("{name}!({})", mac.tokens);
                Ok(Lowered::diverging(quote!(#ll::panic(#bb, #msg);)))
            }
            "assert" | "debug_assert" => {
                let args = mac.parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)?;
                let cond = args.first().ok_or_else(|| err(mac, "assert! needs a condition"))?;
                let c = self.expr(cond)?;
                if c.diverges {
                    return Ok(c);
                }
                let ct = c.ts;
                let msg = format!("assertion failed: {}", cond.to_token_stream());
                let guard = if name == "debug_assert" { quote!(cfg!(debug_assertions)) } else { quote!(true) };
                Ok(Lowered::value(quote_spanned!(span=> {
                    if #guard {
                        let __jit_c = #ct;
                        let __jit_ok = #bb.new_label();
                        let __jit_fail = #bb.new_label();
                        #ll::branch_if_not(#bb, __jit_c, __jit_fail);
                        #bb.goto(__jit_ok);
                        #bb.bind(__jit_fail);
                        #ll::panic(#bb, #msg);
                        #bb.bind(__jit_ok);
                    }
                })))
            }
            "matches" => {
                let d = self.desugar_matches(mac)?;
                self.expr(&d)
            }
            "jit_merge_point" | "can_enter_jit" => {
                // Arguments are an error of the hint macro itself (see `meta_jit::hints`), which
                // the native function still expands: reported once, there.
                let Some(portal) = self.portal.as_mut() else {
                    return Err(err(mac, &format!("`{name}!` is only allowed in the portal function (`#[jit::interpreter(...)]`)")));
                };
                if name == "jit_merge_point" {
                    portal.merge_points += 1;
                }
                let (greens, reds) = (portal.greens.clone(), portal.reds.clone());
                let resolve = |this: &Self, v: &[Ident]| -> syn::Result<Vec<Ident>> {
                    v.iter()
                        .map(|g| {
                            this.lookup(&g.to_string()).ok_or_else(|| {
                                syn::Error::new(g.span(), format!("`{g}` is declared a green or red but is not a variable in scope at `{name}!`"))
                            })
                        })
                        .collect()
                };
                let greens = resolve(self, &greens)?;
                let reds = resolve(self, &reds)?;
                let call = if name == "jit_merge_point" {
                    let site = hint_site(span, "jit_merge_point!()", &[]);
                    quote!(#ll::merge_point_at(#bb, __jit_g, __jit_r, #site))
                } else {
                    quote!(#ll::can_enter_jit(#bb, __jit_g, __jit_r))
                };
                Ok(Lowered::value(quote_spanned!(span=> {
                    let mut __jit_g = Vec::new();
                    #( __jit_g.extend(#ll::regs_of(#bb, #greens)); )*
                    let mut __jit_r = Vec::new();
                    #( __jit_r.extend(#ll::regs_of(#bb, #reds)); )*
                    #call;
                })))
            }
            "promote" => {
                let x: Expr = mac.parse_body()?;
                let v = self.expr(&x)?;
                let vt = v.ts;
                Ok(Lowered::value(quote_spanned!(span=> { let __jit_x = #vt; #ll::promote(#bb, __jit_x) })))
            }
            "record_exact_value" => {
                let args = mac.parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)?;
                if args.len() != 2 {
                    return Err(err(mac, "record_exact_value!(value, constant) takes two arguments"));
                }
                let v = self.expr(&args[0])?;
                let vt = v.ts;
                let mut c = args[1].clone();
                syn::visit_mut::VisitMut::visit_expr_mut(&mut FixSuper, &mut c);
                let site = hint_site(span, &args[0].to_token_stream().to_string(), &[]);
                Ok(Lowered::value(quote_spanned!(span=> { let __jit_x = #vt; #ll::record_exact_value(#bb, __jit_x, #c, #site); })))
            }
            "record_known_result" => {
                let args = mac.parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)?;
                let mut it = args.into_iter();
                let (Some(res), Some(Expr::Path(f))) = (it.next(), it.next()) else {
                    return Err(err(mac, "record_known_result!(result, function, args...) needs a result and an #[elidable] function's path"));
                };
                let r = self.expr(&res)?;
                let rt = r.ts;
                let arg_exprs: Vec<Expr> = it.collect();
                let arg_texts: Vec<String> = arg_exprs.iter().map(|a| a.to_token_stream().to_string()).collect();
                let call = format!("{}({})", f.to_token_stream(), arg_texts.join(", "));
                let site = hint_site(span, &call, &arg_texts);
                let (stmts, names) = match self.args(arg_exprs.into_iter())? {
                    Ok(x) => x,
                    Err(d) => return Ok(d),
                };
                let mut path = f.path.clone();
                FixSuper.visit_path_mut_pub(&mut path);
                Ok(Lowered::value(quote_spanned!(span=> { let __jit_res = #rt; #stmts #path::__jit_known_result(#bb, #site, __jit_res, #(#names),*); })))
            }
            _ => Err(err(
                mac,
                &format!("the macro `{name}!` is not supported in traced code; supported: panic!, unreachable!, todo!, unimplemented!, assert!, debug_assert!, matches! and the hint macros"),
            )),
        }
    }

    fn lower_if(&mut self, i: &syn::ExprIf) -> syn::Result<Lowered> {
        if let Expr::Let(_) = &*i.cond {
            let d = self.desugar_if_let(i)?;
            return self.expr(&d);
        }
        let (bb, ll) = (b(), l());
        let c = self.expr(&i.cond)?;
        if c.diverges {
            return Ok(c);
        }
        let then = self.block(&i.then_branch)?;
        let els = match &i.else_branch {
            Some((_, e)) => self.expr(e)?,
            None => Lowered::value(quote!(())),
        };
        let (ct, res, else_l, end_l) = (c.ts, self.id("res"), self.id("else"), self.id("end"));
        let arm = |x: Lowered| {
            let ts = x.ts;
            if x.diverges {
                quote!({ #ts; })
            } else {
                quote!({ let __jit_v = #ts; #ll::join(#bb, &mut #res, __jit_v); #bb.goto(#end_l); })
            }
        };
        let diverges = then.diverges && els.diverges;
        let (tt, et) = (arm(then), arm(els));
        let value = if diverges {
            quote!(())
        } else {
            quote!(#res.expect("a branch of this `if` completes"))
        };
        let decl = if diverges {
            quote!()
        } else {
            quote!(#[allow(unused_mut)] let mut #res = None;)
        };
        let span = i.span();
        Ok(Lowered {
            ts: quote_spanned!(span=> {
                let __jit_c = #ct;
                let #else_l = #bb.new_label();
                let #end_l = #bb.new_label();
                #decl
                #ll::branch_if_not(#bb, __jit_c, #else_l);
                #tt
                #bb.bind(#else_l);
                #et
                #bb.bind(#end_l);
                #value
            }),
            diverges,
        })
    }

    fn check_loop_allowed(&self, span: &dyn ToTokens) -> syn::Result<()> {
        if self.allow_loops {
            Ok(())
        } else {
            Err(err(
                span,
                &format!(
                    "a `{}` function containing a loop would be unrolled into every trace; mark it `#[unroll_safe]` if the loop is short and bounded, or `#[dont_look_inside]`",
                    self.policy
                ),
            ))
        }
    }

    fn open_loop(&mut self, label: Option<&syn::Label>) {
        let head = self.id("head");
        let exit = self.id("exit");
        let res = self.id("lres");
        self.loops.push(LoopCtx {
            label: label.map(|l| l.name.ident.to_string()),
            head,
            exit,
            res,
            broke: false,
            broke_value: false,
        });
    }

    fn lower_loop(&mut self, lp: &syn::ExprLoop) -> syn::Result<Lowered> {
        self.check_loop_allowed(&lp.loop_token)?;
        let bb = b();
        self.open_loop(lp.label.as_ref());
        let body = self.block(&lp.body);
        let ctx = self.loops.pop().unwrap();
        let body = body?;
        let LoopCtx {
            head,
            exit,
            res,
            broke,
            broke_value,
            ..
        } = ctx;
        let bt = body.ts;
        let decl = if broke_value {
            quote!(let mut #res = None;)
        } else {
            quote!()
        };
        let value = if broke_value {
            quote!(#res.expect("a `break` with a value"))
        } else {
            quote!(())
        };
        let tail = if body.diverges {
            quote!()
        } else {
            quote!(#bb.goto(#head);)
        };
        Ok(Lowered {
            ts: quote!({
                #decl
                let #head = #bb.new_label();
                let #exit = #bb.new_label();
                #bb.bind(#head);
                { let _ = #bt; }
                #tail
                #bb.bind(#exit);
                #value
            }),
            diverges: !broke,
        })
    }

    fn lower_while(&mut self, w: &syn::ExprWhile) -> syn::Result<Lowered> {
        self.check_loop_allowed(&w.while_token)?;
        if let Expr::Let(_) = &*w.cond {
            let d = self.desugar_while_let(w)?;
            return self.expr(&d);
        }
        let (bb, ll) = (b(), l());
        self.open_loop(w.label.as_ref());
        let cond = self.expr(&w.cond);
        let body = cond.and_then(|c| Ok((c, self.block(&w.body)?)));
        let ctx = self.loops.pop().unwrap();
        let (cond, body) = body?;
        let LoopCtx { head, exit, .. } = ctx;
        let (ct, bt) = (cond.ts, body.ts);
        let tail = if body.diverges {
            quote!()
        } else {
            quote!(#bb.goto(#head);)
        };
        Ok(Lowered::value(quote!({
            let #head = #bb.new_label();
            let #exit = #bb.new_label();
            #bb.bind(#head);
            let __jit_c = #ct;
            #ll::branch_if_not(#bb, __jit_c, #exit);
            { let _ = #bt; }
            #tail
            #bb.bind(#exit);
        })))
    }
}

/// `visit_path_mut` made callable by name.
pub trait VisitPathPub {
    fn visit_path_mut_pub(&mut self, p: &mut syn::Path);
}
impl VisitPathPub for FixSuper {
    fn visit_path_mut_pub(&mut self, p: &mut syn::Path) {
        syn::visit_mut::VisitMut::visit_path_mut(self, p);
    }
}
