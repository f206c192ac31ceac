//! Disassembly of compiled code with iced-x86 (Intel syntax), for the JIT log and tests: each
//! section (an IR op, an exit stub, the epilogue) is headed by a comment line, and the constant
//! pool is listed as data.

use iced_x86::{Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter};
use std::fmt::Write;

/// Lists `code` with offsets from its start (branch targets too): `sections` are `(offset, heading)` in increasing offset
/// order; bytes from `data_from` on are data (8-byte words).
pub(crate) fn listing(code: &[u8], sections: &[(usize, String)], data_from: usize) -> String {
    let mut out = String::new();
    let mut fmt = IntelFormatter::new();
    fmt.options_mut().set_first_operand_char_index(8);
    let mut text = String::new();
    for (k, (start, heading)) in sections.iter().enumerate() {
        let end = sections
            .get(k + 1)
            .map_or(data_from, |s| s.0)
            .min(data_from);
        let _ = writeln!(out, "; {heading}");
        if *start >= end {
            continue;
        }
        let mut dec = Decoder::with_ip(64, &code[*start..end], *start as u64, DecoderOptions::NONE);
        let mut ins = Instruction::default();
        while dec.can_decode() {
            dec.decode_out(&mut ins);
            text.clear();
            fmt.format(&ins, &mut text);
            let _ = writeln!(out, "  {:6x}  {text}", ins.ip());
        }
    }
    if data_from < code.len() {
        let _ = writeln!(out, "; constants");
        for (k, w) in code[data_from..].chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b[..w.len()].copy_from_slice(w);
            let _ = writeln!(
                out,
                "  {:6x}  dq {:#018x}",
                data_from + 8 * k,
                u64::from_le_bytes(b)
            );
        }
    }
    out
}

/// Just the instructions of `code`, one per line (for tests that look at one op's code).
pub fn instructions(code: &[u8]) -> Vec<String> {
    let mut fmt = IntelFormatter::new();
    let mut dec = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
    let mut ins = Instruction::default();
    let mut out = Vec::new();
    while dec.can_decode() {
        dec.decode_out(&mut ins);
        let mut s = String::new();
        fmt.format(&ins, &mut s);
        out.push(s);
    }
    out
}
