//! Parallel moves: put a set of values into a set of locations at once, as if every source
//! were read before any destination is written. The loop back-edge (jump arguments into the
//! header's locations) and call argument set-up use it.
//!
//! Moves whose destination no other pending move reads go first; when only cycles remain,
//! one destination is saved in `xmm15` and its readers read it from there. A move between two
//! slots goes through `r11`. Constants are written without touching the flags.

use super::asm::{self, Asm, Src, XSrc};
use super::regs::*;
use hashbrown::HashMap;

/// Emits code that performs every `(destination, source)` move in parallel. Destinations are
/// distinct registers or slots; sources are registers, slots or constants.
///
/// Linear in the number of moves (a loop's back-edge may carry thousands of values): each
/// location counts the pending moves that read it, and a move becomes ready when its
/// destination's count drops to zero.
pub(crate) fn parallel_move(a: &mut Asm, moves: &[(Loc, Loc)]) {
    let mut pending: Vec<Option<(Loc, Loc)>> = moves
        .iter()
        .copied()
        .filter(|(d, s)| d != s)
        .map(Some)
        .collect();
    // How many pending moves read each location, which moves read it (to redirect them when
    // it is saved), and which move writes each destination.
    let mut count: HashMap<Loc, usize> = HashMap::new();
    let mut readers: HashMap<Loc, Vec<usize>> = HashMap::new();
    let mut writer: HashMap<Loc, usize> = HashMap::new();
    for (i, &(d, s)) in pending.iter().flatten().enumerate() {
        *count.entry(s).or_default() += 1;
        readers.entry(s).or_default().push(i);
        let repeated = writer.insert(d, i).is_some();
        debug_assert!(!repeated, "parallel move with a repeated destination");
    }
    let mut ready: Vec<usize> = (0..pending.len())
        .rev()
        .filter(|&i| !count.contains_key(&pending[i].expect("all pending").0))
        .collect();
    let temp = Loc::Reg(Reg::xmm(XSCRATCH));
    let mut left = pending.len();
    let mut scan = 0;
    while left > 0 {
        while let Some(i) = ready.pop() {
            let (d, s) = pending[i].take().expect("a ready move is pending");
            move_one(a, d, s);
            left -= 1;
            writer.remove(&d);
            let n = count.get_mut(&s).expect("a move's source is counted");
            *n -= 1;
            if *n == 0 {
                count.remove(&s);
                if let Some(&j) = writer.get(&s) {
                    ready.push(j);
                }
            }
        }
        if left == 0 {
            break;
        }
        // Every destination left is read by another move: cycles. Save one destination in
        // the temporary and redirect its readers there; its own move is then ready.
        while pending[scan].is_none() {
            scan += 1;
        }
        let d = pending[scan].expect("found above").0;
        move_one(a, temp, d);
        let n = count.remove(&d).unwrap_or(0);
        *count.entry(temp).or_default() += n;
        for &j in readers.get(&d).into_iter().flatten() {
            if let Some(m) = pending[j].as_mut() {
                if m.1 == d {
                    m.1 = temp;
                }
            }
        }
        ready.push(scan);
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
