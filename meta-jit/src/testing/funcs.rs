//! Real `extern "C"` functions that generated traces call, with their call descriptors' effects
//! ([`FUNCS`]). Elidable ones: [`neg`] (its own inverse), [`lower`] and [`wabs`] (idempotent),
//! [`mix`], [`fsq`], [`scale`] (mixed int and float arguments) and [`imm_of`] (reads only an
//! immutable field). Residual ones with declared effects: [`set_a64`] (writes one field),
//! [`read_obj`] and [`next_of`] (read only), [`hash`] (touches no memory), [`mess`] (anything)
//! and [`mess_arr`] (writes array items).
//!
//! Each keeps the contract of [`crate::call`], and the ones that touch memory keep the heap's
//! invariant (see [`super::heap`]): `next` stays a live object, `imm` is never written. The
//! declared effects are true: a function reads and writes no location outside its sets.
//!
//! Each is `#[inline(never)]`: the text form names a function by its address, and Rust does not
//! promise one address per function. An optimized build made a local copy of `neg` in another
//! codegen unit, so a trace built with one address printed `ConstFn(neg)` and parsed back with
//! the other (the long run's one failure).

use super::heap::{Descrs, Obj, A64, ARR_LEN, IMM, NEXT};
use crate::ir::parse::Env;
use crate::ir::{Access, Effects, Type};

/// `-x`, wrapping: elidable, and its own inverse.
#[inline(never)]
pub extern "C" fn neg(x: i64) -> i64 {
    x.wrapping_neg()
}

/// Clears bit 5 of every byte (ASCII upper-casing of letters): elidable and idempotent.
#[inline(never)]
pub extern "C" fn lower(x: i64) -> i64 {
    x & !0x2020_2020_2020_2020
}

/// `|x|`, wrapping (`i64::MIN` stays itself): elidable and idempotent.
#[inline(never)]
pub extern "C" fn wabs(x: i64) -> i64 {
    x.wrapping_abs()
}

/// A two-argument elidable function.
#[inline(never)]
pub extern "C" fn mix(a: i64, b: i64) -> i64 {
    a.wrapping_mul(31) ^ b.rotate_left(7)
}

/// `x * x` on floats: elidable.
#[inline(never)]
pub extern "C" fn fsq(x: f64) -> f64 {
    x * x
}

/// `x as f64 * f`: elidable, with an integer and a float argument.
#[inline(never)]
pub extern "C" fn scale(x: i64, f: f64) -> f64 {
    x as f64 * f
}

/// The immutable field of `p`: elidable.
///
/// # Safety
/// `p` must point to a live [`Obj`].
#[inline(never)]
pub unsafe extern "C" fn imm_of(p: *const Obj) -> i64 {
    // SAFETY: the caller's contract.
    unsafe { (*p).imm }
}

/// Writes `p.a64 = v`; reads nothing.
///
/// # Safety
/// `p` must point to a live [`Obj`].
#[inline(never)]
pub unsafe extern "C" fn set_a64(p: *mut Obj, v: i64) {
    // SAFETY: the caller's contract.
    unsafe { (*p).a64 = v }
}

/// A sum of `a8`, `b16`, `a32` and `a64` of `p`; writes nothing.
///
/// # Safety
/// `p` must point to a live [`Obj`].
#[inline(never)]
pub unsafe extern "C" fn read_obj(p: *const Obj) -> i64 {
    // SAFETY: the caller's contract.
    unsafe {
        ((*p).a8 as i64)
            .wrapping_add((*p).b16 as i64 * 3)
            .wrapping_add((*p).a32 as i64 * 5)
            .wrapping_add((*p).a64.wrapping_mul(7))
    }
}

/// `p.next`; writes nothing.
///
/// # Safety
/// `p` must point to a live [`Obj`].
#[inline(never)]
pub unsafe extern "C" fn next_of(p: *const Obj) -> *mut Obj {
    // SAFETY: the caller's contract.
    unsafe { (*p).next }
}

/// A hash of `x`: a residual call (not elidable) that touches no memory.
#[inline(never)]
pub extern "C" fn hash(x: i64) -> i64 {
    (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64)
}

/// Does "anything" to the objects it reaches from `p`: writes several fields of `p` and of
/// `p.next`, and unlinks `p.next` (`p.next = p.next.next`). Returns a value read after that.
///
/// # Safety
/// `p` must point to a live [`Obj`] whose `next` points to a live [`Obj`] whose `next` does too.
#[inline(never)]
pub unsafe extern "C" fn mess(p: *mut Obj, x: i64) -> i64 {
    // SAFETY: the caller's contract; `p` and `q` may be the same object, which raw pointers
    // allow.
    unsafe {
        let q = (*p).next;
        (*p).a8 = x as i8;
        (*p).b32 = (*p).b32.wrapping_add(x as u32);
        (*p).f += 1.0;
        (*q).a64 = (*q).a64.wrapping_add(x);
        (*q).b8 ^= 0x5a;
        (*p).next = (*q).next;
        (*p).a64.wrapping_add((*q).b16 as i64)
    }
}

/// Bumps item `x & 15` of an int array and stores `x` into item `(x >> 4) & 15`.
///
/// # Safety
/// `a` must point to a live array of at least [`ARR_LEN`] `i64`s.
#[inline(never)]
pub unsafe extern "C" fn mess_arr(a: *mut i64, x: i64) {
    let i = (x & 15) as usize;
    let j = ((x >> 4) & 15) as usize;
    debug_assert!(i < ARR_LEN && j < ARR_LEN);
    // SAFETY: the caller's contract; both indices are below `ARR_LEN`.
    unsafe {
        *a.add(i) = (*a.add(i)).wrapping_add(1);
        *a.add(j) = x;
    }
}

/// A test function: its name in the text form, address, signature and effects.
#[derive(Copy, Clone)]
pub struct Func {
    /// `ConstFn(name)`; its call descriptor is `name_d`.
    pub name: &'static str,
    /// Its address.
    pub addr: fn() -> usize,
    /// Argument kinds.
    pub args: &'static [Type],
    /// Result kind.
    pub ret: Type,
    /// Its effects, in terms of a trace's descriptors.
    pub effects: fn(&Descrs) -> Effects,
}

impl std::fmt::Debug for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

fn elidable_pure(_: &Descrs) -> Effects {
    Effects {
        elidable: true,
        reads: Access::Nothing,
        writes: Access::Nothing,
        can_invalidate: false,
        loop_invariant: false,
    }
}

/// Index in [`FUNCS`] of [`neg`].
pub const NEG: usize = 0;
/// Index of [`lower`].
pub const LOWER: usize = 1;
/// Index of [`wabs`].
pub const WABS: usize = 2;
/// Index of [`mix`].
pub const MIX: usize = 3;
/// Index of [`fsq`].
pub const FSQ: usize = 4;
/// Index of [`scale`].
pub const SCALE: usize = 5;
/// Index of [`imm_of`].
pub const IMM_OF: usize = 6;
/// Index of [`set_a64`].
pub const SET_A64: usize = 7;
/// Index of [`read_obj`].
pub const READ_OBJ: usize = 8;
/// Index of [`next_of`].
pub const NEXT_OF: usize = 9;
/// Index of [`hash`].
pub const HASH: usize = 10;
/// Index of [`mess`].
pub const MESS: usize = 11;
/// Index of [`mess_arr`].
pub const MESS_ARR: usize = 12;
/// The elidable functions, by index in [`FUNCS`].
pub const ELIDABLE: [usize; 7] = [NEG, LOWER, WABS, MIX, FSQ, SCALE, IMM_OF];
/// The residual functions, by index in [`FUNCS`].
pub const RESIDUAL: [usize; 6] = [SET_A64, READ_OBJ, NEXT_OF, HASH, MESS, MESS_ARR];

use Type::{Float as F, Int as I, Ref as R};

/// Every test function. Generated traces name them `ConstFn(name)` with descriptor `name_d`.
pub const FUNCS: [Func; 13] = [
    Func {
        name: "neg",
        addr: || neg as extern "C" fn(i64) -> i64 as usize,
        args: &[I],
        ret: I,
        effects: elidable_pure,
    },
    Func {
        name: "lower",
        addr: || lower as extern "C" fn(i64) -> i64 as usize,
        args: &[I],
        ret: I,
        effects: elidable_pure,
    },
    Func {
        name: "wabs",
        addr: || wabs as extern "C" fn(i64) -> i64 as usize,
        args: &[I],
        ret: I,
        effects: elidable_pure,
    },
    Func {
        name: "mix",
        addr: || mix as extern "C" fn(i64, i64) -> i64 as usize,
        args: &[I, I],
        ret: I,
        effects: elidable_pure,
    },
    Func {
        name: "fsq",
        addr: || fsq as extern "C" fn(f64) -> f64 as usize,
        args: &[F],
        ret: F,
        effects: elidable_pure,
    },
    Func {
        name: "scale",
        addr: || scale as extern "C" fn(i64, f64) -> f64 as usize,
        args: &[I, F],
        ret: F,
        effects: elidable_pure,
    },
    Func {
        name: "imm_of",
        addr: || imm_of as unsafe extern "C" fn(*const Obj) -> i64 as usize,
        args: &[R],
        ret: I,
        effects: |d| Effects {
            elidable: true,
            reads: d.access(&[IMM]),
            writes: Access::Nothing,
            can_invalidate: false,
            loop_invariant: false,
        },
    },
    Func {
        name: "set_a64",
        addr: || set_a64 as unsafe extern "C" fn(*mut Obj, i64) as usize,
        args: &[R, I],
        ret: Type::Void,
        effects: |d| Effects {
            elidable: false,
            reads: Access::Nothing,
            writes: d.access(&[A64]),
            can_invalidate: false,
            loop_invariant: false,
        },
    },
    Func {
        name: "read_obj",
        addr: || read_obj as unsafe extern "C" fn(*const Obj) -> i64 as usize,
        args: &[R],
        ret: I,
        effects: |d| Effects {
            elidable: false,
            reads: d.access(&[0, 3, 4, A64]),
            writes: Access::Nothing,
            can_invalidate: false,
            loop_invariant: false,
        },
    },
    Func {
        name: "next_of",
        addr: || next_of as unsafe extern "C" fn(*const Obj) -> *mut Obj as usize,
        args: &[R],
        ret: R,
        effects: |d| Effects {
            elidable: false,
            reads: d.access(&[NEXT]),
            writes: Access::Nothing,
            can_invalidate: false,
            loop_invariant: false,
        },
    },
    Func {
        name: "hash",
        addr: || hash as extern "C" fn(i64) -> i64 as usize,
        args: &[I],
        ret: I,
        effects: Descrs::no_effects,
    },
    Func {
        name: "mess",
        addr: || mess as unsafe extern "C" fn(*mut Obj, i64) -> i64 as usize,
        args: &[R, I],
        ret: I,
        effects: |_| Effects::anything(),
    },
    Func {
        name: "mess_arr",
        addr: || mess_arr as unsafe extern "C" fn(*mut i64, i64) as usize,
        args: &[R, I],
        ret: Type::Void,
        effects: |d| Effects {
            elidable: false,
            reads: Access::Descrs(vec![d.arr]),
            writes: Access::Descrs(vec![d.arr]),
            can_invalidate: false,
            loop_invariant: false,
        },
    },
];

/// A parser environment that knows every test function, for reading generated traces back.
pub fn env() -> Env {
    FUNCS
        .iter()
        .fold(Env::new(), |e, f| e.func(f.name, (f.addr)()))
}
