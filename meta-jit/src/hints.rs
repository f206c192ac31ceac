//! The hints an interpreter author writes, as seen by the native interpreter.
//!
//! Owns: the attribute and derive macros (re-exported from `hints-macros`), the function-like
//! hint macros (`jit_merge_point!`, `can_enter_jit!`, `promote!`, `record_known_result!`,
//! `record_exact_value!`), `we_are_jitted()`, and checked mode: in debug builds and under
//! `cfg(test)` the claims of `record_known_result!` and `record_exact_value!` are verified
//! against the native computation; in release builds the hints expand to nothing.
//! Must not know: jitcode layout or any guest language. (The lowered forms of these hints are
//! produced by the codewriter and live in [`crate::lower`].)
//!
//! Use `use meta_jit::hints::*;` or `use meta_jit::hints as jit;` to write `#[jit::elidable]`.

pub use hints_macros::{
    dont_look_inside, elidable, interpreter, look_inside, loop_invariant, methods, unroll_safe,
    JitLayout, Trace,
};

pub use crate::gc::{Gc, Trace};
pub use crate::{can_enter_jit, jit_merge_point, promote, record_exact_value, record_known_result};

/// Whether the code runs as traced or compiled code. `false` in the native interpreter; jitcode
/// treats it as the constant `true` (RPython's `we_are_jitted`).
pub fn we_are_jitted() -> bool {
    false
}

/// The companion of [`we_are_jitted`]: in lowered code the call is the constant `true`.
#[doc(hidden)]
pub mod we_are_jitted {
    use crate::jitcode::Builder;
    use crate::lower::{konst, Reg};
    /// The lowered call.
    pub fn __jit_call(b: &mut Builder) -> Reg<bool> {
        konst(b, true)
    }
}

/// The head of the interpreter's dispatch loop, in the portal (`#[jit::interpreter]`). Natively a
/// no-op; in jitcode the merge point with the portal's greens and reds. It takes no arguments:
/// the greens and reds are declared once, in the portal's attribute.
#[macro_export]
macro_rules! jit_merge_point {
    () => {
        ()
    };
    ($($args:tt)+) => {
        ::core::compile_error!(
            "`jit_merge_point!` takes no arguments: declare the greens and reds once, in the portal's attribute (`#[jit::interpreter(greens(pc, code), reds(frame))]`), and write `jit_merge_point!()`"
        )
    };
}

/// A backward jump of the guest program (where hot loops are counted). Natively a no-op (in the
/// portal, a call of the JIT driver with the portal's greens and reds). It takes no arguments.
#[macro_export]
macro_rules! can_enter_jit {
    () => {
        ()
    };
    ($($args:tt)+) => {
        ::core::compile_error!(
            "`can_enter_jit!` takes no arguments: it uses the greens and reds declared in the portal's attribute (`#[jit::interpreter(greens(...), reds(...))]`); write `can_enter_jit!()`"
        )
    };
}

/// `promote!(x)`: in traced code, guard on `x`'s current value and treat it as a constant from
/// here on. Evaluates to `x`.
#[macro_export]
macro_rules! promote {
    ($x:expr) => {
        $x
    };
}

/// `record_known_result!(result, f, args...)`: tells the JIT that from here on the elidable call
/// `f(args...)` has the value `result`. In checked mode (debug builds, `cfg(test)`) calls
/// `f(args...)` and reports a violation (hint site, arguments, both values) if it differs,
/// comparing as [`HintValue`](crate::check::HintValue) says (floats by bits, references by
/// address). In other builds the check is compiled (so both builds accept the same code) but
/// never runs.
#[macro_export]
macro_rules! record_known_result {
    ($res:expr, $f:path $(, $arg:expr)* $(,)?) => {{
        if cfg!(any(debug_assertions, test)) {
            #[allow(unused_imports)]
            use $crate::check::__private::{Cmp as __JitCmp, ViaHintValue as _, ViaPartialEq as _};
            let __jit_actual = $f($($arg),*);
            let __jit_claimed = &$res;
            if !(&__JitCmp(__jit_claimed)).__jit_same(&__jit_actual) {
                $crate::check::report_violation($crate::check::Violation {
                    hint: "record_known_result!",
                    by: $crate::check::CheckedBy::Native,
                    file: file!(),
                    line: line!(),
                    column: column!(),
                    call: concat!(stringify!($f), "(", stringify!($($arg),*), ")").to_string(),
                    arguments: vec![$(format!("{} = {:?}", stringify!($arg), $arg)),*],
                    claimed: (&__JitCmp(__jit_claimed)).__jit_show(),
                    actual: (&__JitCmp(&__jit_actual)).__jit_show(),
                });
            }
        }
    }};
}

/// `record_exact_value!(v, c)`: tells the JIT that `v` equals the constant `c` (no guard): a
/// scalar, or a `&'static` reference, which `v` must then be (identity, as RPython allows for
/// objects). In checked mode verifies the claim, comparing as
/// [`HintValue`](crate::check::HintValue) says.
#[macro_export]
macro_rules! record_exact_value {
    ($v:expr, $c:expr $(,)?) => {{
        if cfg!(any(debug_assertions, test)) {
            #[allow(unused_imports)]
            use $crate::check::__private::{Cmp as __JitCmp, ViaHintValue as _, ViaPartialEq as _};
            let __jit_v = &$v;
            let __jit_c = &$c;
            if !(&__JitCmp(__jit_v)).__jit_same(__jit_c) {
                $crate::check::report_violation($crate::check::Violation {
                    hint: "record_exact_value!",
                    by: $crate::check::CheckedBy::Native,
                    file: file!(),
                    line: line!(),
                    column: column!(),
                    call: stringify!($v).to_string(),
                    arguments: vec![],
                    claimed: (&__JitCmp(__jit_c)).__jit_show(),
                    actual: (&__JitCmp(__jit_v)).__jit_show(),
                });
            }
        }
    }};
}
