//! Hints checked by compiled code (the JIT parameter `check_hints=1`): before each
//! `record_known_result!` and `record_exact_value!` it records, the tracer records a residual
//! call of [`check_hint`], which, every time compiled code passes there, calls the elidable
//! function (or takes the value) and compares, exactly as the tracer itself did
//! ([`crate::jitcode::hintcheck`]), and reports a violation at the hint's source location.
//!
//! The call passes the site (an index into a registry of checked sites), the claimed value and
//! up to [`MAX_ARGS`] arguments, each as 64 bits (floats by their bits, references by address):
//! six integer registers. The arguments of a hint with more go first, five at a time, to a
//! per-thread stash by calls of [`stash_args`] just before the check (compiled code runs on
//! the thread that compiled it, and the calls are ordered).
//!
//! Owns: that call and the registry. Must not know: the optimizer (the call is an ordinary
//! residual call, which also means it keeps the optimizer from caching memory across it: the
//! mode is for finding wrong hints, not for speed), machine code, or any guest language.
#![deny(unsafe_code)]

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

use super::record::Tv;
use super::Tracer;
use crate::check::CheckedBy;
use crate::ir::{Op as IrOp, Opcode, Type};
use crate::jitcode::{hintcheck, CallDescr, Effect, HintSite, Kind, Value};

/// The arguments of a `record_known_result!` that the check call takes in registers (the rest
/// go through the stash).
pub const MAX_ARGS: usize = 4;

/// Arguments stashed per [`stash_args`] call.
const STASHED: usize = 5;

thread_local! {
    /// The arguments past the first [`MAX_ARGS`] of the hint about to be checked.
    static STASH: RefCell<Vec<i64>> = const { RefCell::new(Vec::new()) };
}

/// Called by compiled code before [`check_hint`] for a hint with more than [`MAX_ARGS`]
/// arguments: keeps five of them, from position `at` of the stash.
extern "C" fn stash_args(at: i64, a0: i64, a1: i64, a2: i64, a3: i64, a4: i64) {
    STASH.with(|s| {
        let mut s = s.borrow_mut();
        let at = at as usize;
        if s.len() < at + STASHED {
            s.resize(at + STASHED, 0);
        }
        s[at..at + STASHED].copy_from_slice(&[a0, a1, a2, a3, a4]);
    });
}

fn stash_args_dynamic(args: &[Value]) -> Option<Value> {
    let b: Vec<i64> = args.iter().map(|v| v.int()).collect();
    stash_args(b[0], b[1], b[2], b[3], b[4], b[5]);
    None
}

fn stash_descr() -> &'static CallDescr {
    static DESCR: OnceLock<CallDescr> = OnceLock::new();
    DESCR.get_or_init(|| CallDescr {
        name: "meta_jit::stash_hint_args",
        arg_kinds: vec![Kind::Int; 1 + STASHED],
        result_kind: None,
        effect: Effect::Residual,
        shim: stash_args as extern "C" fn(i64, i64, i64, i64, i64, i64) as usize,
        dynamic: stash_args_dynamic,
    })
}

/// Which hint to check.
pub(super) enum HintCheck<'a> {
    /// `record_known_result!` of this elidable function.
    KnownResult(&'a Arc<CallDescr>),
    /// `record_exact_value!`.
    ExactValue,
}

/// What compiled code needs to check one hint site.
struct SiteCheck {
    site: &'static HintSite,
    /// The elidable function (`None`: `record_exact_value!`).
    descr: Option<Arc<CallDescr>>,
    /// The kinds of the claimed value, then of each argument.
    kinds: Vec<Kind>,
}

fn registry() -> &'static Mutex<Vec<SiteCheck>> {
    static SITES: OnceLock<Mutex<Vec<SiteCheck>>> = OnceLock::new();
    SITES.get_or_init(|| Mutex::new(Vec::new()))
}

/// The index of a site in the registry, added on first use.
fn register(site: &'static HintSite, descr: Option<&Arc<CallDescr>>, kinds: Vec<Kind>) -> i64 {
    let mut sites = registry().lock().unwrap_or_else(|e| e.into_inner());
    let found = sites.iter().position(|s| {
        std::ptr::eq(s.site, site)
            && s.kinds == kinds
            && s.descr.as_ref().map(|d| d.shim) == descr.map(|d| d.shim)
    });
    let index = found.unwrap_or_else(|| {
        sites.push(SiteCheck {
            site,
            descr: descr.cloned(),
            kinds,
        });
        sites.len() - 1
    });
    index as i64
}

fn value(kind: Kind, bits: i64) -> Value {
    match kind {
        Kind::Int => Value::Int(bits),
        Kind::Float => Value::Float(f64::from_bits(bits as u64)),
        Kind::Ref => Value::Ref(bits as usize),
    }
}

/// Called by compiled code: checks the hint of registry entry `site` on the claimed value and
/// arguments (as bits). Inside [`crate::check::violations_of`] a violation is collected and the
/// code runs on; otherwise it is printed and the process aborts (a panic cannot unwind out of
/// compiled code).
extern "C" fn check_hint(site: i64, claimed: i64, a0: i64, a1: i64, a2: i64, a3: i64) {
    let (s, descr, kinds) = {
        let sites = registry().lock().unwrap_or_else(|e| e.into_inner());
        let c = &sites[site as usize];
        (c.site, c.descr.clone(), c.kinds.clone())
    };
    let mut raw = vec![claimed, a0, a1, a2, a3];
    if kinds.len() > raw.len() {
        let more = kinds.len() - raw.len();
        STASH.with(|s| raw.extend_from_slice(&s.borrow()[..more]));
    }
    let vals: Vec<Value> = kinds.iter().zip(raw).map(|(&k, b)| value(k, b)).collect();
    let checked = catch_unwind(AssertUnwindSafe(|| match &descr {
        Some(d) => hintcheck::known_result(CheckedBy::Compiled, s, d, vals[0], &vals[1..]),
        None => hintcheck::exact_value(CheckedBy::Compiled, s, vals[0], vals[1]),
    }));
    if checked.is_err() {
        // The panic hook has printed the violation.
        std::process::abort();
    }
}

fn check_hint_dynamic(args: &[Value]) -> Option<Value> {
    let b: Vec<i64> = args.iter().map(|v| v.int()).collect();
    check_hint(b[0], b[1], b[2], b[3], b[4], b[5]);
    None
}

fn check_descr() -> &'static CallDescr {
    static DESCR: OnceLock<CallDescr> = OnceLock::new();
    DESCR.get_or_init(|| CallDescr {
        name: "meta_jit::check_hint",
        arg_kinds: vec![Kind::Int; 2 + MAX_ARGS],
        result_kind: None,
        effect: Effect::Residual,
        shim: check_hint as extern "C" fn(i64, i64, i64, i64, i64, i64) as usize,
        dynamic: check_hint_dynamic,
    })
}

impl Tracer<'_> {
    /// Records the call that makes compiled code check this hint (see the module doc).
    /// `uses`: the claimed value, then the arguments (`record_known_result!`) or the constant
    /// (`record_exact_value!`).
    pub(super) fn compiled_hint_check(
        &mut self,
        which: HintCheck<'_>,
        site: &'static HintSite,
        uses: &[Tv],
    ) {
        let descr = match which {
            HintCheck::KnownResult(d) => Some(d),
            HintCheck::ExactValue => None,
        };
        let kinds: Vec<Kind> = uses.iter().map(|u| kind_of(u.1)).collect();
        let index = register(site, descr, kinds);
        let mut bits = Vec::with_capacity(uses.len());
        for &u in uses {
            bits.push(match kind_of(u.1) {
                Kind::Int => u,
                Kind::Float => self.pure(Opcode::FloatToBits, &[u]),
                Kind::Ref => self.pure(Opcode::CastPtrToInt, &[u]),
            });
        }
        // The claimed value and the first arguments in registers, the rest stashed first.
        let rest = bits.split_off(bits.len().min(1 + MAX_ARGS));
        for (k, chunk) in rest.chunks(STASHED).enumerate() {
            let at = self.int((k * STASHED) as i64);
            self.void_call(stash_descr(), at, chunk);
        }
        let site = self.int(index);
        self.void_call(check_descr(), site, &bits);
    }

    /// Records a call of `descr` with `first`, then `rest`, then zeros up to its arity.
    fn void_call(&mut self, descr: &'static CallDescr, first: Tv, rest: &[Tv]) {
        let mut args = vec![first];
        args.extend_from_slice(rest);
        while args.len() < descr.arg_kinds.len() {
            args.push(self.int(0));
        }
        let (fun, d) = self.call_descr(descr);
        let mut refs = vec![fun];
        refs.extend(args.iter().map(|a| a.0));
        self.trace
            .push(IrOp::new(Opcode::call(Type::Void), &refs).with_descr(d));
    }
}

fn kind_of(v: crate::ir::Value) -> Kind {
    match v {
        crate::ir::Value::Int(_) => Kind::Int,
        crate::ir::Value::Float(_) => Kind::Float,
        crate::ir::Value::Ref(_) => Kind::Ref,
    }
}
