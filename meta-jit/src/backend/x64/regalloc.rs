//! Register allocation over the linear trace, done on the fly as the lowering walks the ops
//! forward (in the manner of RPython's and LuaJIT's allocators, not a separate pass).
//!
//! Every value has at most one register and at most one spill slot at a time; a slot, once
//! given, holds the value until it dies (values are SSA, so a slot copy never goes stale),
//! which makes re-spilling free. When a register is needed and none is free, the value in an
//! unpinned register whose next use is furthest away is evicted (Belady's rule; in a loop, an
//! invariant not read again in this iteration is next read in the next one).
//! Registers read by the op being lowered are *pinned* so that nothing evicts them under its
//! feet. Values that live across a call prefer callee-saved registers; before a call, values
//! still needed afterwards leave the caller-saved registers.
//!
//! It owns the value-to-location map and emits the loads, stores and moves that change it. It
//! knows the IR only through [`Liveness`] and value types; it does not know any opcode.

use super::asm::{self, Asm, Src, XSrc};
use super::liveness::Liveness;
use super::regs::*;

const NO_REG: u8 = u8::MAX;
const NONE: u32 = u32::MAX;

/// The allocator's state.
pub(crate) struct RegAlloc {
    /// Liveness of the trace.
    pub live: Liveness,
    /// Whether each op's value is a float (xmm class).
    is_float: Vec<bool>,
    reg: Vec<u8>,
    slot: Vec<u32>,
    in_slot: Vec<bool>,
    owner: [u32; 32],
    pinned: RegSet,
    free_slots: Vec<u32>,
    /// Per value, how far into its use list the walk has gone.
    cursor: Vec<u32>,
    /// Number of spill slots used so far.
    pub nslots: u32,
    /// Index of the op being lowered.
    pub pos: u32,
}

impl RegAlloc {
    /// A fresh allocator for a trace of `is_float.len()` ops.
    pub fn new(live: Liveness, is_float: Vec<bool>) -> RegAlloc {
        let n = is_float.len();
        RegAlloc {
            live,
            is_float,
            reg: vec![NO_REG; n],
            slot: vec![NONE; n],
            in_slot: vec![false; n],
            owner: [NONE; 32],
            pinned: 0,
            free_slots: Vec::new(),
            cursor: vec![0; n],
            nslots: 0,
            pos: 0,
        }
    }

    /// Starts lowering op `i`: nothing is pinned yet.
    pub fn begin(&mut self, i: usize) {
        self.pos = i as u32;
        self.pinned = 0;
    }

    /// Whether `v` is a float (lives in xmm registers).
    pub fn is_float(&self, v: usize) -> bool {
        self.is_float[v]
    }

    /// The register holding `v`, if any.
    pub fn reg_of(&self, v: usize) -> Option<Reg> {
        let r = self.reg[v];
        (r != NO_REG).then_some(Reg(r))
    }

    /// Where `v` is now (a register if it has one, else its slot).
    pub fn loc(&self, v: usize) -> Loc {
        match self.reg_of(v) {
            Some(r) => Loc::Reg(r),
            None => {
                // A miscompilation is worse than a panic: this is checked in every build.
                assert!(
                    self.in_slot[v],
                    "value {v} used at op {} has no location",
                    self.pos
                );
                Loc::Slot(self.slot[v])
            }
        }
    }

    /// Whether `v` is read after the current op.
    pub fn lives_after(&self, v: usize) -> bool {
        self.live.last_use[v] > self.pos
    }

    /// Whether `v` dies at the current op (its last use is here).
    pub fn dies_here(&self, v: usize) -> bool {
        self.live.last_use[v] == self.pos
    }

    /// Pins a register for the rest of the current op.
    pub fn pin(&mut self, r: Reg) {
        self.pinned |= r.bit();
    }

    /// A general-purpose source operand for `v`, pinning its register.
    pub fn src(&mut self, v: usize) -> Src {
        match self.loc(v) {
            Loc::Reg(r) => {
                self.pin(r);
                Src::R(r.n())
            }
            Loc::Slot(k) => Src::M(slot_disp(k)),
            Loc::Const(_) => unreachable!(),
        }
    }

    /// A float source operand for `v`, pinning its register.
    pub fn xsrc(&mut self, v: usize) -> XSrc {
        match self.loc(v) {
            Loc::Reg(r) => {
                self.pin(r);
                XSrc::X(r.n())
            }
            Loc::Slot(k) => XSrc::M(slot_disp(k)),
            Loc::Const(_) => unreachable!(),
        }
    }

    /// A free, unpinned register of the class, without evicting anything.
    fn free_reg(&self, float: bool, prefer_callee: bool) -> Option<Reg> {
        let free = |r: Reg| self.owner[r.0 as usize] == NONE && self.pinned & r.bit() == 0;
        if float {
            return (0..XMM_ALLOCATABLE).map(Reg::xmm).find(|&r| free(r));
        }
        let (first, second): (&[u8], &[u8]) = if prefer_callee {
            (&GPR_CALLEE_SAVED, &GPR_CALLER_SAVED)
        } else {
            (&GPR_CALLER_SAVED, &GPR_CALLEE_SAVED)
        };
        first
            .iter()
            .chain(second)
            .map(|&n| Reg::gpr(n))
            .find(|&r| free(r))
    }

    /// A register of the class for a new value or temporary: a free one (the hint if it is
    /// free), else one taken from the value whose last use is furthest away. The register is
    /// pinned and unbound.
    pub fn alloc(
        &mut self,
        a: &mut Asm,
        float: bool,
        prefer_callee: bool,
        hint: Option<Reg>,
    ) -> Reg {
        if let Some(h) = hint {
            if h.is_xmm() == float && self.owner[h.0 as usize] == NONE && self.pinned & h.bit() == 0
            {
                self.pin(h);
                return h;
            }
        }
        let r = match self.free_reg(float, prefer_callee) {
            Some(r) => r,
            None => {
                let candidates: Vec<Reg> = if float {
                    (0..XMM_ALLOCATABLE).map(Reg::xmm).collect()
                } else {
                    GPR_CALLER_SAVED
                        .iter()
                        .chain(&GPR_CALLEE_SAVED)
                        .map(|&n| Reg::gpr(n))
                        .collect()
                };
                let mut victim = None;
                let mut furthest = 0;
                for r in candidates {
                    if self.pinned & r.bit() == 0 {
                        let d = self.next_use(self.owner[r.0 as usize] as usize);
                        if victim.is_none() || d > furthest {
                            (victim, furthest) = (Some(r), d);
                        }
                    }
                }
                let victim = victim.expect("more registers than one op pins");
                self.spill_reg(a, victim);
                victim
            }
        };
        self.pin(r);
        r
    }

    /// Where `v` is read next, counting from the current op (a use at the current op is
    /// nearest). For a loop invariant whose next use is the closing `jump`, it is its first use
    /// in the next iteration, beyond the end. This is the distance Belady's rule evicts by.
    fn next_use(&mut self, v: usize) -> u64 {
        let (start, end) = (self.live.use_start[v], self.live.use_start[v + 1]);
        let c = &mut self.cursor[v];
        if *c < start {
            *c = start;
        }
        while *c < end && self.live.uses[*c as usize] < self.pos {
            *c += 1;
        }
        if *c == end {
            return u64::MAX;
        }
        let next = self.live.uses[*c as usize];
        let last_op = self.is_float.len() as u32 - 1;
        let wrap = self.live.wrap_use[v];
        if next == last_op && wrap != u32::MAX {
            last_op as u64 + wrap as u64
        } else {
            next as u64
        }
    }

    /// Makes `v` live in register `r` (which must be free).
    pub fn bind(&mut self, v: usize, r: Reg) {
        debug_assert_eq!(self.owner[r.0 as usize], NONE);
        debug_assert_eq!(self.reg[v], NO_REG);
        self.owner[r.0 as usize] = v as u32;
        self.reg[v] = r.0;
        self.pin(r);
    }

    /// Hands the register of `from` (which dies here) to `to`, emitting nothing.
    pub fn transfer(&mut self, from: usize, to: usize) -> Reg {
        let r = Reg(self.reg[from]);
        self.reg[from] = NO_REG;
        self.owner[r.0 as usize] = NONE;
        self.bind(to, r);
        r
    }

    /// Whether `v` is in a register and dies at the current op (so its register may be reused
    /// for the result).
    pub fn reusable(&self, v: usize) -> Option<Reg> {
        self.reg_of(v).filter(|_| self.dies_here(v))
    }

    /// Makes sure `v` has a valid spill slot (storing it there if needed); keeps its register.
    pub fn spill_keep(&mut self, a: &mut Asm, v: usize) {
        if self.in_slot[v] {
            return;
        }
        if self.slot[v] == NONE {
            self.slot[v] = match self.free_slots.pop() {
                Some(k) => k,
                None => {
                    self.nslots += 1;
                    self.nslots - 1
                }
            };
        }
        let r = Reg(self.reg[v]);
        let m = slot_disp(self.slot[v]);
        if r.is_xmm() {
            asm::store_x(a, m, r.n());
        } else {
            asm::store_r(a, m, r.n());
        }
        self.in_slot[v] = true;
    }

    /// Frees register `r`, saving its value in its slot.
    fn spill_reg(&mut self, a: &mut Asm, r: Reg) {
        let v = self.owner[r.0 as usize] as usize;
        self.spill_keep(a, v);
        self.owner[r.0 as usize] = NONE;
        self.reg[v] = NO_REG;
    }

    /// Frees register `r` for a fixed use by the current op: its value moves to a free
    /// register, or to its slot. The register is pinned afterwards. Call before taking any
    /// operand of the op.
    pub fn take(&mut self, a: &mut Asm, r: Reg) {
        let v = self.owner[r.0 as usize];
        self.pin(r);
        if v == NONE {
            return;
        }
        let v = v as usize;
        let cross = self.live.crosses_call[v];
        match self.free_reg(r.is_xmm(), cross) {
            Some(to) => {
                if r.is_xmm() {
                    asm::sse(a, asm::Sse::Mov, to.n(), XSrc::X(r.n()));
                } else {
                    asm::mov(a, to.n(), Src::R(r.n()));
                }
                self.owner[r.0 as usize] = NONE;
                self.reg[v] = NO_REG;
                self.bind(v, to);
                // Not pinned: nothing of this op refers to it yet.
                self.pinned &= !to.bit();
            }
            None => self.spill_reg(a, r),
        }
    }

    /// Puts `v` in a register (loading it from its slot if needed) and pins it.
    pub fn ensure_reg(&mut self, a: &mut Asm, v: usize) -> Reg {
        if let Some(r) = self.reg_of(v) {
            self.pin(r);
            return r;
        }
        let float = self.is_float[v];
        assert!(self.in_slot[v], "value {v} has no location");
        let r = self.alloc(a, float, self.live.crosses_call[v], None);
        let m = slot_disp(self.slot[v]);
        if float {
            asm::sse(a, asm::Sse::Mov, r.n(), XSrc::M(m));
        } else {
            asm::mov(a, r.n(), Src::M(m));
        }
        self.bind(v, r);
        r
    }

    /// A register for the result `v` of the current op.
    pub fn def(&mut self, a: &mut Asm, v: usize, hint: Option<Reg>) -> Reg {
        let r = self.alloc(a, self.is_float[v], self.live.crosses_call[v], hint);
        self.bind(v, r);
        r
    }

    /// Places an input read from the deadframe: a free register, else a fresh slot. Returns
    /// the location.
    pub fn place_input(&mut self, v: usize) -> Loc {
        match self.free_reg(self.is_float[v], self.live.crosses_call[v]) {
            Some(r) => {
                self.bind(v, r);
                Loc::Reg(r)
            }
            None => {
                let k = self.nslots;
                self.nslots += 1;
                self.slot[v] = k;
                self.in_slot[v] = true;
                Loc::Slot(k)
            }
        }
    }

    /// Places input `v` at `loc`, where whoever jumps to this trace keeps it (a register, or
    /// a slot of the shared frame). Call [`RegAlloc::inputs_placed`] after the last input.
    pub fn place_input_at(&mut self, v: usize, loc: Loc) {
        match loc {
            Loc::Reg(r) => self.bind(v, r),
            Loc::Slot(k) => {
                self.slot[v] = k;
                self.in_slot[v] = true;
                self.nslots = self.nslots.max(k + 1);
            }
            Loc::Const(_) => unreachable!("inputs are not constants"),
        }
    }

    /// After the inputs are placed: the slots below the highest input slot that hold no
    /// input are free.
    pub fn inputs_placed(&mut self) {
        let mut used = vec![false; self.nslots as usize];
        for (v, &k) in self.slot.iter().enumerate() {
            if k != NONE && self.in_slot[v] {
                used[k as usize] = true;
            }
        }
        self.free_slots = (0..self.nslots).filter(|&k| !used[k as usize]).collect();
    }

    /// Forgets a stale slot copy: at the loop header, a label argument's slot does not hold
    /// the value the back-edge brings in a register.
    pub fn drop_slot_copy(&mut self, v: usize) {
        if self.reg[v] != NO_REG {
            self.in_slot[v] = false;
        }
    }

    /// Before a call at the current op: every value in a caller-saved register that is read
    /// after the call is saved, in a free callee-saved register or in its slot. Values keep
    /// their caller-saved registers as locations until [`RegAlloc::after_call`], so that the
    /// argument moves can read them.
    pub fn before_call(&mut self, a: &mut Asm) {
        let clobbered = caller_saved();
        for r in 0..32u8 {
            let r = Reg(r);
            let v = self.owner[r.0 as usize];
            if clobbered & r.bit() == 0 || v == NONE || !self.lives_after(v as usize) {
                continue;
            }
            let v = v as usize;
            if !r.is_xmm() && !self.in_slot[v] {
                if let Some(to) = self.free_reg(false, true) {
                    if GPR_CALLEE_SAVED.contains(&to.n()) {
                        asm::mov(a, to.n(), Src::R(r.n()));
                        self.owner[r.0 as usize] = NONE;
                        self.reg[v] = NO_REG;
                        self.bind(v, to);
                        continue;
                    }
                }
            }
            self.spill_keep(a, v);
        }
    }

    /// After a call: the caller-saved registers hold nothing any more.
    pub fn after_call(&mut self) {
        let clobbered = caller_saved();
        for r in 0..32u8 {
            let v = self.owner[r as usize];
            if clobbered & Reg(r).bit() != 0 && v != NONE {
                self.owner[r as usize] = NONE;
                self.reg[v as usize] = NO_REG;
            }
        }
    }

    /// Releases `v`'s register and slot if the current op is its last use.
    pub fn release_if_dead(&mut self, v: usize) {
        if self.live.last_use[v] > self.pos {
            return;
        }
        if self.reg[v] != NO_REG {
            self.owner[self.reg[v] as usize] = NONE;
            self.reg[v] = NO_REG;
        }
        if self.slot[v] != NONE {
            self.free_slots.push(self.slot[v]);
            self.slot[v] = NONE;
        }
        self.in_slot[v] = false;
    }
}
