//! Parallel moves: put a set of values into a set of locations at once, as if every source
//! were read before any destination is written. The loop back-edge (jump arguments into the
//! header's locations) and call argument set-up use it.
//!
//! Moves whose destination no other pending move reads go first; when only cycles remain,
//! one destination is saved in `xmm15` and its readers read it from there. A move between two
//! slots goes through `r11`. Constants are written without touching the flags.

use super::asm::{self, Asm, Src, XSrc};
use super::regs::*;

/// Emits code that performs every `(destination, source)` move in parallel. Destinations are
/// distinct registers or slots; sources are registers, slots or constants.
pub(crate) fn parallel_move(a: &mut Asm, moves: &[(Loc, Loc)]) {
    let mut pending: Vec<(Loc, Loc)> = moves.iter().copied().filter(|(d, s)| d != s).collect();
    debug_assert!(
        pending
            .iter()
            .enumerate()
            .all(|(i, (d, _))| pending[..i].iter().all(|(d2, _)| d2 != d)),
        "parallel move with a repeated destination"
    );
    let temp = Loc::Reg(Reg::xmm(XSCRATCH));
    while !pending.is_empty() {
        let ready = (0..pending.len()).find(|&i| {
            let d = pending[i].0;
            pending.iter().all(|&(_, s)| s != d)
        });
        match ready {
            Some(i) => {
                let (d, s) = pending.swap_remove(i);
                move_one(a, d, s);
            }
            None => {
                // Every destination is read by another move: a cycle. Save one destination
                // in the temporary and redirect its readers there.
                let d = pending[0].0;
                move_one(a, temp, d);
                for m in pending.iter_mut() {
                    if m.1 == d {
                        m.1 = temp;
                    }
                }
            }
        }
    }
}

/// Emits one move from `s` to `d` (any combination of classes the values allow; a general
/// register and an xmm register exchange bits with `movq`).
pub(crate) fn move_one(a: &mut Asm, d: Loc, s: Loc) {
    if d == s {
        return;
    }
    match (d, s) {
        (Loc::Reg(dr), Loc::Reg(sr)) => match (dr.is_xmm(), sr.is_xmm()) {
            (false, false) => asm::mov(a, dr.n(), Src::R(sr.n())),
            (true, true) => asm::sse(a, asm::Sse::Mov, dr.n(), XSrc::X(sr.n())),
            (true, false) => asm::movq_xr(a, dr.n(), sr.n()),
            (false, true) => asm::movq_rx(a, dr.n(), sr.n()),
        },
        (Loc::Reg(dr), Loc::Slot(k)) => {
            if dr.is_xmm() {
                asm::sse(a, asm::Sse::Mov, dr.n(), XSrc::M(slot_disp(k)));
            } else {
                asm::mov(a, dr.n(), Src::M(slot_disp(k)));
            }
        }
        (Loc::Reg(dr), Loc::Const(v)) => {
            if dr.is_xmm() {
                if v == 0 {
                    asm::xorps(a, dr.n());
                } else {
                    asm::mov_imm(a, SCRATCH, v);
                    asm::movq_xr(a, dr.n(), SCRATCH);
                }
            } else {
                asm::mov_imm(a, dr.n(), v);
            }
        }
        (Loc::Slot(k), Loc::Reg(sr)) => {
            if sr.is_xmm() {
                asm::store_x(a, slot_disp(k), sr.n());
            } else {
                asm::store_r(a, slot_disp(k), sr.n());
            }
        }
        (Loc::Slot(k), Loc::Slot(j)) => {
            asm::mov(a, SCRATCH, Src::M(slot_disp(j)));
            asm::store_r(a, slot_disp(k), SCRATCH);
        }
        (Loc::Slot(k), Loc::Const(v)) => asm::store_const(a, RBP, slot_disp(k), v),
        (Loc::Const(_), _) => unreachable!("a constant is not a destination"),
    }
}
