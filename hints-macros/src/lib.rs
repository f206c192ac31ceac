//! The codewriter of meta-jit: proc macros that lower annotated interpreter functions into code
//! that builds jitcode, and the layout derive. See the book's "Hint reference" and "The supported
//! Rust subset".
//!
//! Every policy attribute leaves the function itself untouched (the native interpreter is the
//! user's code compiled as written) and emits a companion next to it: a module of the same name
//! for a free function, a trait on the receiver's handle type for methods (`#[methods]`). The
//! one exception is `#[elidable]` on a free function, whose body moves into an inner function
//! so that checked mode can check its purity ([`purity`]).
//! Lowering works on syntax only ([`lower`]); types are rustc's business, through the typed
//! handles of `meta_jit::lower`.
//!
//! Debugging: with `METAJIT_DEBUG_EXPAND=/some/file` in the environment of the build, the
//! expansion of every annotated free function is appended to that file.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::{parse_macro_input, Ident, ImplItem, ItemFn, ItemImpl};

mod companion;
mod effects;
mod krate;
mod layout;
mod liveness;
mod lower;
mod native;
mod pinned;
mod purity;
mod resume;
mod sig;
mod trace;

use companion::{companion_items, method_module, Policy, Target};
use lower::Portal;

fn free_fn(
    policy: Policy,
    attr: TokenStream,
    item: TokenStream,
    portal: Option<Portal>,
) -> TokenStream {
    // Policies other than the portal take only `crate = path`; the portal's arguments were
    // parsed by `interpreter`, which passes its `crate` in `portal`.
    let mut krate_path = portal.as_ref().and_then(|p| p.krate.clone());
    let mut policy = policy;
    if policy != Policy::Portal && !attr.is_empty() {
        let parser = syn::meta::parser(|m| {
            if m.path.is_ident("crate") {
                krate_path = Some(krate::parse_value(&m)?);
                Ok(())
            } else if let Some(r) = (policy == Policy::Residual)
                .then(|| effects::residual_arg(&m, &mut policy))
                .flatten()
            {
                r
            } else if policy == Policy::Residual {
                Err(m.error("#[dont_look_inside] takes `writes_nothing` and `crate = path`"))
            } else {
                Err(m.error(format!(
                    "{} takes no arguments but `crate = path`",
                    policy.attr_name()
                )))
            }
        });
        if let Err(e) = parser.parse(attr) {
            return e.to_compile_error().into();
        }
    }
    let f = parse_macro_input!(item as ItemFn);
    if let Err(e) = effects::check(policy, &f.sig) {
        let err = e.to_compile_error();
        return quote!(#f #err).into();
    }
    match krate::with(krate_path.as_ref(), || free_fn_impl(policy, &f, portal)) {
        Ok(ts) => {
            if let Some(path) = std::env::var_os("METAJIT_DEBUG_EXPAND") {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .unwrap();
                writeln!(f, "{ts}").unwrap();
            }
            ts.into()
        }
        Err(e) => {
            let err = e.to_compile_error();
            // A generic free function gets a stand-in companion, so that traced callers of it
            // report nothing more (one error, here, rather than a second "has no JIT policy" at
            // each call). Not for other errors: the function may be a method in an `impl`,
            // where no module can go.
            let generic_free_fn = f.sig.generics.type_params().next().is_some()
                && !matches!(f.sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
            if !generic_free_fn {
                return quote!(#f #err).into();
            }
            let (vis, name) = (&f.vis, &f.sig.ident);
            let tys: Vec<Ident> = (0..f.sig.inputs.len())
                .map(|i| format_ident!("__JitA{}", i))
                .collect();
            quote! {
                #f
                #err
                #[allow(non_snake_case, dead_code)]
                #vis mod #name {
                    pub fn __jit_call<__JitB, #(#tys),*>(_: __JitB, #(_: #tys),*) -> ! {
                        unreachable!()
                    }
                }
            }
            .into()
        }
    }
}

fn free_fn_impl(policy: Policy, f: &ItemFn, portal: Option<Portal>) -> syn::Result<TokenStream2> {
    let sig = sig::analyze(&f.sig, None)?;
    let name = &f.sig.ident;
    let vis = &f.vis;
    let target = Target {
        native: quote!(super::#name),
        display: name.to_string(),
        self_ty: None,
    };
    let mut portal = portal;
    let mut native = f.clone();
    if let Some(p) = &portal {
        let params: Vec<Ident> = sig.params.iter().map(|p| p.name.clone()).collect();
        let mut errors = liveness::check(&params, &f.block, &p.greens, &p.reds).into_iter();
        if let Some(mut e) = errors.next() {
            e.extend(errors);
            return Err(e);
        }
    }
    let mut resume = None;
    if let Some(p) = &mut portal {
        (p.pinned, p.greens_pinned) = pinned::pinned(f, &p.greens);
        p.greens_static = pinned::greens_static(f, &p.greens);
        resume = resume::resume_fn(f, p);
        p.resume = resume.is_some();
        native::rewrite(&mut native, p, None);
    }
    let items = companion_items(policy, &sig, &f.block, &target, portal)?;
    let native = if policy == Policy::Elidable {
        purity::wrap(&native)
    } else {
        quote!(#native)
    };
    let doc = format!(
        "JIT companion of [`{name}`](fn@{name}), generated by `{}`.",
        policy.attr_name()
    );
    Ok(quote! {
        #native
        #resume
        #[doc = #doc]
        #[allow(non_snake_case, dead_code, unused_imports, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;
            #items
        }
    })
}

/// Marks a function that traced code inlines (RPython's default policy, made explicit). The
/// function must not contain loops (use `#[unroll_safe]`).
#[proc_macro_attribute]
pub fn look_inside(attr: TokenStream, item: TokenStream) -> TokenStream {
    free_fn(Policy::LookInside, attr, item, None)
}

/// Like `#[look_inside]`, for a function whose loops are short and bounded, so unrolling them
/// into the trace is fine (RPython's `@unroll_safe`).
#[proc_macro_attribute]
pub fn unroll_safe(attr: TokenStream, item: TokenStream) -> TokenStream {
    free_fn(Policy::UnrollSafe, attr, item, None)
}

/// A pure function: its result depends only on its arguments (RPython's `@elidable`). Traced
/// code calls it through a shim; the optimizer constant-folds, CSEs and removes such calls.
#[proc_macro_attribute]
pub fn elidable(attr: TokenStream, item: TokenStream) -> TokenStream {
    free_fn(Policy::Elidable, attr, item, None)
}

/// A function the tracer does not look into: traced code calls it (RPython's
/// `@dont_look_inside`).
#[proc_macro_attribute]
pub fn dont_look_inside(attr: TokenStream, item: TokenStream) -> TokenStream {
    free_fn(Policy::Residual, attr, item, None)
}

/// A function whose result does not change during one iteration of a compiled loop (RPython's
/// `@loop_invariant`): called once per loop, through a shim.
#[proc_macro_attribute]
pub fn loop_invariant(attr: TokenStream, item: TokenStream) -> TokenStream {
    free_fn(Policy::LoopInvariant, attr, item, None)
}

/// The portal: `#[interpreter(greens(pc, code), reds(frame))]` on the interpreter's main
/// function, which contains `jit_merge_point!()` at the head of its dispatch loop.
///
/// Options: `location = f` names the function that renders the greens as a guest position
/// for the JIT log and the trace viewer (`fn f(pc: usize, code: &Code) -> impl Display`, the
/// greens in order); `crate = path` names meta-jit when it is not `::meta_jit` (every
/// attribute takes this one).
#[proc_macro_attribute]
pub fn interpreter(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut greens = Vec::new();
    let mut reds = Vec::new();
    let mut location = None;
    let mut krate_path = None;
    let parser = syn::meta::parser(|m| {
        if m.path.is_ident("location") {
            location = Some(m.value()?.parse::<syn::Path>()?);
            return Ok(());
        }
        if m.path.is_ident("crate") {
            krate_path = Some(krate::parse_value(&m)?);
            return Ok(());
        }
        let list = if m.path.is_ident("greens") {
            &mut greens
        } else if m.path.is_ident("reds") {
            &mut reds
        } else {
            return Err(
                m.error("expected `greens(...)`, `reds(...)`, `location = f` or `crate = path`")
            );
        };
        let content;
        syn::parenthesized!(content in m.input);
        let names = content.parse_terminated(Ident::parse_any_ident, syn::Token![,])?;
        list.extend(names);
        Ok(())
    });
    if let Err(e) = parser.parse(attr) {
        return e.to_compile_error().into();
    }
    free_fn(
        Policy::Portal,
        TokenStream::new(),
        item,
        Some(Portal {
            greens,
            reds,
            merge_points: 0,
            pinned: Vec::new(),
            greens_pinned: false,
            greens_static: false,
            location,
            krate: krate_path,
            resume: false,
        }),
    )
}

trait ParseAnyIdent {
    fn parse_any_ident(input: syn::parse::ParseStream) -> syn::Result<Ident>;
}
impl ParseAnyIdent for Ident {
    fn parse_any_ident(input: syn::parse::ParseStream) -> syn::Result<Ident> {
        let i: Ident = input.parse()?;
        Ok(i)
    }
}

/// On an `impl` block: makes its methods marked `#[look_inside]`, `#[unroll_safe]`,
/// `#[elidable]`, `#[dont_look_inside]` or `#[loop_invariant]` callable from traced code, through
/// a trait named `<Type>JitMethods` (or the name given: `#[methods(FrameJit)]`) implemented on the
/// handle of `&Type`. Bring that trait into scope where traced code calls the methods.
///
/// `crate = path` names meta-jit when it is not `::meta_jit`: `#[methods(FrameJit, crate = jit)]`.
#[proc_macro_attribute]
pub fn methods(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut trait_name: Option<Ident> = None;
    let mut krate_path = None;
    let parser = |input: syn::parse::ParseStream| -> syn::Result<()> {
        if input.peek(Ident) && !input.peek2(syn::Token![=]) {
            trait_name = Some(input.parse()?);
            if input.is_empty() {
                return Ok(());
            }
            input.parse::<syn::Token![,]>()?;
        }
        if input.is_empty() {
            return Ok(());
        }
        let kw: syn::Token![crate] = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        krate_path = Some(if input.peek(syn::LitStr) {
            input.parse::<syn::LitStr>()?.parse()?
        } else {
            input.parse()?
        });
        let _ = kw;
        if !input.is_empty() {
            return Err(input.error("expected `TraitName` and/or `crate = path`"));
        }
        Ok(())
    };
    if let Err(e) = parser.parse(attr) {
        return e.to_compile_error().into();
    }
    let imp = parse_macro_input!(item as ItemImpl);
    match krate::with(krate_path.as_ref(), || {
        methods_impl(trait_name, imp.clone())
    }) {
        Ok(ts) => ts.into(),
        Err(e) => {
            let err = e.to_compile_error();
            quote!(#imp #err).into()
        }
    }
}

fn methods_impl(trait_name: Option<Ident>, mut imp: ItemImpl) -> syn::Result<TokenStream2> {
    if let Some((_, t, _)) = &imp.trait_ {
        return Err(syn::Error::new_spanned(
            t,
            "`#[methods]` goes on an inherent `impl` block, not a trait impl",
        ));
    }
    if let Some(p) = imp.generics.type_params().next() {
        return Err(syn::Error::new_spanned(
            p,
            "`#[methods]` does not support generic impl blocks",
        ));
    }
    let self_ty = (*imp.self_ty).clone();
    let ty_name = sig::self_type_name(&self_ty)?;
    let trait_name = trait_name.unwrap_or_else(|| format_ident!("{}JitMethods", ty_name));
    let mj = krate::path();
    let ll = quote!(#mj::lower);
    let jc = quote!(#mj::jitcode);
    let mut modules = TokenStream2::new();
    let mut trait_items = TokenStream2::new();
    let mut impl_items = TokenStream2::new();
    // `Self` in handle types of the trait (declared at the impl's level) is the self type.
    let here = |t: &syn::Type| {
        let mut t = t.clone();
        syn::visit_mut::VisitMut::visit_type_mut(&mut sig::StaticLifetimes, &mut t);
        t
    };
    let mut hidden_bodies = Vec::new();
    for item in &mut imp.items {
        let ImplItem::Fn(m) = item else { continue };
        let mut policy = None;
        let mut bad_attr: Option<syn::Error> = None;
        m.attrs.retain(|a| {
            let n = a
                .path()
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            match Policy::from_name(&n) {
                Some(mut p) => {
                    if p == Policy::Residual {
                        if let syn::Meta::List(_) = &a.meta {
                            let parser = syn::meta::parser(|m| {
                                effects::residual_arg(&m, &mut p).unwrap_or_else(|| {
                                    Err(m.error(
                                        "#[dont_look_inside] on a method takes `writes_nothing`",
                                    ))
                                })
                            });
                            if let Err(e) = a.parse_args_with(parser) {
                                bad_attr.get_or_insert(e);
                            }
                        }
                    }
                    policy = Some(p);
                    false
                }
                None => true,
            }
        });
        if let Some(e) = bad_attr.take() {
            return Err(e);
        }
        let Some(policy) = policy else { continue };
        effects::check(policy, &m.sig)?;
        let sig = sig::analyze(&m.sig, Some(&self_ty))?;
        let Some(_) = sig.receiver else {
            return Err(syn::Error::new_spanned(
                &m.sig,
                "associated functions without `self` cannot be called from traced code yet; make it a free function",
            ));
        };
        let mname = &m.sig.ident;
        let modname = method_module(&ty_name, mname);
        let fixed_self = sig::inner_ty(&self_ty);
        let target = Target {
            native: quote!(<#fixed_self>::#mname),
            display: format!("{}::{}", ty_name, mname),
            self_ty: Some(self_ty.clone()),
        };
        let items = companion_items(policy, &sig, &m.block, &target, None)?;
        let doc = format!("JIT companion of `{ty_name}::{mname}`.");
        modules.extend(quote! {
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(non_snake_case, dead_code, unused_imports, clippy::all)]
            pub mod #modname {
                #[allow(unused_imports)]
                use super::*;
                #items
            }
        });
        let pnames: Vec<&Ident> = sig.params.iter().map(|p| &p.name).collect();
        let phandles: Vec<TokenStream2> = sig
            .params
            .iter()
            .map(|p| {
                let t = here(&p.ty);
                quote!(<#t as #ll::JitType>::Handle)
            })
            .collect();
        let rt = here(&sig.ret);
        let rhandle = quote!(<#rt as #ll::JitType>::Handle);
        trait_items.extend(quote! {
            #[doc = concat!("Lowered call of `", stringify!(#ty_name), "::", stringify!(#mname), "`.")]
            fn #mname(self, __jit_b: &mut #jc::Builder, #(#pnames: #phandles),*) -> #rhandle;
        });
        impl_items.extend(quote! {
            fn #mname(self, __jit_b: &mut #jc::Builder, #(#pnames: #phandles),*) -> #rhandle {
                #modname::__jit_call(__jit_b, self, #(#pnames),*)
            }
        });
        if policy == Policy::Elidable {
            if let Some((outer, body)) = purity::wrap_method(m, &target.display) {
                *m = outer;
                hidden_bodies.push(ImplItem::Fn(body));
            }
        }
    }
    imp.items.extend(hidden_bodies);
    let sty = here(&self_ty);
    let tdoc =
        format!("Methods of `{ty_name}` callable from traced code (generated by `#[methods]`).");
    Ok(quote! {
        #imp
        #modules
        #[doc = #tdoc]
        #[allow(private_interfaces, private_bounds, clippy::all)]
        pub trait #trait_name {
            #trait_items
        }
        #[allow(private_interfaces, clippy::all)]
        impl #trait_name for #ll::Ptr<#sty> {
            #impl_items
        }
    })
}

/// Describes a struct's or enum's layout to the JIT. On structs, `#[jit(immutable)]` and
/// `#[jit(quasi_immutable)]` mark fields. Enums need `#[repr(u8)]` or `#[repr(C, u8)]` (or
/// another integer type). `#[jit(crate = path)]` on the type names meta-jit when it is not
/// `::meta_jit`.
#[proc_macro_derive(JitLayout, attributes(jit))]
pub fn jit_layout(item: TokenStream) -> TokenStream {
    derive_with(item, layout::derive)
}

/// Implements meta-jit's `Trace` for a struct or enum: the collector's way to find the `Gc`
/// pointers a value holds (every field is traced; the type may be the `T` of a `Gc<T>` when
/// every field keeps its `Gc`s in its own bytes). A type that implements `Drop` is refused
/// (the collector drops the objects it frees in any order, so a `Drop` must not read a `Gc`:
/// implement `Trace` by hand to promise it). `#[jit(crate = path)]` on the type names
/// meta-jit when it is not `::meta_jit`.
#[proc_macro_derive(Trace, attributes(jit))]
pub fn derive_trace(item: TokenStream) -> TokenStream {
    derive_with(item, trace::derive)
}

/// Runs a derive with the meta-jit path that the type's `#[jit(crate = path)]` names (its
/// other `#[jit(..)]` options are the derive's own: skipped here).
fn derive_with(
    item: TokenStream,
    derive: fn(syn::DeriveInput) -> syn::Result<proc_macro2::TokenStream>,
) -> TokenStream {
    let input = parse_macro_input!(item as syn::DeriveInput);
    let mut krate_path = None;
    for a in input.attrs.iter().filter(|a| a.path().is_ident("jit")) {
        let r = a.parse_nested_meta(|m| {
            if m.path.is_ident("crate") {
                krate_path = Some(krate::parse_value(&m)?);
            } else if m.input.peek(syn::Token![=]) {
                let _: syn::Expr = m.value()?.parse()?;
            } else if m.input.peek(syn::token::Paren) {
                let _list;
                syn::parenthesized!(_list in m.input);
            }
            Ok(())
        });
        if let Err(e) = r {
            return e.to_compile_error().into();
        }
    }
    match krate::with(krate_path.as_ref(), || derive(input)) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}
