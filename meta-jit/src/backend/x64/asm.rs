//! Instruction helpers over dynasmrt: one function per instruction shape, each choosing the
//! encoding from its operand kinds. The lowering says *what* to compute in terms of registers,
//! frame slots, immediates and pool constants; this module only knows how x86-64 spells it.

// The dynasm! macro converts dynamic register numbers with `.into()`, even from the `u8` it
// takes: the conversion it asks for is the identity here.
#![allow(clippy::useless_conversion)]

use dynasmrt::x64::X64Relocation;
use dynasmrt::{dynasm, DynamicLabel, DynasmApi, DynasmLabelApi, VecAssembler};

/// The assembler every lowering writes into. It produces position-independent code (internal
/// references are rip-relative; everything outside is an absolute address in a register).
pub(crate) type Asm = VecAssembler<X64Relocation>;

/// A general-purpose source operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// A register.
    R(u8),
    /// The qword at `[rbp + disp]` (a spill slot).
    M(i32),
    /// A sign-extended 32-bit immediate.
    I(i32),
    /// A 64-bit constant of the pool, rip-relative.
    P(DynamicLabel),
}

/// A float source operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum XSrc {
    /// An xmm register.
    X(u8),
    /// The qword at `[rbp + disp]`.
    M(i32),
    /// A pool constant.
    P(DynamicLabel),
}

/// A memory address `[base + index * scale + disp]`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    /// Base register.
    pub base: u8,
    /// Index register and scale (1, 2, 4 or 8).
    pub index: Option<(u8, u8)>,
    /// Displacement.
    pub disp: i32,
}

/// Two-operand integer instructions `dst op= src`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Alu {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Cmp,
    Imul,
    Test,
}

/// Two-operand SSE2 instructions on scalar doubles.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Sse {
    Add,
    Sub,
    Mul,
    Div,
    /// `ucomisd`: compares, sets ZF, PF, CF.
    Ucomi,
    /// `movsd` from a register or memory.
    Mov,
}

/// Condition codes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    O,
    No,
    B,
    Ae,
    E,
    Ne,
    Be,
    A,
    S,
    Ns,
    P,
    Np,
    L,
    Ge,
    Le,
    G,
}

impl Cond {
    /// The opposite condition.
    pub fn not(self) -> Cond {
        use Cond::*;
        match self {
            O => No,
            No => O,
            B => Ae,
            Ae => B,
            E => Ne,
            Ne => E,
            Be => A,
            A => Be,
            S => Ns,
            Ns => S,
            P => Np,
            Np => P,
            L => Ge,
            Ge => L,
            Le => G,
            G => Le,
        }
    }

    /// The condition with the operands of the comparison swapped (`a < b` iff `b > a`).
    pub fn swap(self) -> Cond {
        use Cond::*;
        match self {
            B => A,
            A => B,
            Ae => Be,
            Be => Ae,
            L => G,
            G => L,
            Le => Ge,
            Ge => Le,
            c => c,
        }
    }
}

macro_rules! x64 {
    ($a:expr ; $($t:tt)*) => { dynasm!($a ; .arch x64 ; $($t)*) };
}

/// Emits an instruction with a memory operand at `addr`: `$pre [addr] $post`.
macro_rules! at_addr {
    ($a:expr, $addr:expr, [$($pre:tt)*] [$($post:tt)*]) => {{
        let addr: Addr = $addr;
        let (b, d) = (addr.base, addr.disp);
        match addr.index {
            None => x64!($a ; $($pre)* [Rq(b) + d] $($post)*),
            Some((i, 1)) => x64!($a ; $($pre)* [Rq(b) + Rq(i) + d] $($post)*),
            Some((i, 2)) => x64!($a ; $($pre)* [Rq(b) + Rq(i) * 2 + d] $($post)*),
            Some((i, 4)) => x64!($a ; $($pre)* [Rq(b) + Rq(i) * 4 + d] $($post)*),
            Some((i, _)) => x64!($a ; $($pre)* [Rq(b) + Rq(i) * 8 + d] $($post)*),
        }
    }};
}

/// `mov dst, src` (64-bit). Does not touch the flags.
pub(crate) fn mov(a: &mut Asm, d: u8, s: Src) {
    match s {
        Src::R(r) if r == d => {}
        Src::R(r) => x64!(a ; mov Rq(d), Rq(r)),
        Src::M(m) => x64!(a ; mov Rq(d), QWORD [rbp + m]),
        Src::I(i) => mov_imm(a, d, i as i64 as u64),
        Src::P(l) => x64!(a ; mov Rq(d), QWORD [=>l]),
    }
}

/// `lea dst, [base + disp]`: `base + disp` in another register, in one instruction. Does not
/// touch the flags.
pub(crate) fn lea(a: &mut Asm, d: u8, base: u8, disp: i32) {
    x64!(a ; lea Rq(d), [Rq(base) + disp]);
}

/// `mov dst, imm` with the shortest encoding that keeps the flags.
pub(crate) fn mov_imm(a: &mut Asm, d: u8, v: u64) {
    if v <= u32::MAX as u64 {
        let v = v as u32 as i32;
        x64!(a ; mov Rd(d), DWORD v);
    } else if (v as i64) >= i32::MIN as i64 && (v as i64) < 0 {
        let v = v as i64 as i32;
        x64!(a ; mov Rq(d), DWORD v);
    } else {
        let v = v as i64;
        x64!(a ; mov Rq(d), QWORD v);
    }
}

/// `op dst, src` for the two-operand integer instructions.
pub(crate) fn alu(a: &mut Asm, op: Alu, d: u8, s: Src) {
    macro_rules! gen {
        ($mn:ident) => {
            match s {
                Src::R(r) => x64!(a ; $mn Rq(d), Rq(r)),
                Src::M(m) => x64!(a ; $mn Rq(d), QWORD [rbp + m]),
                Src::I(i) => x64!(a ; $mn Rq(d), DWORD i),
                Src::P(l) => x64!(a ; $mn Rq(d), QWORD [=>l]),
            }
        };
    }
    match op {
        Alu::Add => gen!(add),
        Alu::Sub => gen!(sub),
        Alu::And => gen!(and),
        Alu::Or => gen!(or),
        Alu::Xor => gen!(xor),
        Alu::Cmp => gen!(cmp),
        Alu::Test => match s {
            Src::R(r) => x64!(a ; test Rq(d), Rq(r)),
            Src::M(m) => x64!(a ; test QWORD [rbp + m], Rq(d)),
            Src::I(i) => x64!(a ; test Rq(d), DWORD i),
            Src::P(l) => x64!(a ; test QWORD [=>l], Rq(d)),
        },
        Alu::Imul => match s {
            Src::R(r) => x64!(a ; imul Rq(d), Rq(r)),
            Src::M(m) => x64!(a ; imul Rq(d), QWORD [rbp + m]),
            Src::I(i) => x64!(a ; imul Rq(d), Rq(d), DWORD i),
            Src::P(l) => x64!(a ; imul Rq(d), QWORD [=>l]),
        },
    }
}

/// `cmp qword [rbp + m], src` where src is a register or an immediate.
pub(crate) fn cmp_mem(a: &mut Asm, m: i32, s: Src) {
    match s {
        Src::R(r) => x64!(a ; cmp QWORD [rbp + m], Rq(r)),
        Src::I(i) => x64!(a ; cmp QWORD [rbp + m], DWORD i),
        _ => unreachable!("cmp_mem takes a register or an immediate"),
    }
}

/// `neg dst`.
pub(crate) fn neg(a: &mut Asm, d: u8) {
    x64!(a ; neg Rq(d));
}

/// `not dst`.
pub(crate) fn not(a: &mut Asm, d: u8) {
    x64!(a ; not Rq(d));
}

/// Shift kinds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shift {
    Shl,
    Sar,
    Shr,
}

/// `shift dst, cl` (the hardware masks the count by 63, as the IR defines it).
pub(crate) fn shift_cl(a: &mut Asm, k: Shift, d: u8) {
    match k {
        Shift::Shl => x64!(a ; shl Rq(d), cl),
        Shift::Sar => x64!(a ; sar Rq(d), cl),
        Shift::Shr => x64!(a ; shr Rq(d), cl),
    }
}

/// `shift dst, imm` (`imm` already masked by 63; 0 emits nothing).
pub(crate) fn shift_imm(a: &mut Asm, k: Shift, d: u8, n: u8) {
    if n == 0 {
        return;
    }
    let n = n as i8;
    match k {
        Shift::Shl => x64!(a ; shl Rq(d), BYTE n),
        Shift::Sar => x64!(a ; sar Rq(d), BYTE n),
        Shift::Shr => x64!(a ; shr Rq(d), BYTE n),
    }
}

/// Sign-extends the low `bytes` bytes of `s` into `d`.
pub(crate) fn signext(a: &mut Asm, d: u8, s: u8, bytes: u8) {
    match bytes {
        1 => x64!(a ; movsx Rq(d), Rb(s)),
        2 => x64!(a ; movsx Rq(d), Rw(s)),
        4 => x64!(a ; movsxd Rq(d), Rd(s)),
        _ => mov(a, d, Src::R(s)),
    }
}

/// `setcc dst8; movzx dst, dst8`: the condition as 0 or 1.
pub(crate) fn setcc(a: &mut Asm, c: Cond, d: u8) {
    match c {
        Cond::O => x64!(a ; seto Rb(d)),
        Cond::No => x64!(a ; setno Rb(d)),
        Cond::B => x64!(a ; setb Rb(d)),
        Cond::Ae => x64!(a ; setae Rb(d)),
        Cond::E => x64!(a ; sete Rb(d)),
        Cond::Ne => x64!(a ; setne Rb(d)),
        Cond::Be => x64!(a ; setbe Rb(d)),
        Cond::A => x64!(a ; seta Rb(d)),
        Cond::S => x64!(a ; sets Rb(d)),
        Cond::Ns => x64!(a ; setns Rb(d)),
        Cond::P => x64!(a ; setp Rb(d)),
        Cond::Np => x64!(a ; setnp Rb(d)),
        Cond::L => x64!(a ; setl Rb(d)),
        Cond::Ge => x64!(a ; setge Rb(d)),
        Cond::Le => x64!(a ; setle Rb(d)),
        Cond::G => x64!(a ; setg Rb(d)),
    }
}

/// `and d8, s8`.
pub(crate) fn and8(a: &mut Asm, d: u8, s: u8) {
    x64!(a ; and Rb(d), Rb(s));
}

/// `add d8, imm8`: the low byte of `d` only; the other bytes keep their value.
pub(crate) fn add8_imm(a: &mut Asm, d: u8, imm: i8) {
    x64!(a ; add Rb(d), BYTE imm);
}

/// `or d8, s8`.
pub(crate) fn or8(a: &mut Asm, d: u8, s: u8) {
    x64!(a ; or Rb(d), Rb(s));
}

/// `movzx dst, dst8`.
pub(crate) fn zext8(a: &mut Asm, d: u8) {
    x64!(a ; movzx Rd(d), Rb(d));
}

/// `jcc label`.
pub(crate) fn jcc(a: &mut Asm, c: Cond, l: DynamicLabel) {
    match c {
        Cond::O => x64!(a ; jo =>l),
        Cond::No => x64!(a ; jno =>l),
        Cond::B => x64!(a ; jb =>l),
        Cond::Ae => x64!(a ; jae =>l),
        Cond::E => x64!(a ; je =>l),
        Cond::Ne => x64!(a ; jne =>l),
        Cond::Be => x64!(a ; jbe =>l),
        Cond::A => x64!(a ; ja =>l),
        Cond::S => x64!(a ; js =>l),
        Cond::Ns => x64!(a ; jns =>l),
        Cond::P => x64!(a ; jp =>l),
        Cond::Np => x64!(a ; jnp =>l),
        Cond::L => x64!(a ; jl =>l),
        Cond::Ge => x64!(a ; jge =>l),
        Cond::Le => x64!(a ; jle =>l),
        Cond::G => x64!(a ; jg =>l),
    }
}

/// `jmp label`.
pub(crate) fn jmp(a: &mut Asm, l: DynamicLabel) {
    x64!(a ; jmp =>l);
}

/// Defines `l` here.
pub(crate) fn bind(a: &mut Asm, l: DynamicLabel) {
    x64!(a ; =>l);
}

/// Two-operand SSE2 scalar double instruction `op x, src`.
pub(crate) fn sse(a: &mut Asm, op: Sse, x: u8, s: XSrc) {
    macro_rules! gen {
        ($mn:ident) => {
            match s {
                XSrc::X(y) => x64!(a ; $mn Rx(x), Rx(y)),
                XSrc::M(m) => x64!(a ; $mn Rx(x), QWORD [rbp + m]),
                XSrc::P(l) => x64!(a ; $mn Rx(x), QWORD [=>l]),
            }
        };
    }
    match op {
        Sse::Add => gen!(addsd),
        Sse::Sub => gen!(subsd),
        Sse::Mul => gen!(mulsd),
        Sse::Div => gen!(divsd),
        Sse::Ucomi => gen!(ucomisd),
        Sse::Mov => match s {
            XSrc::X(y) if y == x => {}
            XSrc::X(y) => x64!(a ; movaps Rx(x), Rx(y)),
            XSrc::M(m) => x64!(a ; movsd Rx(x), QWORD [rbp + m]),
            XSrc::P(l) => x64!(a ; movsd Rx(x), QWORD [=>l]),
        },
    }
}

/// `xorps x, x`: zero, without touching the flags.
pub(crate) fn xorps(a: &mut Asm, x: u8) {
    x64!(a ; xorps Rx(x), Rx(x));
}

/// `xorpd x, y` on registers.
pub(crate) fn xorpd(a: &mut Asm, x: u8, y: u8) {
    x64!(a ; xorpd Rx(x), Rx(y));
}

/// `andpd x, y`.
pub(crate) fn andpd(a: &mut Asm, x: u8, y: u8) {
    x64!(a ; andpd Rx(x), Rx(y));
}

/// `movq x, r` (int bits into an xmm register).
pub(crate) fn movq_xr(a: &mut Asm, x: u8, r: u8) {
    x64!(a ; movq Rx(x), Rq(r));
}

/// `movq r, x`.
pub(crate) fn movq_rx(a: &mut Asm, r: u8, x: u8) {
    x64!(a ; movq Rq(r), Rx(x));
}

/// `cvttsd2si r, src`.
pub(crate) fn cvttsd2si(a: &mut Asm, r: u8, s: XSrc) {
    match s {
        XSrc::X(x) => x64!(a ; cvttsd2si Rq(r), Rx(x)),
        XSrc::M(m) => x64!(a ; cvttsd2si Rq(r), QWORD [rbp + m]),
        XSrc::P(l) => x64!(a ; cvttsd2si Rq(r), QWORD [=>l]),
    }
}

/// `cvtsi2sd x, src` (after clearing `x` to break the false dependency).
pub(crate) fn cvtsi2sd(a: &mut Asm, x: u8, s: Src) {
    x64!(a ; xorps Rx(x), Rx(x));
    match s {
        Src::R(r) => x64!(a ; cvtsi2sd Rx(x), Rq(r)),
        Src::M(m) => x64!(a ; cvtsi2sd Rx(x), QWORD [rbp + m]),
        Src::P(l) => x64!(a ; cvtsi2sd Rx(x), QWORD [=>l]),
        Src::I(_) => unreachable!("cvtsi2sd takes no immediate"),
    }
}

/// `movsd qword [rbp + m], x`.
pub(crate) fn store_x(a: &mut Asm, m: i32, x: u8) {
    x64!(a ; movsd QWORD [rbp + m], Rx(x));
}

/// `mov qword [rbp + m], r`.
pub(crate) fn store_r(a: &mut Asm, m: i32, r: u8) {
    x64!(a ; mov QWORD [rbp + m], Rq(r));
}

/// Stores a 64-bit constant at `[base + disp]` without using a register.
pub(crate) fn store_const(a: &mut Asm, base: u8, disp: i32, v: u64) {
    let vi = v as i64;
    if vi >= i32::MIN as i64 && vi <= i32::MAX as i64 {
        let v = vi as i32;
        x64!(a ; mov QWORD [Rq(base) + disp], DWORD v);
    } else {
        let (lo, hi) = (v as u32 as i32, (v >> 32) as u32 as i32);
        let d2 = disp + 4;
        x64!(a ; mov DWORD [Rq(base) + disp], DWORD lo ; mov DWORD [Rq(base) + d2], DWORD hi);
    }
}

/// `mov qword [base + disp], r`.
pub(crate) fn store_r_at(a: &mut Asm, base: u8, disp: i32, r: u8) {
    x64!(a ; mov QWORD [Rq(base) + disp], Rq(r));
}

/// `movsd qword [base + disp], x`.
pub(crate) fn store_x_at(a: &mut Asm, base: u8, disp: i32, x: u8) {
    x64!(a ; movsd QWORD [Rq(base) + disp], Rx(x));
}

/// `mov r, qword [base + disp]`.
pub(crate) fn load_r_at(a: &mut Asm, r: u8, base: u8, disp: i32) {
    x64!(a ; mov Rq(r), QWORD [Rq(base) + disp]);
}

/// `movsd x, qword [base + disp]`.
pub(crate) fn load_x_at(a: &mut Asm, x: u8, base: u8, disp: i32) {
    x64!(a ; movsd Rx(x), QWORD [Rq(base) + disp]);
}

/// Loads `size` bytes at `addr` into `d`, sign- or zero-extending to 64 bits.
pub(crate) fn load_int(a: &mut Asm, d: u8, addr: Addr, size: u8, signed: bool) {
    match (size, signed) {
        (1, false) => at_addr!(a, addr, [movzx Rq(d), BYTE] []),
        (1, true) => at_addr!(a, addr, [movsx Rq(d), BYTE] []),
        (2, false) => at_addr!(a, addr, [movzx Rq(d), WORD] []),
        (2, true) => at_addr!(a, addr, [movsx Rq(d), WORD] []),
        (4, false) => at_addr!(a, addr, [mov Rd(d), DWORD] []),
        (4, true) => at_addr!(a, addr, [movsxd Rq(d), DWORD] []),
        _ => at_addr!(a, addr, [mov Rq(d), QWORD] []),
    }
}

/// Loads a double at `addr` into `x`.
pub(crate) fn load_float(a: &mut Asm, x: u8, addr: Addr) {
    at_addr!(a, addr, [movsd Rx(x), QWORD] []);
}

/// Stores the low `size` bytes of `r` at `addr`.
pub(crate) fn store_int(a: &mut Asm, addr: Addr, size: u8, r: u8) {
    match size {
        1 => at_addr!(a, addr, [mov BYTE] [, Rb(r)]),
        2 => at_addr!(a, addr, [mov WORD] [, Rw(r)]),
        4 => at_addr!(a, addr, [mov DWORD] [, Rd(r)]),
        _ => at_addr!(a, addr, [mov QWORD] [, Rq(r)]),
    }
}

/// Stores the low `size` bytes of an immediate at `addr` (for 8 bytes, a sign-extended
/// 32-bit immediate).
pub(crate) fn store_imm(a: &mut Asm, addr: Addr, size: u8, v: i32) {
    match size {
        1 => {
            let v = v as i8;
            at_addr!(a, addr, [mov BYTE] [, BYTE v])
        }
        2 => {
            let v = v as i16;
            at_addr!(a, addr, [mov WORD] [, WORD v])
        }
        4 => at_addr!(a, addr, [mov DWORD] [, DWORD v]),
        _ => at_addr!(a, addr, [mov QWORD] [, DWORD v]),
    }
}

/// Stores a double from `x` at `addr`.
pub(crate) fn store_float(a: &mut Asm, addr: Addr, x: u8) {
    at_addr!(a, addr, [movsd QWORD] [, Rx(x)]);
}

/// `call r`.
pub(crate) fn call_r(a: &mut Asm, r: u8) {
    x64!(a ; call Rq(r));
}

/// `jmp r`.
pub(crate) fn jmp_r(a: &mut Asm, r: u8) {
    x64!(a ; jmp Rq(r));
}

/// `jmp qword [r]`: to the address held in the word `r` points at.
pub(crate) fn jmp_at(a: &mut Asm, r: u8) {
    x64!(a ; jmp QWORD [Rq(r)]);
}

/// `cqo; idiv src` (src a register or a slot).
pub(crate) fn cqo_idiv(a: &mut Asm, s: Src) {
    match s {
        Src::R(r) => x64!(a ; cqo ; idiv Rq(r)),
        Src::M(m) => x64!(a ; cqo ; idiv QWORD [rbp + m]),
        _ => unreachable!("idiv takes a register or memory"),
    }
}

/// `cmovs d, s` (registers).
pub(crate) fn cmovs(a: &mut Asm, d: u8, s: u8) {
    x64!(a ; cmovs Rq(d), Rq(s));
}

/// `cmovg d, s` (`greater`) or `cmovl d, s` (otherwise), registers.
pub(crate) fn cmov_gl(a: &mut Asm, greater: bool, d: u8, s: u8) {
    if greater {
        x64!(a ; cmovg Rq(d), Rq(s));
    } else {
        x64!(a ; cmovl Rq(d), Rq(s));
    }
}

/// `xor edx, edx ; div s`: rax = rdx:rax / s, rdx = the remainder, unsigned.
pub(crate) fn xor_div(a: &mut Asm, s: Src) {
    match s {
        Src::R(r) => x64!(a ; xor edx, edx ; div Rq(r)),
        Src::M(m) => x64!(a ; xor edx, edx ; div QWORD [rbp + m]),
        _ => unreachable!("div takes a register or memory"),
    }
}

/// `imul s` (one operand): rdx:rax = rax * s, signed.
pub(crate) fn imul1(a: &mut Asm, s: Src) {
    match s {
        Src::R(r) => x64!(a ; imul Rq(r)),
        Src::M(m) => x64!(a ; imul QWORD [rbp + m]),
        _ => unreachable!("imul takes a register or memory"),
    }
}

/// `mul s`: rdx:rax = rax * s, unsigned.
pub(crate) fn mul(a: &mut Asm, s: Src) {
    match s {
        Src::R(r) => x64!(a ; mul Rq(r)),
        Src::M(m) => x64!(a ; mul QWORD [rbp + m]),
        _ => unreachable!("mul takes a register or memory"),
    }
}

/// `sub qword [base + disp], 1`.
pub(crate) fn dec_mem(a: &mut Asm, base: u8, disp: i32) {
    x64!(a ; sub QWORD [Rq(base) + disp], BYTE 1);
}

/// `cmp qword [base], 0`.
pub(crate) fn cmp_mem0(a: &mut Asm, base: u8) {
    x64!(a ; cmp QWORD [Rq(base)], BYTE 0);
}

/// The trace prologue: saves rbp and the callee-saved registers and keeps the deadframe
/// pointer (rdi) at `[rbp - 48]`.
pub(crate) fn prologue(a: &mut Asm) {
    x64!(a
        ; push rbp
        ; mov rbp, rsp
        ; push rbx
        ; push r12
        ; push r13
        ; push r14
        ; push r15
        ; push rdi
    );
}

/// The epilogue: restores what the prologue saved and returns (rax holds the exit code).
pub(crate) fn epilogue(a: &mut Asm) {
    x64!(a
        ; lea rsp, [rbp - 40]
        ; pop r15
        ; pop r14
        ; pop r13
        ; pop r12
        ; pop rbx
        ; pop rbp
        ; ret
    );
}

/// `lea rsp, [rbp - disp32]` with a 32-bit displacement to patch later; returns the offset of
/// the displacement in the code.
pub(crate) fn set_rsp_placeholder(a: &mut Asm) -> usize {
    let placeholder: i32 = -0x7fff_0000;
    x64!(a ; lea rsp, [rbp + placeholder]);
    a.offset().0 - 4
}

/// Emits 8 bytes of data, 8-aligned, at a new label.
pub(crate) fn data_u64(a: &mut Asm, l: DynamicLabel, v: u64) {
    x64!(a ; =>l ; .u64 v);
}

/// Aligns the code to 8 bytes (with int3 padding in unreachable places).
pub(crate) fn align8(a: &mut Asm) {
    x64!(a ; .align 8, 0xcc);
}

#[cfg(test)]
#[path = "asm_tests.rs"]
mod tests;
