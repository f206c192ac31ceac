//! The walk over the trace: prologue and entry, one lowering per op (dispatched to the files of
//! each op family), the out-of-line exit stubs, the epilogue and the constant pool. It also
//! holds the operand helpers every lowering uses ([`Gen::src`], [`Gen::def_from`], ...).
//!
//! Entry convention: the native entry is `extern "C" fn(deadframe: *mut u64) -> u64`. The
//! prologue builds the frame of [`super::regs`]; the *inner entry* right after it sizes the
//! spill area and loads the trace inputs from the deadframe, so a bridge or another trace can
//! jump there with the inputs stored in the deadframe and the frame of whoever came first.
//! Every exit stores its values in the deadframe and returns `trace_id << 32 | exit index`.

use super::asm::{self, Asm, Src, XSrc};
use super::liveness;
use super::regalloc::RegAlloc;
use super::regs::*;
use super::{Assembled, CompileError, ExitInfo, ExitKind, Link, Saved};
use crate::ir::{OpRef, Opcode, Trace, Type};
use dynasmrt::{DynamicLabel, DynasmApi};
use hashbrown::HashMap;

/// An exit whose code is emitted after the trace body.
pub(super) struct Stub {
    pub label: DynamicLabel,
    pub exit: u32,
    pub locs: Vec<Loc>,
    /// Index of the guard's bridge slot, for guards.
    pub bridge_slot: Option<usize>,
}

/// A value live at the loop header: the value, where it is there, and which jump argument
/// gives its next value (`None` for a loop invariant).
pub(super) type HeaderValue = (usize, Loc, Option<usize>);

/// The state of one compilation.
pub(crate) struct Gen<'t> {
    pub t: &'t Trace,
    pub a: Asm,
    pub ra: RegAlloc,
    pub link: &'t Link<'t>,
    pub exits: Vec<ExitInfo>,
    pub stubs: Vec<Stub>,
    /// Slow paths of inline allocations, emitted after the ops.
    pub slow_allocs: Vec<super::mem::SlowAlloc>,
    /// The out-of-line parts of the collector's safe points after residual calls.
    pub safepoints: Vec<(dynasmrt::DynamicLabel, dynasmrt::DynamicLabel)>,
    pub epilogue: DynamicLabel,
    pub inner_entry: DynamicLabel,
    /// The loop header: its label and the location of each value live there, with the jump
    /// argument that feeds it.
    pub header: Option<(DynamicLabel, Vec<HeaderValue>)>,
    /// How many guards have been given a bridge slot.
    pub guards: usize,
    pub frame_values: usize,
    /// For values the loop's `jump` passes back, the register the header wants them in.
    hints: Vec<Option<Reg>>,
    /// Offsets of the `lea rsp` displacements to patch with the frame size.
    frame_patches: Vec<usize>,
    /// The placed entry, if any: its label and offset.
    pub placed_entry: Option<(DynamicLabel, usize)>,
    /// Where each input is after the entry (`None`: never read).
    pub input_locs: Vec<Option<Loc>>,
    pool: HashMap<u64, DynamicLabel>,
    pool_order: Vec<(u64, DynamicLabel)>,
    /// The value whose comparison with 0 the flags hold (ZF and SF; OF and CF as the `add`,
    /// `sub`, `and`, `or` or `xor` that made it left them), so that a guard's test of it need
    /// not emit a `test`. Set by the op that makes the value; kept only across ops that emit
    /// nothing that writes the flags (see [`keeps_flags`]), forgotten after any other.
    pub flags: Option<usize>,
    /// The flags hold ZF only for `flags` (SF is the sign of its low byte, see
    /// `Gen::byte_mask`).
    pub zf_only: bool,
    /// The op just lowered as a one-byte `add` whose mask, the next op, emits nothing.
    pub byte_sum: Option<usize>,
    /// For each bridge slot, the offset of its stub's code for "no bridge attached".
    pub no_bridge: Vec<u32>,
    /// Bytes added to each memory op's displacement by address folding (empty: none; see
    /// [`super::addr`]).
    pub disp: Vec<i64>,
    /// Ops address folding left unread, not compiled (empty: none).
    pub skip: Vec<bool>,
    /// Jumps to other traces: offset of the `mov r11, target; jmp r11` and the target.
    pub far_jumps: Vec<(u32, u64)>,
}

/// Compiles a verified trace.
pub(crate) fn compile(t: &Trace, link: &Link) -> Result<Assembled, CompileError> {
    if t.ops.len() >= (u32::MAX / 2) as usize {
        return Err(CompileError("trace too long".into()));
    }
    let folded = super::addr::fold(t);
    let (t, disp, skip) = match &folded {
        Some(f) => (&f.trace, f.disp.clone(), f.skip.clone()),
        None => (t, Vec::new(), Vec::new()),
    };
    let live = liveness::analyze(t);
    let is_float = t.ops.iter().map(|op| op.ty() == Type::Float).collect();
    let mut a = Asm::new(0);
    let epilogue = a.new_dynamic_label();
    let inner_entry = a.new_dynamic_label();
    let mut g = Gen {
        t,
        a,
        ra: RegAlloc::new(live, is_float),
        link,
        exits: Vec::new(),
        stubs: Vec::new(),
        slow_allocs: Vec::new(),
        safepoints: Vec::new(),
        epilogue,
        inner_entry,
        header: None,
        guards: 0,
        frame_values: t.num_inputs(),
        hints: vec![None; t.ops.len()],
        pool: HashMap::new(),
        pool_order: Vec::new(),
        frame_patches: Vec::new(),
        placed_entry: None,
        input_locs: Vec::new(),
        flags: None,
        zf_only: false,
        byte_sum: None,
        no_bridge: Vec::new(),
        far_jumps: Vec::new(),
        disp,
        skip,
    };
    asm::prologue(&mut g.a);
    asm::bind(&mut g.a, inner_entry);
    let inner = g.a.offset().0;
    g.frame_patches.push(asm::set_rsp_placeholder(&mut g.a));
    g.entry();
    let mut op_starts = Vec::with_capacity(t.ops.len());
    for i in t.num_inputs()..t.ops.len() {
        op_starts.push((i, g.a.offset().0));
        g.ra.begin(i);
        g.lower(i)?;
        if g.flags != Some(i) && !keeps_flags(&g, i) {
            g.flags = None;
        }
        g.end_op(i);
    }
    let ops_end = g.a.offset().0;
    // Out-of-line allocation slow paths and exits, then the shared epilogue, then the
    // constant pool.
    for s in std::mem::take(&mut g.slow_allocs) {
        g.slow_alloc(&s);
    }
    for (slow, done) in std::mem::take(&mut g.safepoints) {
        g.slow_safepoint(slow, done);
    }
    let mut stub_starts = Vec::with_capacity(g.stubs.len());
    let stubs = std::mem::take(&mut g.stubs);
    for s in &stubs {
        stub_starts.push((s.exit, g.a.offset().0));
        asm::bind(&mut g.a, s.label);
        g.exit_body(s.exit, &s.locs, s.bridge_slot, false);
    }
    let epilogue_at = g.a.offset().0;
    asm::bind(&mut g.a, epilogue);
    asm::epilogue(&mut g.a);
    asm::align8(&mut g.a);
    let pool_at = g.a.offset().0;
    for &(bits, l) in &g.pool_order {
        asm::data_u64(&mut g.a, l, bits);
    }
    let slots = g.ra.nslots;
    let placed_entry = g.placed_entry.map(|(_, at)| at);
    let input_locs = std::mem::take(&mut g.input_locs);
    let mut code =
        g.a.finalize()
            .map_err(|e| CompileError(format!("assembler: {e}")))?;
    let frame = (8 * slots as i32 + 15) & !15;
    let disp = -(FRAME_BASE + frame);
    for &p in &g.frame_patches {
        code[p..p + 4].copy_from_slice(&disp.to_le_bytes());
    }
    Ok(Assembled {
        code,
        inner_entry: inner,
        placed_entry,
        input_locs,
        exits: g.exits,
        op_starts,
        ops_end,
        stub_starts,
        epilogue: epilogue_at,
        pool: pool_at,
        frame_values: g.frame_values,
        slots,
        no_bridge: g.no_bridge,
        far_jumps: g.far_jumps,
    })
}

impl Gen<'_> {
    /// Loads the inputs from the deadframe (for a bridge, to where its parent guard keeps
    /// them), then opens the placed entry if this trace has one; for a loop without a label,
    /// the header is here.
    fn entry(&mut self) {
        let ni = self.t.num_inputs();
        self.ra.begin(0);
        asm::mov(&mut self.a, SCRATCH, Src::M(CTX_DISP));
        self.input_locs = vec![None; ni];
        for v in 0..ni {
            if self.ra.live.last_use[v] as usize == v {
                continue;
            }
            let disp = frame_value_disp(v);
            let loc = match self.link.inputs_at {
                Some(at) => {
                    self.ra.place_input_at(v, at[v]);
                    at[v]
                }
                None => self.ra.place_input(v),
            };
            self.input_locs[v] = Some(loc);
            match loc {
                Loc::Reg(r) if r.is_xmm() => asm::load_x_at(&mut self.a, r.n(), SCRATCH, disp),
                Loc::Reg(r) => asm::load_r_at(&mut self.a, r.n(), SCRATCH, disp),
                Loc::Slot(k) => {
                    asm::load_x_at(&mut self.a, XSCRATCH, SCRATCH, disp);
                    asm::store_x(&mut self.a, slot_disp(k), XSCRATCH);
                }
                Loc::Const(_) => unreachable!(),
            }
        }
        self.ra.inputs_placed();
        // The placed entry: a bridge's parent guard, or a trace jumping here, comes in past
        // the loads with the inputs in place and this trace's frame size to set. A bridge
        // has one always (its inputs may be in the slots of the frame it shares with its
        // parent); another trace only when every input is in a register, since a trace that
        // jumps here cannot write below its own spill area.
        let in_regs = self
            .input_locs
            .iter()
            .all(|l| !matches!(l, Some(Loc::Slot(_))));
        if self.link.inputs_at.is_some() || in_regs {
            let l = self.a.new_dynamic_label();
            asm::bind(&mut self.a, l);
            self.placed_entry = Some((l, self.a.offset().0));
            self.frame_patches
                .push(asm::set_rsp_placeholder(&mut self.a));
        }
        if self.ra.live.is_loop && self.ra.live.label.is_none() {
            self.enter_header();
        }
    }

    /// Records where every value live at the loop header is, and binds the header label.
    pub(super) fn enter_header(&mut self) {
        let live = self.ra.live.header_live.clone();
        let mut locs = Vec::with_capacity(live.len());
        for (v, arg) in live {
            let v = v as usize;
            if arg.is_some() {
                self.ra.drop_slot_copy(v);
            }
            locs.push((v, self.ra.loc(v), arg));
        }
        // A value the back-edge passes to a label argument that lives in a register had best
        // be computed in that register: then the back-edge need not move it.
        if let Some(jump) = self.t.ops.last().filter(|_| self.ra.live.is_loop) {
            for &(_, loc, arg) in &locs {
                if let (Loc::Reg(r), Some(k)) = (loc, arg) {
                    let x = jump.args[k];
                    if x.is_op() && self.hints[x.index()].is_none() {
                        self.hints[x.index()] = Some(r);
                    }
                }
            }
        }
        let l = self.a.new_dynamic_label();
        asm::bind(&mut self.a, l);
        self.header = Some((l, locs));
    }

    /// Lowers op `i`.
    fn lower(&mut self, i: usize) -> Result<(), CompileError> {
        use Opcode::*;
        let t = self.t;
        let op = &t.ops[i];
        if self.skip.get(i).copied().unwrap_or(false) {
            return Ok(());
        }
        match op.opcode {
            InputI | InputF | InputR => unreachable!("inputs come first"),
            IntAdd | IntSub | IntMul | IntAnd | IntOr | IntXor | IntAddOvf | IntSubOvf
            | IntMulOvf => self.int_binop(i, op),
            IntFloorDiv | IntMod => self.divmod(i, op),
            UintFloorDiv | UintMod => self.udivmod(i, op),
            UintMulHigh => self.mul_high(i, op),
            IntMin | IntMax => self.min_max(i, op),
            IntLshift | IntRshift | UintRshift => self.shift(i, op),
            IntNeg | IntInvert => self.int_unop(i, op),
            IntSignext => self.signext(i, op),
            o if liveness::is_fusable_compare(o) => {
                if !self.ra.live.fused[i] {
                    self.compare_value(i, op);
                }
            }
            FloatAdd | FloatSub | FloatMul | FloatTrueDiv => self.float_binop(i, op),
            FloatNeg | FloatAbs => self.float_sign(i, op),
            CastFloatToInt => self.float_to_int(i, op),
            CastIntToFloat => self.int_to_float(i, op),
            FloatMod => self.float_mod(i, op),
            CastFloatToUint => self.float_to_uint(i, op),
            CastUintToFloat => self.uint_to_float(i, op),
            FloatToBits => self.float_to_bits(i, op),
            FloatFromBits => self.float_from_bits(i, op),
            CastPtrToInt | CastIntToPtr | SameAsI | SameAsR | SameAsF => {
                self.def_from(i, op.args[0]);
            }
            GetfieldI | GetfieldF | GetfieldR | GetarrayitemI | GetarrayitemF | GetarrayitemR => {
                self.load(i, op)
            }
            Setfield | Setarrayitem => self.store(i, op),
            New | NewArray => self.alloc_object(i, op),
            CallI | CallF | CallR | CallN | CallPureI | CallPureF | CallPureR => self.call(i, op),
            CallAssemblerI | CallAssemblerR | CallAssemblerN => self.call_assembler(i, op),
            GuardTrue | GuardFalse | GuardValue | GuardNonnull | GuardIsnull | GuardNoOverflow
            | GuardOverflow | GuardNotInvalidated => self.guard(i, op),
            QuasiimmutField | RecordKnownResult | RecordExactValue => {}
            Label => self.enter_header(),
            Jump => self.jump(i, op)?,
            Finish => self.finish(op),
            o => return Err(CompileError(format!("no lowering for {}", o.name()))),
        }
        Ok(())
    }

    /// Releases what dies at op `i`.
    fn end_op(&mut self, i: usize) {
        let t = self.t;
        let op = &t.ops[i];
        for a in &op.args {
            if a.is_op() {
                self.ra.release_if_dead(a.index());
            }
        }
        if let Some(r) = &op.resume {
            for v in r.live_ops() {
                self.ra.release_if_dead(v.index());
            }
        }
        if op.ty() != Type::Void {
            self.ra.release_if_dead(i);
        }
    }

    /// The pool label of a 64-bit constant.
    pub(super) fn pool(&mut self, bits: u64) -> DynamicLabel {
        if let Some(&l) = self.pool.get(&bits) {
            return l;
        }
        let l = self.a.new_dynamic_label();
        self.pool.insert(bits, l);
        self.pool_order.push((bits, l));
        l
    }

    /// The bits of a constant argument, if it is one.
    pub(super) fn const_bits(&self, v: OpRef) -> Option<u64> {
        self.t.const_value(v).map(|c| c.bits())
    }

    /// Where a value is: a location, or its constant bits.
    pub(super) fn loc(&self, v: OpRef) -> Loc {
        match self.const_bits(v) {
            Some(b) => Loc::Const(b),
            None => self.ra.loc(v.index()),
        }
    }

    /// A general-purpose source operand (pins its register).
    pub(super) fn src(&mut self, v: OpRef) -> Src {
        match self.const_bits(v) {
            Some(b) if fits_i32(b) => Src::I(b as i64 as i32),
            Some(b) => Src::P(self.pool(b)),
            None => self.ra.src(v.index()),
        }
    }

    /// A float source operand (pins its register).
    pub(super) fn xsrc(&mut self, v: OpRef) -> XSrc {
        match self.const_bits(v) {
            Some(b) => XSrc::P(self.pool(b)),
            None => self.ra.xsrc(v.index()),
        }
    }

    /// The value in an xmm register: its own, or `xmm15` for a constant.
    pub(super) fn xreg(&mut self, v: OpRef) -> u8 {
        match self.const_bits(v) {
            Some(b) => {
                let l = self.pool(b);
                asm::sse(&mut self.a, asm::Sse::Mov, XSCRATCH, XSrc::P(l));
                XSCRATCH
            }
            None => self.ra.ensure_reg(&mut self.a, v.index()).n(),
        }
    }

    /// A register for the result of op `i`, holding the value of `x` to start with (the
    /// register of `x` itself when `x` dies here).
    pub(super) fn def_from(&mut self, i: usize, x: OpRef) -> u8 {
        if x.is_op() && self.ra.reusable(x.index()).is_some() {
            return self.ra.transfer(x.index(), i).n();
        }
        if self.t.ops[i].ty() == Type::Float {
            let s = self.xsrc(x);
            let d = self.ra.def(&mut self.a, i, self.hints[i]).n();
            asm::sse(&mut self.a, asm::Sse::Mov, d, s);
            d
        } else {
            let s = self.src(x);
            let d = self.ra.def(&mut self.a, i, self.hints[i]).n();
            asm::mov(&mut self.a, d, s);
            d
        }
    }

    /// A register for the result of op `i` (any free one).
    pub(super) fn def(&mut self, i: usize) -> u8 {
        self.ra.def(&mut self.a, i, self.hints[i]).n()
    }

    /// Records an exit and returns its index.
    pub(super) fn add_exit(&mut self, kind: ExitKind, values: Vec<Saved>) -> u32 {
        self.frame_values = self.frame_values.max(values.len());
        self.exits.push(ExitInfo {
            kind,
            values: values.into_boxed_slice(),
            at: Box::new([]),
        });
        self.exits.len() as u32 - 1
    }

    /// The exit code compiled code returns for exit `e`.
    pub(super) fn exit_code(&self, e: u32) -> u64 {
        let finish = matches!(self.exits[e as usize].kind, ExitKind::Finish);
        let flag = if finish && self.link.returns {
            crate::backend::RETURN_FLAG
        } else {
            0
        };
        (self.link.trace_id as u64) << 32 | e as u64 | flag
    }

    /// Leaves through the guard's bridge if one is attached (the values stay where they are),
    /// else stores `locs` into the deadframe (constants only if `consts`) and returns the
    /// exit code.
    pub(super) fn exit_body(
        &mut self,
        exit: u32,
        locs: &[Loc],
        bridge_slot: Option<usize>,
        consts: bool,
    ) {
        if let Some(k) = bridge_slot {
            // The slot's word holds the bridge's placed entry, or the address of the code
            // right after this jump (`Assembled::no_bridge`) while there is no bridge.
            let slot_addr = self.link.data + 8 * (1 + k);
            asm::mov_imm(&mut self.a, SCRATCH, slot_addr as u64);
            asm::jmp_at(&mut self.a, SCRATCH);
            if self.no_bridge.len() <= k {
                self.no_bridge.resize(k + 1, 0);
            }
            self.no_bridge[k] = self.a.offset().0 as u32;
        }
        self.store_frame(locs, consts);
        let code = self.exit_code(exit);
        asm::mov_imm(&mut self.a, RAX, code);
        asm::jmp(&mut self.a, self.epilogue);
    }

    /// Stores values at `locs` into deadframe words 0, 1, ... (`r11` holds the deadframe).
    pub(super) fn store_frame(&mut self, locs: &[Loc], consts: bool) {
        asm::mov(&mut self.a, SCRATCH, Src::M(CTX_DISP));
        for (k, &l) in locs.iter().enumerate() {
            let d = frame_value_disp(k);
            match l {
                Loc::Reg(r) if r.is_xmm() => asm::store_x_at(&mut self.a, SCRATCH, d, r.n()),
                Loc::Reg(r) => asm::store_r_at(&mut self.a, SCRATCH, d, r.n()),
                Loc::Slot(s) => {
                    asm::sse(&mut self.a, asm::Sse::Mov, XSCRATCH, XSrc::M(slot_disp(s)));
                    asm::store_x_at(&mut self.a, SCRATCH, d, XSCRATCH);
                }
                Loc::Const(b) => {
                    if consts {
                        asm::store_const(&mut self.a, SCRATCH, d, b);
                    }
                }
            }
        }
    }

    /// The saved-value descriptions of `args` for an exit.
    pub(super) fn saved_of(&self, args: &[OpRef]) -> Vec<Saved> {
        args.iter()
            .map(|&x| match self.t.const_value(x) {
                Some(c) => Saved::Const(c),
                None => Saved::Frame(self.t.type_of(x)),
            })
            .collect()
    }
}

/// Whether 64 bits are a sign-extended 32-bit immediate.
pub(super) fn fits_i32(b: u64) -> bool {
    let v = b as i64;
    v >= i32::MIN as i64 && v <= i32::MAX as i64
}

/// Whether the code of op `i` leaves the flags as they were: a comparison fused with its
/// guard emits nothing where it stands, and a load or a store moves only (unless its address
/// needs an `add`, which forgets the flags itself, see `Gen::address`). The register
/// allocator's spills, reloads and moves between ops are `mov`s, which keep the flags too.
fn keeps_flags(g: &Gen, i: usize) -> bool {
    use Opcode::*;
    let op = &g.t.ops[i];
    match op.opcode {
        GetfieldI | GetfieldF | GetfieldR | GetarrayitemI | GetarrayitemF | GetarrayitemR
        | Setfield | Setarrayitem => true,
        o => liveness::is_fusable_compare(o) && g.ra.live.fused[i],
    }
}
