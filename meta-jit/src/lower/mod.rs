//! The typed layer between the code the hint macros generate and the jitcode [`Builder`]: typed
//! register handles and the generic functions each lowered Rust construct calls.
//!
//! Owns: the mapping from Rust types to registers and ops. The macros lower *syntax* only (an
//! `a + b` becomes `ops::add(b, a, b, cfg!(debug_assertions))`, the last argument saying whether
//! overflow is checked); rustc's inference picks the handle types, and the trait bounds on these
//! functions decide which op is emitted or, for an unsupported type, produce a compile error at
//! the user's expression (see the `#[diagnostic::on_unimplemented]` notes).
//! Must not know: Rust syntax, how jitcode executes, or any guest language.
//!
//! The handles:
//! - [`Reg<T>`]: a scalar `T` (integer, `bool`, `char`, `f64`) in one register;
//! - [`Ptr<T>`]: a reference `&T`/`&mut T`, and also a *place* of type `T` (an address plus a
//!   static byte offset and an optional scaled index), so that field paths and array elements
//!   cost no ops until a scalar is loaded;
//! - [`SliceRef<T>`]: a slice reference `&[T]` (data pointer and length);
//! - [`Val<T>`]: a `Copy` struct or enum held by value (its tag and fields' registers);
//! - [`OptionH<T>`] and [`ResultH<T, E>`]: `Option` and `Result` of scalars (a tag register and
//!   the payloads'), and [`OptGc<T>`]: an `Option<Gc<T>>` (one reference register, null for
//!   `None`);
//! - a tuple: the tuple of its elements' handles (see [`mod@tuple`]);
//! - `()`: no registers.

pub mod builtin;
pub mod builtin_ops;
pub mod calls;
pub mod cell;
pub mod control;
pub mod nullable;
pub mod objects;
pub mod ops;
pub mod place;
pub mod sum;
pub mod sum_mem;
pub mod tuple;
pub mod types;
pub mod value;

use std::marker::PhantomData;

use crate::jitcode::{Builder, Kind, Op, Register};

pub use calls::{
    arg_regs, call_descr, emit_call, emit_inline_call, emit_known_result, shim_args_fit,
};
pub use cell::cell_new;
pub use control::*;
pub use nullable::{none, some, OptGc};
pub use objects::{gc_new, gc_ptr_eq, gc_value, init_field};
pub use ops::*;
pub use place::*;
pub use sum::{err, ok, try_continue, try_output, try_residual, OptionH, ResultH};
pub use types::{load_scalar, store_scalar, JitType, Scalar, ShimArg, ShimRet, Stored};
pub use value::{const_value, ctor, ctor_field, JitValue, RegPlace, Val};

/// A register holding a scalar of type `T` (the typed register handle of the design).
pub struct Reg<T> {
    /// The register.
    pub reg: Register,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Reg<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Reg<T> {}

impl<T> Reg<T> {
    /// Wraps a register (of the kind `T` maps to).
    pub fn new(reg: Register) -> Reg<T> {
        Reg {
            reg,
            _t: PhantomData,
        }
    }
}

/// A reference to, or a place of, a `T`: `base + index * item_size + offset`.
pub struct Ptr<T: ?Sized> {
    /// Register holding the base address.
    pub base: Register,
    /// Optional index register and item size (an array element).
    pub index: Option<(Register, usize)>,
    /// Constant byte offset.
    pub offset: usize,
    /// The last field projected to reach this place (for descriptors), or "".
    pub field: &'static str,
    /// Flags of that field.
    pub flags: FieldFlags,
    /// How the codewriter reached the place, for its alias class.
    pub origin: Origin,
    _t: PhantomData<fn() -> *const T>,
}

/// How the codewriter reached a place: what decides its alias class ([`place::alias_class`],
/// the rule in `ir::may_alias`).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub enum Origin {
    /// Through a reference whose origin it cannot see (an argument, a loaded reference or
    /// slice): the place may be any location holding its type.
    #[default]
    Unseen,
    /// The field (the second name) of a struct or enum payload (the first name, a type name).
    /// A field is reached only through its struct, wherever the struct lives.
    Field(&'static str, &'static str),
    /// An item (at any depth) of the array field (the second name) of a struct (the first).
    Items(&'static str, &'static str),
    /// An item of the buffer of a `Vec` whose owner it did not see (one reached through a
    /// reference): the items of any `Vec` of the type. The items of a `Vec` field are
    /// [`Origin::Items`] of the field: a `Vec` owns its buffer.
    VecItems,
    /// The payload of an enum (the type name) that lies at a place reached as [`Within`] says.
    Payload(&'static str, Within),
}

/// Where an enum lies whose payload is reached ([`Origin::Payload`]): an [`Origin`] without
/// payloads (an enum inside another's payload is [`Within::Unseen`], which aliases every
/// place of its type: one level is kept).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub enum Within {
    /// Unseen, or inside another enum's payload.
    #[default]
    Unseen,
    /// The field of a struct.
    Field(&'static str, &'static str),
    /// An item of an array or `Vec` field of a struct.
    Items(&'static str, &'static str),
    /// An item of a `Vec` whose owner was not seen.
    VecItems,
}

impl Origin {
    /// Where a place of this origin lies, for an enum there ([`Origin::Payload`]).
    pub fn within(self) -> Within {
        match self {
            Origin::Unseen | Origin::Payload(..) => Within::Unseen,
            Origin::Field(s, f) => Within::Field(s, f),
            Origin::Items(s, f) => Within::Items(s, f),
            Origin::VecItems => Within::VecItems,
        }
    }

    /// The access path of a place of this origin, as alias classes name it (`S.f`,
    /// `S.f.items`, `Vec.items`, `E.payload` or `E.payload@WHERE`); None if unseen.
    pub fn path(self) -> Option<String> {
        match self {
            Origin::Unseen => None,
            Origin::Field(s, f) => Some(format!("{s}.{f}")),
            Origin::Items(s, f) => Some(format!("{s}.{f}.items")),
            Origin::VecItems => Some(crate::ir::ANY_VEC_ITEMS.to_string()),
            Origin::Payload(e, w) => {
                let pay = format!("{e}.{}", crate::ir::PAYLOAD_FIELD);
                Some(match Origin::from(w).path() {
                    Some(at) => format!("{pay}@{at}"),
                    None => pay,
                })
            }
        }
    }
}

impl From<Within> for Origin {
    fn from(w: Within) -> Origin {
        match w {
            Within::Unseen => Origin::Unseen,
            Within::Field(s, f) => Origin::Field(s, f),
            Within::Items(s, f) => Origin::Items(s, f),
            Within::VecItems => Origin::VecItems,
        }
    }
}

impl<T: ?Sized> Clone for Ptr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?Sized> Copy for Ptr<T> {}

/// What the layout derive says about a field (`#[jit(immutable)]`, `#[jit(quasi_immutable)]`,
/// `#[jit(immutable_items)]`), and what a place inherits from the place it was reached from.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct FieldFlags {
    /// Never written after construction.
    pub immutable: bool,
    /// Rarely written; writes invalidate compiled code.
    pub quasi_immutable: bool,
    /// The field is a `Vec`, array or slice whose items are never written (RPython's `x[*]`).
    pub immutable_items: bool,
    /// The place lies inside an immutable item: everything in it is immutable too.
    pub deep: bool,
    /// Only the framework's own projections reach the place (a `Vec`'s pointer or length):
    /// its alias class is its name, not its type.
    pub private: bool,
    /// `#[jit(virtualizable)]`: the field (or, for an array or `Vec` field, its items) belongs
    /// to the interpreter's frame, whose stores compiled code keeps in registers until it
    /// exits (see `crate::opt::vable`).
    pub vable: bool,
    /// The place is a `Vec`'s length and its items are not zero-sized: the length lies in
    /// `[0, ir::LENGTH_MAX]` (see `ir::FieldDescr::length`).
    pub length: bool,
}

impl<T: ?Sized> Ptr<T> {
    /// A plain reference held in `base`.
    pub fn new(base: Register) -> Ptr<T> {
        Ptr {
            base,
            index: None,
            offset: 0,
            field: "",
            flags: FieldFlags::default(),
            origin: Origin::Unseen,
            _t: PhantomData,
        }
    }
    /// The same place seen as another type (used by projections).
    pub fn cast<U: ?Sized>(self) -> Ptr<U> {
        Ptr {
            base: self.base,
            index: self.index,
            offset: self.offset,
            field: self.field,
            flags: self.flags,
            origin: self.origin,
            _t: PhantomData,
        }
    }
    /// A register holding the address of this place (emits `RefAddr` unless it is plain).
    pub fn materialize(self, b: &mut Builder) -> Register {
        if self.index.is_none() && self.offset == 0 {
            return self.base;
        }
        let dst = b.fresh(Kind::Ref);
        b.emit(Op::RefAddr {
            dst,
            base: self.base,
            index: self.index,
            offset: self.offset,
        });
        dst
    }
}

/// A slice reference `&[T]` / `&mut [T]`: data pointer and length.
pub struct SliceRef<T> {
    /// Register holding the data pointer.
    pub ptr: Register,
    /// Int register holding the length.
    pub len: Register,
    _t: PhantomData<fn() -> T>,
}
impl<T> Clone for SliceRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SliceRef<T> {}
impl<T> SliceRef<T> {
    /// Wraps two registers.
    pub fn new(ptr: Register, len: Register) -> SliceRef<T> {
        SliceRef {
            ptr,
            len,
            _t: PhantomData,
        }
    }
}

/// What the lowered code can hold in variables: a handle made of registers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value traced code can hold in registers",
    note = "traced code holds integers, `bool`, `char`, `f64`, references and slices in registers"
)]
pub trait Handle: Copy {
    /// Registers of the value's kinds, freshly allocated.
    fn fresh(b: &mut Builder) -> Self;
    /// Emits moves of `src` into this handle's registers (which must be fresh ones).
    fn assign(self, b: &mut Builder, src: Self);
    /// The registers holding the value (materializing interior addresses).
    fn regs(self, b: &mut Builder) -> Vec<Register>;
    /// The kinds of [`Handle::regs`].
    fn kinds() -> Vec<Kind>;
    /// A handle over the next registers of `regs`.
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self;
    /// This handle, with what `from` knows statically of where it points (a reference's
    /// [`Origin`] and the place's [`FieldFlags`]); for a variable that always holds `from`'s
    /// value.
    fn with_origin_of(self, _from: Self) -> Self {
        self
    }
}

impl Handle for () {
    fn fresh(_: &mut Builder) {}
    fn assign(self, _: &mut Builder, _: ()) {}
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        vec![]
    }
    fn kinds() -> Vec<Kind> {
        vec![]
    }
    fn from_regs(_: &mut dyn Iterator<Item = Register>) {}
}

impl<T: Scalar> Handle for Reg<T> {
    fn fresh(b: &mut Builder) -> Self {
        Reg::new(b.fresh(T::KIND))
    }
    fn assign(self, b: &mut Builder, src: Self) {
        if self.reg != src.reg {
            b.emit(Op::Move {
                dst: self.reg,
                src: src.reg,
            });
        }
    }
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        vec![self.reg]
    }
    fn kinds() -> Vec<Kind> {
        vec![T::KIND]
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        Reg::new(regs.next().expect("missing register"))
    }
}

impl<T: ?Sized> Handle for Ptr<T> {
    fn fresh(b: &mut Builder) -> Self {
        Ptr::new(b.fresh(Kind::Ref))
    }
    fn assign(self, b: &mut Builder, src: Self) {
        assert!(
            self.index.is_none() && self.offset == 0,
            "assignment to an interior place"
        );
        let r = src.materialize(b);
        if r != self.base {
            b.emit(Op::Move {
                dst: self.base,
                src: r,
            });
        }
    }
    fn regs(self, b: &mut Builder) -> Vec<Register> {
        vec![self.materialize(b)]
    }
    fn kinds() -> Vec<Kind> {
        vec![Kind::Ref]
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        Ptr::new(regs.next().expect("missing register"))
    }
    fn with_origin_of(self, from: Self) -> Self {
        // The variable points where `from` points, always: the same place, now at the address
        // in its own register. What the layout says of that place (an immutable field, the
        // items of an immutable array, their insides) still holds, so a read through the
        // variable of a constant place folds as a read through `from` would.
        Ptr {
            origin: from.origin,
            flags: from.flags,
            field: from.field,
            ..self
        }
    }
}

impl<T> Handle for SliceRef<T> {
    fn fresh(b: &mut Builder) -> Self {
        SliceRef::new(b.fresh(Kind::Ref), b.fresh(Kind::Int))
    }
    fn assign(self, b: &mut Builder, src: Self) {
        b.emit(Op::Move {
            dst: self.ptr,
            src: src.ptr,
        });
        b.emit(Op::Move {
            dst: self.len,
            src: src.len,
        });
    }
    fn regs(self, _: &mut Builder) -> Vec<Register> {
        vec![self.ptr, self.len]
    }
    fn kinds() -> Vec<Kind> {
        vec![Kind::Ref, Kind::Int]
    }
    fn from_regs(regs: &mut dyn Iterator<Item = Register>) -> Self {
        SliceRef::new(
            regs.next().expect("missing register"),
            regs.next().expect("missing register"),
        )
    }
}

/// `let name = value;`: copies the value into fresh registers named `name` (a variable keeps its
/// own registers, so later assignments to other variables cannot change it).
pub fn bind<H: Handle>(b: &mut Builder, name: &str, value: H) -> H {
    let h = H::fresh(b);
    h.assign(b, value);
    for r in h.regs(b) {
        b.set_name(r, name);
    }
    h
}

/// `let name = value;` for a binding that is never reassigned (not `mut`): like [`bind`], and a
/// reference keeps the access path the codewriter saw ([`Origin`]) and what the layout says
/// of the place ([`FieldFlags`]: `match &table[i] { E::A(x) => *x }` on an immutable array
/// reads `*x` as immutable too), which the variable holds for as long as it lives. (A `mut` variable may be given another place: [`bind`] forgets.)
pub fn bind_fixed<H: Handle>(b: &mut Builder, name: &str, value: H) -> H {
    bind(b, name, value).with_origin_of(value)
}

/// A function argument: fresh argument registers named `name`.
pub fn arg<H: Handle>(b: &mut Builder, name: &str) -> H {
    let regs: Vec<Register> = H::kinds().into_iter().map(|k| b.arg(k)).collect();
    for &r in &regs {
        b.set_name(r, name);
    }
    H::from_regs(&mut regs.into_iter())
}

/// `x = value;` for a variable `x`.
pub fn assign<H: Handle>(b: &mut Builder, var: H, value: H) {
    var.assign(b, value);
}

/// Returns `value` from the function being built.
pub fn ret<H: Handle>(b: &mut Builder, value: H) {
    let values = value.regs(b);
    b.emit(Op::Return { values });
}
