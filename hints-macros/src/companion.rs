//! Companions: what each policy attribute emits next to the function it annotates.
//!
//! For a free function `f`, a module `f` (functions and modules live in different namespaces, so
//! `f(x)` in traced code resolves to `f::__jit_call` through the same `use`s that make `f`
//! visible). For methods, a trait implemented on the receiver's handle type (`Ptr<Type>`), so
//! `recv.m(x)` resolves by ordinary method lookup. Look-inside functions get their jitcode
//! (built on first use) and an inline call; elidable, loop-invariant and residual ones get an
//! `extern "C"` shim, a dynamic caller and a call descriptor.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Block, Ident, Type};

use crate::lower::{Lowerer, Portal};
use crate::sig::{inner_ty, static_ty, ReplaceSelf, Sig};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    LookInside,
    UnrollSafe,
    Portal,
    Elidable,
    LoopInvariant,
    Residual,
    /// `#[dont_look_inside(writes_nothing)]`.
    ResidualWritesNothing,
}

impl Policy {
    pub fn from_name(n: &str) -> Option<Policy> {
        Some(match n {
            "look_inside" => Policy::LookInside,
            "unroll_safe" => Policy::UnrollSafe,
            "elidable" => Policy::Elidable,
            "loop_invariant" => Policy::LoopInvariant,
            "dont_look_inside" => Policy::Residual,
            _ => return None,
        })
    }
    pub fn attr_name(self) -> &'static str {
        match self {
            Policy::LookInside => "#[look_inside]",
            Policy::UnrollSafe => "#[unroll_safe]",
            Policy::Portal => "#[interpreter]",
            Policy::Elidable => "#[elidable]",
            Policy::LoopInvariant => "#[loop_invariant]",
            Policy::Residual => "#[dont_look_inside]",
            Policy::ResidualWritesNothing => "#[dont_look_inside(writes_nothing)]",
        }
    }
    fn looks_inside(self) -> bool {
        matches!(
            self,
            Policy::LookInside | Policy::UnrollSafe | Policy::Portal
        )
    }
}

/// Where the companion's code calls the native function: `super::f` or `<super::Type>::m`.
pub struct Target {
    pub native: TokenStream,
    pub display: String,
    pub self_ty: Option<Type>,
}

/// The items inside a companion module (without the `mod` itself).
pub fn companion_items(
    policy: Policy,
    sig: &Sig,
    body: &Block,
    target: &Target,
    portal: Option<Portal>,
) -> syn::Result<TokenStream> {
    let mj = crate::krate::path();
    let ll = quote!(#mj::lower);
    let jc = quote!(#mj::jitcode);
    let name_str = &target.display;
    // Parameters as handles (the receiver first, as `__jit_self`).
    let mut pnames: Vec<Ident> = Vec::new();
    let mut ptys: Vec<TokenStream> = Vec::new();
    let mut orig_tys: Vec<TokenStream> = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    if let Some(is_mut) = sig.receiver {
        let st = target.self_ty.as_ref().expect("methods have a self type");
        let m = if is_mut { quote!(mut) } else { quote!() };
        pnames.push(Ident::new("__jit_self", Span::call_site()));
        ptys.push(static_ty(&syn::parse_quote!(&#m #st)));
        orig_tys.push(inner_ty(&syn::parse_quote!(&#m #st)));
        spans.push(st.span());
    }
    for p in &sig.params {
        pnames.push(p.name.clone());
        ptys.push(static_ty(&p.ty));
        orig_tys.push(inner_ty(&p.ty));
        spans.push(p.ty.span());
    }
    let ret_static = static_ty(&sig.ret);
    let handle = |t: &TokenStream, sp: Span| quote_spanned!(sp=> <#t as #ll::JitType>::Handle);
    let phandles: Vec<TokenStream> = ptys
        .iter()
        .zip(&spans)
        .map(|(t, &sp)| handle(t, sp))
        .collect();
    let rhandle = handle(&ret_static, sig.ret.span());

    let mut out = TokenStream::new();
    if policy.looks_inside() {
        let allow_loops = matches!(policy, Policy::UnrollSafe | Policy::Portal);
        let mut lw = Lowerer::new(policy.attr_name(), allow_loops, portal);
        for n in &pnames {
            lw.declare(n);
        }
        let mut body = body.clone();
        if let Some(st) = &target.self_ty {
            ReplaceSelf(st).visit_block_mut(&mut body);
        }
        let lowered = lw.block(&body)?;
        // Fallbacks for callees named by a single identifier: `use super::g;` imports `g`'s
        // companion module explicitly when it exists (shadowing the glob below); otherwise only
        // the fallback module `g` from the glob is found, and its bound fails with a message
        // that says to annotate `g`.
        let mut fallbacks = TokenStream::new();
        let mut imports = TokenStream::new();
        for (callee, arity) in &lw.callees {
            if *callee == sig.name {
                continue;
            }
            let msg = format!("`{callee}` is called from traced code but has no JIT policy");
            let tys: Vec<Ident> = (0..*arity).map(|i| format_ident!("__JitA{}", i)).collect();
            imports.extend(quote!(#[allow(unused_imports)] use super::#callee;));
            fallbacks.extend(quote! {
                pub mod #callee {
                    #[diagnostic::on_unimplemented(
                        message = #msg,
                        label = "no JIT policy",
                        note = "annotate the function with `#[look_inside]`, `#[unroll_safe]`, `#[elidable]`, `#[dont_look_inside]` or `#[loop_invariant]`; a foreign function needs a small annotated wrapper"
                    )]
                    pub trait NotAnnotated {}
                    pub fn __jit_call<__JitB: NotAnnotated, #(#tys),*>(_: __JitB, #(_: #tys),*) -> ! {
                        unreachable!()
                    }
                }
            });
        }
        out.extend(quote! {
            #imports
            #[allow(unused_imports)]
            use self::__jit_fallbacks::*;
            #[allow(non_snake_case, non_camel_case_types, dead_code)]
            mod __jit_fallbacks {
                #fallbacks
            }
        });
        if let Some(p) = &lw.portal {
            if p.merge_points != 1 {
                return Err(syn::Error::new(
                    sig.name.span(),
                    "the portal must contain exactly one `jit_merge_point!()`, at the head of its dispatch loop",
                ));
            }
        }
        let bt = lowered.ts;
        let finish = if lowered.diverges {
            quote!(let _ = #bt;)
        } else {
            quote!(let __jit_v = #bt; #ll::ret::<__JitRet>(__jit_b, __jit_v);)
        };
        let pstrs: Vec<String> = pnames
            .iter()
            .map(|n| {
                if n == "__jit_self" {
                    "self".into()
                } else {
                    n.to_string()
                }
            })
            .collect();
        out.extend(quote! {
            #[allow(unused_variables, unused_mut, unused_braces, unreachable_code, clippy::all)]
            fn __jit_build(__jit_b: &mut #jc::Builder) {
                #[allow(unused_imports)]
                use #ll::builtin::*;
                type __JitRet = #rhandle;
                #( let #pnames: #phandles = #ll::arg(__jit_b, #pstrs); )*
                #finish
            }
            /// The jitcode of this function, built on first use.
            pub fn jitcode() -> &'static #jc::JitCode {
                static CODE: ::std::sync::OnceLock<#jc::JitCode> = ::std::sync::OnceLock::new();
                CODE.get_or_init(|| {
                    let mut b = #jc::Builder::new(#name_str);
                    __jit_build(&mut b);
                    b.finish()
                })
            }
            /// A lazy reference to [`jitcode`], for inline calls.
            pub fn __jit_ref() -> #jc::JitCodeRef {
                #jc::JitCodeRef { name: #name_str, get: jitcode }
            }
            /// Lowered call: inlines this function (an `InlineCall` op).
            pub fn __jit_call(__jit_b: &mut #jc::Builder, #(#pnames: #phandles),*) -> #rhandle {
                let mut __jit_args = Vec::new();
                #( #ll::arg_regs(__jit_b, &mut __jit_args, #pnames); )*
                #ll::emit_inline_call(__jit_b, __jit_ref(), __jit_args)
            }
        });
        if let Some(portal) = &lw.portal {
            let greens_pinned = portal.greens_pinned;
            let with_static = if portal.greens_static {
                quote!(.with_static_greens())
            } else {
                quote!()
            };
            let (location_fn, with_location) = match &portal.location {
                Some(f) => {
                    let takes = portal
                        .greens
                        .iter()
                        .map(|_| quote!(#mj::warm::take(&mut __jit_it)));
                    let def = quote! {
                        /// Renders the greens with the interpreter's `location` function.
                        ///
                        /// # Safety
                        /// See `meta_jit::log::LocationFn`.
                        #[doc(hidden)]
                        pub unsafe fn __jit_location(__jit_vals: &[#jc::Value]) -> ::std::string::String {
                            let mut __jit_it = __jit_vals.to_vec().into_iter();
                            // SAFETY: the values are the portal's greens at a merge point, in
                            // order, and the objects they reference are live (the contract).
                            ::std::string::ToString::to_string(&#f(#( unsafe { #takes } ),*))
                        }
                    };
                    (def, quote!(.with_location(__jit_location)))
                }
                None => (quote!(), quote!()),
            };
            out.extend(location_fn);
            let resume_name = format_ident!("__jit_resume_{}", name_str);
            let with_resume = if portal.resume {
                out.extend(quote! {
                    /// The portal resumed at its merge point (see `meta_jit::warm::ResumeFn`).
                    ///
                    /// # Safety
                    /// As `meta_jit::warm::ResumeFn`.
                    #[doc(hidden)]
                    pub unsafe fn __jit_resume(__jit_vals: ::std::vec::Vec<#jc::Value>) -> ::std::vec::Vec<#jc::Value> {
                        // SAFETY: forwarded.
                        let __jit_r = unsafe { super::#resume_name(__jit_vals) };
                        let mut __jit_out = ::std::vec::Vec::new();
                        #ll::JitType::to_values(__jit_r, &mut __jit_out);
                        __jit_out
                    }
                });
                quote!(.with_resume(__jit_resume))
            } else {
                quote!()
            };
            out.extend(quote! {
                /// Runs `f` with this portal's JIT driver (one per thread): its parameters
                /// (`d.set_params("threshold=100")`), statistics (`d.stats()`) and log.
                pub fn with_driver<R>(f: impl FnOnce(&#mj::warm::JitDriver) -> R) -> R {
                    ::std::thread_local! {
                        static DRIVER: #mj::warm::JitDriver =
                            #mj::warm::JitDriver::new(#name_str, jitcode, &__JIT_ON, #greens_pinned)#with_location #with_resume #with_static;
                    }
                    DRIVER.with(f)
                }
                ::std::thread_local! {
                    static __JIT_ON: #mj::warm::OnFlag =
                        const { #mj::warm::OnFlag::unknown() };
                }
                /// Whether the JIT is on on this thread (the native fast path's test).
                #[doc(hidden)]
                #[inline]
                pub fn __jit_is_on() -> bool {
                    match __JIT_ON.with(#mj::warm::OnFlag::get) {
                        Some(on) => on,
                        None => with_driver(|d| d.is_on()),
                    }
                }
            });
        }
        // The jitcode-only run mode, with the native signature.
        let native_ret = inner_ty(&sig.ret);
        out.extend(quote! {
            /// Runs this function on its jitcode alone (no tracing); must agree with the native
            /// function.
            pub fn run_jitcode(#(#pnames: #orig_tys),*) -> #native_ret {
                let mut __jit_vals = Vec::new();
                #( #ll::JitType::to_values(#pnames, &mut __jit_vals); )*
                // SAFETY: the jitcode was generated by the codewriter from this very function,
                // which rustc type- and borrow-checked; the values are those of its arguments.
                let __jit_res = unsafe { #jc::runner::run(jitcode(), &__jit_vals) };
                // SAFETY: the result values are those the function's jitcode returns for a
                // result of type `#native_ret`.
                unsafe { <#native_ret as #ll::JitType>::from_values(&mut __jit_res.into_iter()) }
            }
        });
    } else {
        let effect = match policy {
            Policy::Elidable => quote!(Elidable),
            Policy::LoopInvariant => quote!(LoopInvariant),
            Policy::ResidualWritesNothing => quote!(ResidualWritesNothing),
            _ => quote!(Residual),
        };
        let native = &target.native;
        let abi_params: Vec<TokenStream> = ptys
            .iter()
            .zip(&spans)
            .map(|(t, &sp)| quote_spanned!(sp=> <#t as #ll::ShimArg>::Abi))
            .collect();
        let ret_sp = sig.ret.span();
        let abi_ret = quote_spanned!(ret_sp=> <#ret_static as #ll::ShimRet>::Abi);
        let kinds: Vec<TokenStream> = ptys
            .iter()
            .map(|t| quote!(<#t as #ll::ShimArg>::KIND))
            .collect();
        // Compiled code passes a call's arguments in registers only: too many is an error
        // here, at the function, not a trace that fails to compile when it reaches the call.
        let too_many = format!(
            "`{name_str}` takes more arguments than compiled code passes to a function it does \
             not look inside (at most 6 integers, references and pointers, and 8 floats): \
             pass some of them in a struct, by reference"
        );
        out.extend(quote_spanned! {sig.name.span()=>
            const _: () = ::std::assert!(#ll::shim_args_fit(&[#(#kinds),*]), #too_many);
        });
        out.extend(quote! {
            /// The `extern "C"` shim machine code calls.
            #[allow(improper_ctypes_definitions, clippy::all)]
            pub extern "C" fn __jit_shim(#(#pnames: #abi_params),*) -> #abi_ret {
                // SAFETY: jitcode calls the shim only with the ABI form of live values of the
                // parameter types (what the interpreter would pass to the function).
                let __jit_r = #native(#( unsafe { <#ptys as #ll::ShimArg>::from_abi(#pnames) } ),*);
                <#ret_static as #ll::ShimRet>::to_abi(__jit_r)
            }
            #[allow(clippy::all)]
            fn __jit_dynamic(__jit_args: &[#jc::Value]) -> Option<#jc::Value> {
                let mut __jit_it = __jit_args.iter().copied();
                #(
                    // SAFETY: as for the shim: the values are those of live arguments.
                    let #pnames = unsafe { <#ptys as #ll::JitType>::from_values(&mut __jit_it) };
                )*
                let __jit_r = #native(#(#pnames),*);
                let mut __jit_out = Vec::new();
                #ll::JitType::to_values(__jit_r, &mut __jit_out);
                __jit_out.into_iter().next()
            }
            /// The call descriptor.
            pub fn __jit_descr() -> &'static ::std::sync::Arc<#jc::CallDescr> {
                static DESCR: ::std::sync::OnceLock<::std::sync::Arc<#jc::CallDescr>> = ::std::sync::OnceLock::new();
                DESCR.get_or_init(|| {
                    #ll::call_descr(
                        #name_str,
                        vec![#(#kinds),*],
                        <#ret_static as #ll::ShimRet>::KIND,
                        #jc::Effect::#effect,
                        __jit_shim as usize,
                        __jit_dynamic,
                    )
                })
            }
            /// Lowered call: a `Call` op through the shim.
            pub fn __jit_call(__jit_b: &mut #jc::Builder, #(#pnames: #phandles),*) -> #rhandle {
                let mut __jit_args = Vec::new();
                #( #ll::arg_regs(__jit_b, &mut __jit_args, #pnames); )*
                #ll::emit_call(__jit_b, __jit_descr(), __jit_args)
            }
        });
        if policy == Policy::Elidable {
            out.extend(quote! {
                /// Lowered `record_known_result!(result, f, args...)`.
                pub fn __jit_known_result(__jit_b: &mut #jc::Builder, __jit_site: &'static #jc::HintSite, __jit_res: #rhandle, #(#pnames: #phandles),*) {
                    let mut __jit_args = Vec::new();
                    #( #ll::arg_regs(__jit_b, &mut __jit_args, #pnames); )*
                    let __jit_r = #ll::regs_of(__jit_b, __jit_res);
                    #ll::emit_known_result(__jit_b, __jit_descr(), __jit_r, __jit_args, __jit_site)
                }
            });
        }
    }
    Ok(out)
}

/// The name of the hidden module holding a method's companion.
pub fn method_module(ty: &Ident, m: &Ident) -> Ident {
    format_ident!("__jit_{}_{}", ty, m)
}
