//! The opcode table: every trace operation is declared exactly once here, with its doc, its text
//! name, its argument types, its result type and its flags. Everything else (printer, parser,
//! verifier, optimizer, backend) asks this table for those. A few groupings are hand-written
//! lists of opcodes that must be kept in step with it: [`Opcode::is_comparison`],
//! [`Opcode::is_call`], [`Opcode::is_input`] and [`Opcode::is_ovf`] below, and the loads and
//! allocations `opt::dce` may remove.

use super::Type;

/// What an opcode's arguments look like.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Args {
    /// Exactly these types.
    Fixed(&'static [Type]),
    /// Any number of values of any type (calls, `jump`, `finish`, `label`, ...).
    Variadic,
}

/// Properties of an opcode the optimizer and backend rely on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    /// No special property.
    pub const NONE: Flags = Flags(0);
    /// The result depends only on the arguments, and the op has no effect: it may be folded,
    /// CSE'd and removed when unused.
    pub const PURE: Flags = Flags(1);
    /// A guard: it carries resume data and exits the trace when its condition fails.
    pub const GUARD: Flags = Flags(2);
    /// It takes a descriptor (`descr=...`).
    pub const DESCR: Flags = Flags(8);
    /// It ends the trace (`jump`, `finish`).
    pub const FINAL: Flags = Flags(16);
    /// Its arguments commute (`int_add(a, b) == int_add(b, a)`).
    pub const COMMUTATIVE: Flags = Flags(32);

    /// Both sets of flags.
    pub const fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

macro_rules! opcodes {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:literal ($($args:tt)*) -> $res:ident $(, $flag:ident)*;
    )*) => {
        /// A trace operation. See the book's "The trace IR" for the semantics of each.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Opcode {
            /// Every opcode, in declaration order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant),*];

            /// The name in the text form.
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$variant => $name,)* }
            }

            /// The opcode with that text name.
            pub fn from_name(name: &str) -> Option<Opcode> {
                match name { $($name => Some(Opcode::$variant),)* _ => None }
            }

            /// The type of the value the op defines (`Type::Void` when it defines none).
            pub fn result(self) -> Type {
                match self { $(Opcode::$variant => Type::$res,)* }
            }

            /// The argument types.
            pub fn args(self) -> Args {
                match self { $(Opcode::$variant => opcodes!(@args $($args)*),)* }
            }

            /// The op's flags.
            pub fn flags(self) -> Flags {
                match self { $(Opcode::$variant => Flags::NONE $(.with(Flags::$flag))*,)* }
            }
        }
    };
    (@args ..) => { Args::Variadic };
    (@args $($t:ident),*) => { Args::Fixed(&[$(Type::$t),*]) };
}

opcodes! {
    /// An input of the trace (inputs come first; the text form lists them in the header).
    InputI "input_i" () -> Int;
    /// A float input.
    InputF "input_f" () -> Float;
    /// A reference input.
    InputR "input_r" () -> Ref;

    /// `a + b`, wrapping.
    IntAdd "int_add" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// `a - b`, wrapping.
    IntSub "int_sub" (Int, Int) -> Int, PURE;
    /// `a * b`, wrapping.
    IntMul "int_mul" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// `a / b` rounded toward zero (Rust's `wrapping_div`); `b == 0` gives 0.
    IntFloorDiv "int_floordiv" (Int, Int) -> Int, PURE;
    /// `a % b` with the sign of `a` (Rust's `wrapping_rem`); `b == 0` gives 0.
    IntMod "int_mod" (Int, Int) -> Int, PURE;
    /// Unsigned `a / b` (both read as `u64`); `b == 0` gives 0.
    UintFloorDiv "uint_floordiv" (Int, Int) -> Int, PURE;
    /// Unsigned `a % b`; `b == 0` gives 0.
    UintMod "uint_mod" (Int, Int) -> Int, PURE;
    /// The high 64 bits of the 128-bit unsigned product `a * b` (0 exactly when the unsigned
    /// multiplication does not overflow).
    UintMulHigh "uint_mul_high" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// Signed `min(a, b)`.
    IntMin "int_min" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// Signed `max(a, b)`.
    IntMax "int_max" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// Bitwise and.
    IntAnd "int_and" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// Bitwise or.
    IntOr "int_or" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// Bitwise exclusive or.
    IntXor "int_xor" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// `a << (b & 63)`.
    IntLshift "int_lshift" (Int, Int) -> Int, PURE;
    /// Arithmetic `a >> (b & 63)`.
    IntRshift "int_rshift" (Int, Int) -> Int, PURE;
    /// Logical `a >> (b & 63)`.
    UintRshift "uint_rshift" (Int, Int) -> Int, PURE;
    /// `-a`, wrapping.
    IntNeg "int_neg" (Int) -> Int, PURE;
    /// `!a` (bitwise not).
    IntInvert "int_invert" (Int) -> Int, PURE;
    /// Sign-extends the low `b` bytes of `a` (`b` is the constant 1, 2, 4 or 8).
    IntSignext "int_signext" (Int, Int) -> Int, PURE;
    /// `a == 0` as 0 or 1.
    IntIsZero "int_is_zero" (Int) -> Int, PURE;
    /// `a != 0` as 0 or 1.
    IntIsTrue "int_is_true" (Int) -> Int, PURE;
    /// Signed `a < b` as 0 or 1.
    IntLt "int_lt" (Int, Int) -> Int, PURE;
    /// Signed `a <= b`.
    IntLe "int_le" (Int, Int) -> Int, PURE;
    /// `a == b`.
    IntEq "int_eq" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// `a != b`.
    IntNe "int_ne" (Int, Int) -> Int, PURE, COMMUTATIVE;
    /// Signed `a > b`.
    IntGt "int_gt" (Int, Int) -> Int, PURE;
    /// Signed `a >= b`.
    IntGe "int_ge" (Int, Int) -> Int, PURE;
    /// Unsigned `a < b`.
    UintLt "uint_lt" (Int, Int) -> Int, PURE;
    /// Unsigned `a <= b`.
    UintLe "uint_le" (Int, Int) -> Int, PURE;
    /// Unsigned `a > b`.
    UintGt "uint_gt" (Int, Int) -> Int, PURE;
    /// Unsigned `a >= b`.
    UintGe "uint_ge" (Int, Int) -> Int, PURE;
    /// `a + b`, wrapping, and sets the overflow flag that the next op (a `guard_no_overflow` or
    /// `guard_overflow`) must test.
    IntAddOvf "int_add_ovf" (Int, Int) -> Int, COMMUTATIVE;
    /// `a - b` with the overflow flag.
    IntSubOvf "int_sub_ovf" (Int, Int) -> Int;
    /// `a * b` with the overflow flag.
    IntMulOvf "int_mul_ovf" (Int, Int) -> Int, COMMUTATIVE;

    /// `a + b`.
    FloatAdd "float_add" (Float, Float) -> Float, PURE;
    /// `a - b`.
    FloatSub "float_sub" (Float, Float) -> Float, PURE;
    /// `a * b`.
    FloatMul "float_mul" (Float, Float) -> Float, PURE;
    /// `a / b`.
    FloatTrueDiv "float_truediv" (Float, Float) -> Float, PURE;
    /// Rust's `a % b` (C's `fmod`: the sign of `a`), with the NaN rule of the other float
    /// arithmetic.
    FloatMod "float_mod" (Float, Float) -> Float, PURE;
    /// `-a` (flips the sign bit).
    FloatNeg "float_neg" (Float) -> Float, PURE;
    /// `|a|` (clears the sign bit).
    FloatAbs "float_abs" (Float) -> Float, PURE;
    /// `a < b` as 0 or 1 (false when either is NaN).
    FloatLt "float_lt" (Float, Float) -> Int, PURE;
    /// `a <= b`.
    FloatLe "float_le" (Float, Float) -> Int, PURE;
    /// `a == b` (false when either is NaN).
    FloatEq "float_eq" (Float, Float) -> Int, PURE, COMMUTATIVE;
    /// `a != b` (true when either is NaN).
    FloatNe "float_ne" (Float, Float) -> Int, PURE, COMMUTATIVE;
    /// `a > b`.
    FloatGt "float_gt" (Float, Float) -> Int, PURE;
    /// `a >= b`.
    FloatGe "float_ge" (Float, Float) -> Int, PURE;
    /// Rust's `a as i64`: truncates toward zero, saturates, NaN gives 0.
    CastFloatToInt "cast_float_to_int" (Float) -> Int, PURE;
    /// Rust's `a as f64`.
    CastIntToFloat "cast_int_to_float" (Int) -> Float, PURE;
    /// Rust's `a as u64`: truncates toward zero, saturates at 0 and `u64::MAX`, NaN gives 0.
    CastFloatToUint "cast_float_to_uint" (Float) -> Int, PURE;
    /// Rust's `(a as u64) as f64` (round to nearest).
    CastUintToFloat "cast_uint_to_float" (Int) -> Float, PURE;
    /// The bits of a float as an integer.
    FloatToBits "float_to_bits" (Float) -> Int, PURE;
    /// The float with these bits.
    FloatFromBits "float_from_bits" (Int) -> Float, PURE;

    /// Pointer identity.
    PtrEq "ptr_eq" (Ref, Ref) -> Int, PURE, COMMUTATIVE;
    /// Pointer difference.
    PtrNe "ptr_ne" (Ref, Ref) -> Int, PURE, COMMUTATIVE;
    /// The address of a reference as an integer.
    CastPtrToInt "cast_ptr_to_int" (Ref) -> Int, PURE;
    /// The reference at an integer address.
    CastIntToPtr "cast_int_to_ptr" (Int) -> Ref, PURE;
    /// The same int value (a fresh name for it; used where a value must be an op).
    SameAsI "same_as_i" (Int) -> Int, PURE;
    /// The same float value.
    SameAsF "same_as_f" (Float) -> Float, PURE;
    /// The same reference.
    SameAsR "same_as_r" (Ref) -> Ref, PURE;

    /// Loads an int field of `p` (field descriptor: offset, size, signedness).
    GetfieldI "getfield_i" (Ref) -> Int, DESCR;
    /// Loads a float field.
    GetfieldF "getfield_f" (Ref) -> Float, DESCR;
    /// Loads a reference field.
    GetfieldR "getfield_r" (Ref) -> Ref, DESCR;
    /// Stores `v` into a field of `p`; `v`'s type is the descriptor's kind.
    Setfield "setfield" (Ref, Any) -> Void, DESCR;
    /// Loads item `i` of the array at `p` (array descriptor: base offset, item size, signedness).
    GetarrayitemI "getarrayitem_i" (Ref, Int) -> Int, DESCR;
    /// Loads a float item.
    GetarrayitemF "getarrayitem_f" (Ref, Int) -> Float, DESCR;
    /// Loads a reference item.
    GetarrayitemR "getarrayitem_r" (Ref, Int) -> Ref, DESCR;
    /// Stores `v` as item `i` of the array at `p`.
    Setarrayitem "setarrayitem" (Ref, Int, Any) -> Void, DESCR;
    /// Allocates a zeroed struct (size descriptor: size and alignment).
    New "new" () -> Ref, DESCR;
    /// Allocates a zeroed array of `n` items (array descriptor).
    NewArray "new_array" (Int) -> Ref, DESCR;
    /// Marks a read of a quasi-immutable field of `p`: code that folded it must be invalidated
    /// when the field is written. No effect when executed.
    QuasiimmutField "quasiimmut_field" (Ref) -> Void, DESCR;

    /// Calls the function (first argument) with the rest; returns an int.
    CallI "call_i" (..) -> Int, DESCR;
    /// A call returning a float.
    CallF "call_f" (..) -> Float, DESCR;
    /// A call returning a reference.
    CallR "call_r" (..) -> Ref, DESCR;
    /// A call returning nothing.
    CallN "call_n" (..) -> Void, DESCR;
    /// A call of an elidable function: pure, so folded, CSE'd and removed like a pure op.
    CallPureI "call_pure_i" (..) -> Int, DESCR, PURE;
    /// An elidable call returning a float.
    CallPureF "call_pure_f" (..) -> Float, DESCR, PURE;
    /// An elidable call returning a reference.
    CallPureR "call_pure_r" (..) -> Ref, DESCR, PURE;
    /// A call of another trace's compiled code (RPython's `call_assembler`): a recursive
    /// portal call whose callee runs its function-entry trace and returns its result. The
    /// first argument is the runtime's entry helper, the second the callee's entry (both
    /// constants), the rest the callee's reds at its entry; executed as a residual call of
    /// the helper with the rest (so it may do anything). Returns an int.
    CallAssemblerI "call_assembler_i" (..) -> Int, DESCR;
    /// A `call_assembler` returning a reference.
    CallAssemblerR "call_assembler_r" (..) -> Ref, DESCR;
    /// A `call_assembler` whose callee returns nothing.
    CallAssemblerN "call_assembler_n" (..) -> Void, DESCR;

    /// Exits unless `a` is non-zero.
    GuardTrue "guard_true" (Int) -> Void, GUARD;
    /// Exits unless `a` is zero.
    GuardFalse "guard_false" (Int) -> Void, GUARD;
    /// Exits unless `a` equals the constant `c`.
    GuardValue "guard_value" (Any, Any) -> Void, GUARD;
    /// Exits if `p` is null.
    GuardNonnull "guard_nonnull" (Ref) -> Void, GUARD;
    /// Exits unless `p` is null.
    GuardIsnull "guard_isnull" (Ref) -> Void, GUARD;
    /// Exits if the op just before (an `*_ovf` op) overflowed.
    GuardNoOverflow "guard_no_overflow" () -> Void, GUARD;
    /// Exits unless the op just before overflowed.
    GuardOverflow "guard_overflow" () -> Void, GUARD;
    /// Exits if this compiled code was invalidated (a quasi-immutable field was written).
    GuardNotInvalidated "guard_not_invalidated" () -> Void, GUARD;

    /// `record_known_result(res, f, args...)`: from here on, `f(args...)` is `res`. Consumed by
    /// the optimizer; no effect when executed.
    RecordKnownResult "record_known_result" (..) -> Void, DESCR;
    /// `record_exact_value(v, c)`: `v` equals the constant `c`. Consumed by the optimizer.
    RecordExactValue "record_exact_value" (Any, Any) -> Void;

    /// The loop header: `jump`s without a target descriptor come back here, assigning their
    /// arguments to the label's arguments.
    Label "label" (..) -> Void;
    /// Goes to this trace's label (or its start when it has none), or to another trace's
    /// entry named by the descriptor.
    Jump "jump" (..) -> Void, FINAL;
    /// Leaves the trace with these values.
    Finish "finish" (..) -> Void, FINAL;
}

impl Opcode {
    /// Whether this op is a guard.
    pub fn is_guard(self) -> bool {
        self.flags().has(Flags::GUARD)
    }

    /// Whether this op is pure: foldable, CSE-able, removable when unused.
    pub fn is_pure(self) -> bool {
        self.flags().has(Flags::PURE)
    }

    /// Whether this op is a comparison: its result is 0 or 1.
    pub fn is_comparison(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            IntLt
                | IntLe
                | IntEq
                | IntNe
                | IntGt
                | IntGe
                | UintLt
                | UintLe
                | UintGt
                | UintGe
                | IntIsZero
                | IntIsTrue
                | FloatLt
                | FloatLe
                | FloatEq
                | FloatNe
                | FloatGt
                | FloatGe
                | PtrEq
                | PtrNe
        )
    }

    /// The integer comparison that is true exactly when this one is false (float comparisons
    /// have none: NaN makes both false).
    pub fn negated(self) -> Option<Opcode> {
        use Opcode::*;
        Some(match self {
            IntLt => IntGe,
            IntGe => IntLt,
            IntLe => IntGt,
            IntGt => IntLe,
            UintLt => UintGe,
            UintGe => UintLt,
            UintLe => UintGt,
            UintGt => UintLe,
            IntEq => IntNe,
            IntNe => IntEq,
            PtrEq => PtrNe,
            PtrNe => PtrEq,
            _ => return None,
        })
    }

    /// Whether this op is a call (residual, elidable or `call_assembler`).
    pub fn is_call(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            CallI
                | CallF
                | CallR
                | CallN
                | CallPureI
                | CallPureF
                | CallPureR
                | CallAssemblerI
                | CallAssemblerR
                | CallAssemblerN
        )
    }

    /// The `call_assembler` opcode returning `ty` (`None` for a float: the entry helper
    /// returns its result in an integer register).
    pub fn call_assembler(ty: Type) -> Option<Opcode> {
        match ty {
            Type::Int => Some(Opcode::CallAssemblerI),
            Type::Ref => Some(Opcode::CallAssemblerR),
            Type::Void => Some(Opcode::CallAssemblerN),
            _ => None,
        }
    }

    /// Whether this op loads a field or an array item (not a quasi-immutable field's check).
    pub fn is_load(self) -> bool {
        use Opcode::*;
        matches!(
            self,
            GetfieldI | GetfieldF | GetfieldR | GetarrayitemI | GetarrayitemF | GetarrayitemR
        )
    }

    /// Whether this op is a trace input.
    pub fn is_input(self) -> bool {
        matches!(self, Opcode::InputI | Opcode::InputF | Opcode::InputR)
    }

    /// Whether this op is one of the overflow-checked arithmetic ops.
    pub fn is_ovf(self) -> bool {
        matches!(
            self,
            Opcode::IntAddOvf | Opcode::IntSubOvf | Opcode::IntMulOvf
        )
    }

    /// The input opcode for a type.
    pub fn input(ty: Type) -> Opcode {
        match ty {
            Type::Int => Opcode::InputI,
            Type::Float => Opcode::InputF,
            _ => Opcode::InputR,
        }
    }

    /// The `same_as` opcode for a type.
    pub fn same_as(ty: Type) -> Opcode {
        match ty {
            Type::Int => Opcode::SameAsI,
            Type::Float => Opcode::SameAsF,
            _ => Opcode::SameAsR,
        }
    }

    /// The residual call opcode returning `ty`.
    pub fn call(ty: Type) -> Opcode {
        match ty {
            Type::Int => Opcode::CallI,
            Type::Float => Opcode::CallF,
            Type::Ref => Opcode::CallR,
            _ => Opcode::CallN,
        }
    }

    /// The elidable call opcode returning `ty` (`None` for `Void`: an elidable call whose
    /// result is unused does nothing).
    pub fn call_pure(ty: Type) -> Option<Opcode> {
        match ty {
            Type::Int => Some(Opcode::CallPureI),
            Type::Float => Some(Opcode::CallPureF),
            Type::Ref => Some(Opcode::CallPureR),
            _ => None,
        }
    }

    /// The field load returning `ty`.
    pub fn getfield(ty: Type) -> Opcode {
        match ty {
            Type::Int => Opcode::GetfieldI,
            Type::Float => Opcode::GetfieldF,
            _ => Opcode::GetfieldR,
        }
    }

    /// The array load returning `ty`.
    pub fn getarrayitem(ty: Type) -> Opcode {
        match ty {
            Type::Int => Opcode::GetarrayitemI,
            Type::Float => Opcode::GetarrayitemF,
            _ => Opcode::GetarrayitemR,
        }
    }
}
