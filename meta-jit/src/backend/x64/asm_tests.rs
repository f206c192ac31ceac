//! Tests of the instruction helpers: the encodings of dynamic registers, checked by decoding
//! them again (byte registers of rsi/rdi/r8.. need a REX prefix, r12/r13 as a base need a SIB
//! byte or a displacement), and immediates.

use super::*;
use crate::backend::disasm::instructions;

const NAMES: [&str; 16] = [
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15",
];
const DWORD: [&str; 16] = [
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d",
    "r13d", "r14d", "r15d",
];
const BYTE: [&str; 16] = [
    "al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b",
    "r13b", "r14b", "r15b",
];

fn one(f: impl FnOnce(&mut Asm)) -> String {
    let mut a = Asm::new(0);
    f(&mut a);
    let code = a.finalize().unwrap();
    let ins = instructions(&code);
    assert_eq!(ins.len(), 1, "{ins:?}");
    ins[0].clone()
}

#[test]
fn dynamic_registers_encode_as_named() {
    for r in 0..16u8 {
        if r == 4 {
            continue;
        }
        assert_eq!(
            one(|a| setcc(a, Cond::L, r)),
            format!("setl {}", BYTE[r as usize])
        );
        assert_eq!(
            one(|a| add8_imm(a, r, -1)),
            format!("add {},0FFh", BYTE[r as usize])
        );
        assert_eq!(
            one(|a| lea(a, r, 13, -9)),
            format!("lea {},[r13-9]", NAMES[r as usize])
        );
        assert_eq!(
            one(|a| zext8(a, r)),
            format!("movzx {},{}", DWORD[r as usize], BYTE[r as usize])
        );
        for b in [0u8, 3, 5, 7, 11, 12, 13, 15] {
            let addr = Addr {
                base: b,
                index: None,
                disp: 16,
            };
            let s = one(|a| load_int(a, r, addr, 8, false));
            assert_eq!(
                s,
                format!("mov {},[{}+10h]", NAMES[r as usize], NAMES[b as usize])
            );
            let addr = Addr {
                base: b,
                index: Some((r, 4)),
                disp: -8,
            };
            if r != 4 {
                let s = one(|a| store_int(a, addr, 1, r));
                assert_eq!(
                    s,
                    format!(
                        "mov [{}+{}*4-8],{}",
                        NAMES[b as usize], NAMES[r as usize], BYTE[r as usize]
                    )
                );
            }
        }
    }
}

#[test]
fn immediates_keep_their_value() {
    assert_eq!(
        one(|a| mov_imm(a, 3, u32::MAX as u64)),
        "mov ebx,0FFFFFFFFh"
    );
    assert_eq!(
        one(|a| mov_imm(a, 12, (-5i64) as u64)),
        "mov r12,0FFFFFFFFFFFFFFFBh"
    );
    assert_eq!(
        one(|a| mov_imm(a, 6, 0x1234_5678_9abc)),
        "mov rsi,123456789ABCh"
    );
    assert_eq!(
        one(|a| alu(a, Alu::Cmp, 13, Src::I(-1))),
        "cmp r13,0FFFFFFFFFFFFFFFFh"
    );
    assert_eq!(one(|a| alu(a, Alu::Imul, 8, Src::I(3))), "imul r8,3");
}

#[test]
fn far_jumps_in_reach_become_direct() {
    use crate::backend::x64::patch_far_jumps;
    let seq = |to: u64| {
        let mut a = Asm::new(0);
        mov_imm(&mut a, 11, to);
        jmp_r(&mut a, 11);
        a.finalize().unwrap()
    };
    // Placed at 0x1000, a jump to 0x800: `jmp rel32` to 0x800, then a `nop` over the rest.
    let mut code = seq(0x800);
    patch_far_jumps(0x1000, &mut code, &[(0, 0x800)]);
    let ins = instructions(&code);
    assert_eq!(ins.len(), 2, "{ins:?}");
    assert!(ins[0].starts_with("jmp ") && ins[1].starts_with("nop"), "{ins:?}");
    let rel = i32::from_le_bytes(code[1..5].try_into().unwrap());
    assert_eq!(0x1000 + 5 + rel as i64, 0x800);
    // A 64-bit target, also in reach.
    let far = 0x7f00_0000_1000u64;
    let mut code = seq(far);
    patch_far_jumps(far as usize + 0x40, &mut code, &[(0, far)]);
    assert_eq!(code[0], 0xE9);
    let rel = i32::from_le_bytes(code[1..5].try_into().unwrap());
    assert_eq!(far as i64 + 0x40 + 5 + rel as i64, far as i64);
    // Out of reach: left as it is.
    let mut code = seq(far);
    let before = code.clone();
    patch_far_jumps(0x1000, &mut code, &[(0, far)]);
    assert_eq!(code, before);
}
