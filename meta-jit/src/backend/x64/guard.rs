//! Guards, and the ops that end a trace. A guard tests its condition and jumps on failure to an
//! out-of-line stub (emitted after the trace body). The stub goes to the guard's bridge if one
//! is attached, leaving the guard's live values where they are (the bridge was compiled to
//! take them there); otherwise it stores them (exactly [`crate::ir::Resume::live_ops`], in
//! that order) into the deadframe and returns the exit code.
//!
//! `jump` without a target is the loop back-edge: a parallel move puts the next values where
//! the header expects them, then a jump to the header. With a target, a parallel move puts its
//! arguments in the registers the target trace's placed entry takes them in, then a jump there;
//! when the target has no placed entry, the arguments go through the deadframe to its inner
//! entry; when the target is not linked, the jump exits. `finish` stores its values and
//! exits.

use super::asm::{self, Alu, Cond, Src};
use super::int::Flag;
use super::lower::{fits_i32, Gen, Stub};
use super::moves::parallel_move;
use super::regs::*;
use super::{CompileError, ExitKind, Saved};
use crate::ir::{DescrKind, Op, Opcode, Type};
use dynasmrt::{DynamicLabel, DynasmApi};

impl Gen<'_> {
    /// Creates the exit of guard `i` with the current locations of its live values.
    fn guard_exit(&mut self, i: usize, op: &Op) -> DynamicLabel {
        let r = op
            .resume
            .as_ref()
            .expect("verified guards have resume data");
        let live = r.live_ops();
        let locs: Vec<Loc> = live.iter().map(|&v| self.loc(v)).collect();
        let values = live
            .iter()
            .map(|&v| Saved::Frame(self.t.type_of(v)))
            .collect();
        let slot = self.guards;
        self.guards += 1;
        let exit = self.add_exit(
            ExitKind::Guard {
                id: r.id,
                op: i,
                slot,
            },
            values,
        );
        self.exits[exit as usize].at = locs.as_slice().into();
        let label = self.a.new_dynamic_label();
        self.stubs.push(Stub {
            label,
            exit,
            locs,
            bridge_slot: Some(slot),
        });
        label
    }

    /// Jumps to `fail` when the outcome of a comparison in the flags is `want == false`.
    fn jump_unless(&mut self, flag: Flag, want: bool, fail: DynamicLabel) {
        match (flag, want) {
            (Flag::C(c), true) => asm::jcc(&mut self.a, c.not(), fail),
            (Flag::C(c), false) => asm::jcc(&mut self.a, c, fail),
            // Fails unless ordered-and-equal.
            (Flag::FloatEq, true) | (Flag::FloatNe, false) => {
                asm::jcc(&mut self.a, Cond::Ne, fail);
                asm::jcc(&mut self.a, Cond::P, fail);
            }
            // Fails if ordered-and-equal.
            (Flag::FloatEq, false) | (Flag::FloatNe, true) => {
                let ok = self.a.new_dynamic_label();
                asm::jcc(&mut self.a, Cond::P, ok);
                asm::jcc(&mut self.a, Cond::E, fail);
                asm::bind(&mut self.a, ok);
            }
        }
    }

    /// Every guard.
    pub(super) fn guard(&mut self, i: usize, op: &Op) {
        use Opcode::*;
        // A guard whose outcome is known at compile time: nothing, or always exit.
        let known = match op.opcode {
            GuardTrue | GuardFalse | GuardNonnull | GuardIsnull => {
                self.const_bits(op.args[0]).map(|b| match op.opcode {
                    GuardTrue | GuardNonnull => b != 0,
                    _ => b == 0,
                })
            }
            GuardValue => self.const_bits(op.args[0]).map(|b| {
                Some(b) == self.const_bits(op.args[1])
                    && self.t.type_of(op.args[0]) == self.t.type_of(op.args[1])
            }),
            _ => None,
        };
        match known {
            Some(true) => return,
            Some(false) => {
                let fail = self.guard_exit(i, op);
                asm::jmp(&mut self.a, fail);
                return;
            }
            None => {}
        }
        match op.opcode {
            GuardTrue | GuardFalse => {
                let want = op.opcode == GuardTrue;
                let x = op.args[0];
                let flag = if self.ra.live.fused[x.index()] {
                    let t = self.t;
                    self.compare_flags(&t.ops[x.index()])
                } else {
                    self.test_zero(x);
                    Flag::C(Cond::Ne)
                };
                let fail = self.guard_exit(i, op);
                self.jump_unless(flag, want, fail);
            }
            GuardNonnull | GuardIsnull => {
                self.test_zero(op.args[0]);
                let fail = self.guard_exit(i, op);
                self.jump_unless(Flag::C(Cond::Ne), op.opcode == GuardNonnull, fail);
            }
            GuardValue => {
                let (x, c) = (op.args[0], op.args[1]);
                if self.t.type_of(x) == Type::Float {
                    let bits = self.const_bits(c).expect("verified");
                    let sc = if fits_i32(bits) {
                        Src::I(bits as i64 as i32)
                    } else {
                        Src::P(self.pool(bits))
                    };
                    match self.ra.loc(x.index()) {
                        Loc::Reg(r) => {
                            asm::movq_rx(&mut self.a, SCRATCH, r.n());
                            asm::alu(&mut self.a, Alu::Cmp, SCRATCH, sc);
                        }
                        Loc::Slot(k) => {
                            asm::mov(&mut self.a, SCRATCH, Src::M(slot_disp(k)));
                            asm::alu(&mut self.a, Alu::Cmp, SCRATCH, sc);
                        }
                        Loc::Const(_) => unreachable!(),
                    }
                } else {
                    self.cmp(x, c);
                }
                let fail = self.guard_exit(i, op);
                asm::jcc(&mut self.a, Cond::Ne, fail);
            }
            GuardNoOverflow | GuardOverflow => {
                let fail = self.guard_exit(i, op);
                let c = if op.opcode == GuardNoOverflow {
                    Cond::O
                } else {
                    Cond::No
                };
                asm::jcc(&mut self.a, c, fail);
            }
            GuardNotInvalidated => {
                asm::mov_imm(&mut self.a, SCRATCH, self.link.data as u64);
                asm::cmp_mem0(&mut self.a, SCRATCH);
                let fail = self.guard_exit(i, op);
                asm::jcc(&mut self.a, Cond::Ne, fail);
            }
            _ => unreachable!("not a guard"),
        }
    }

    /// `finish(values)`.
    pub(super) fn finish(&mut self, op: &Op) {
        let locs: Vec<Loc> = op.args.iter().map(|&v| self.loc(v)).collect();
        let values = self.saved_of(&op.args);
        let exit = self.add_exit(ExitKind::Finish, values);
        // A return stores constants too: a `call_assembler` reads its result from the frame.
        self.exit_body(exit, &locs, None, self.link.returns);
    }

    /// `jump(values)`: the loop back-edge, or a jump to another trace.
    pub(super) fn jump(&mut self, i: usize, op: &Op) -> Result<(), CompileError> {
        let locs: Vec<Loc> = op.args.iter().map(|&v| self.loc(v)).collect();
        let target = op.descr.and_then(|d| match self.t.get_descr(d).kind {
            DescrKind::Target(n) => Some(n),
            _ => None,
        });
        if let Some(n) = target {
            if n == self.link.trace_id {
                if let Some((entry, _)) = self.placed_entry {
                    let moves = moves_to_inputs(&self.input_locs, &locs);
                    parallel_move(&mut self.a, &moves);
                    asm::jmp(&mut self.a, entry);
                } else {
                    self.frame_values = self.frame_values.max(locs.len());
                    self.store_frame(&locs, true);
                    asm::jmp(&mut self.a, self.inner_entry);
                }
            } else if let Some(entry) = (self.link.targets)(n) {
                let to = if let Some((addr, at)) = entry.placed {
                    let moves = moves_to_inputs(&at, &locs);
                    parallel_move(&mut self.a, &moves);
                    addr
                } else {
                    self.frame_values = self.frame_values.max(locs.len());
                    self.store_frame(&locs, true);
                    entry.inner
                };
                // An absolute jump, made a direct `jmp rel32` once the code's address is
                // known if the target is in reach (`Assembled::far_jumps`).
                let at = self.a.offset().0;
                asm::mov_imm(&mut self.a, SCRATCH, to as u64);
                asm::jmp_r(&mut self.a, SCRATCH);
                self.far_jumps.push((at as u32, to as u64));
            } else {
                let values = self.saved_of(&op.args);
                let exit = self.add_exit(ExitKind::Jump { target: n }, values);
                self.exit_body(exit, &locs, None, false);
            }
            return Ok(());
        }
        let Some((header, at_header)) = self.header.clone() else {
            return Err(CompileError(format!(
                "op {i}: a loop jump without a header"
            )));
        };
        if self.link.count_iterations {
            let values = self.saved_of(&op.args);
            let exit = self.add_exit(ExitKind::Iterations, values);
            let label = self.a.new_dynamic_label();
            self.stubs.push(Stub {
                label,
                exit,
                locs: locs.clone(),
                bridge_slot: None,
            });
            asm::mov(&mut self.a, SCRATCH, Src::M(CTX_DISP));
            asm::dec_mem(&mut self.a, SCRATCH, 0);
            asm::jcc(&mut self.a, Cond::Le, label);
        }
        let moves: Vec<(Loc, Loc)> = at_header
            .iter()
            .map(|&(v, dst, arg)| {
                let src = match arg {
                    Some(k) => locs[k],
                    None => self.ra.loc(v),
                };
                (dst, src)
            })
            .collect();
        parallel_move(&mut self.a, &moves);
        asm::jmp(&mut self.a, header);
        Ok(())
    }
}

/// The moves that put the values at `locs` where a trace's placed entry wants its inputs
/// (`at`; `None` for an input it does not read).
fn moves_to_inputs(at: &[Option<Loc>], locs: &[Loc]) -> Vec<(Loc, Loc)> {
    at.iter()
        .zip(locs)
        .filter_map(|(&dst, &src)| Some((dst?, src)))
        .collect()
}
