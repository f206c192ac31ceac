//! A Brainfuck interpreter on meta-jit: an ordinary interpreter loop with hints.
//!
//! The program position and the program are the greens; the tape pointer, the tape and the
//! I/O state are the reds. Cells are bytes that wrap; the tape starts with
//! [`INITIAL_CELLS`] cells and grows to the right up to [`MAX_CELLS`]; moving left of cell 0
//! is an error. `,` at the end of input stores 0.

use meta_jit::hints as jit;
use meta_jit::hints::*;
use std::fmt;
use std::io::{Read, Write};

pub mod gen;
mod parse;
pub use parse::{parse, ParseError};

/// One instruction. Runs of `+`/`-` and `>`/`<` are folded into one `Add`/`Seek`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    /// Add to the current cell (wrapping).
    Add(u8),
    /// Move the pointer by this many cells.
    Seek(i64),
    /// Write the current cell.
    Out,
    /// Read a byte into the current cell (0 at the end of input).
    In,
    /// `[`: if the current cell is 0, go to the op after the matching `]`.
    JumpIfZero(u32),
    /// `]`: if the current cell is not 0, go to the op after the matching `[`.
    JumpIfNonZero(u32),
    /// The end of the program.
    Halt,
}

/// A parsed program.
#[derive(Clone, Debug, PartialEq, Eq, JitLayout)]
pub struct Program {
    /// The ops, ending with `Halt`.
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

/// The cells a run starts with.
pub const INITIAL_CELLS: usize = 30_000;
/// The most cells the tape grows to.
pub const MAX_CELLS: usize = 1 << 26;

/// The tape.
#[derive(JitLayout)]
pub struct Tape {
    /// The cells.
    pub cells: Vec<u8>,
}

impl Tape {
    /// A tape of [`INITIAL_CELLS`] zeros.
    pub fn new() -> Tape {
        Tape {
            cells: vec![0; INITIAL_CELLS],
        }
    }
}

impl Default for Tape {
    fn default() -> Tape {
        Tape::new()
    }
}

/// Input and output of a run.
pub struct Io<'a> {
    input: &'a mut dyn Read,
    output: &'a mut dyn Write,
    error: Option<std::io::Error>,
}

impl<'a> Io<'a> {
    /// I/O on these streams.
    pub fn new(input: &'a mut dyn Read, output: &'a mut dyn Write) -> Io<'a> {
        Io {
            input,
            output,
            error: None,
        }
    }
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum RunError {
    /// The pointer moved left of cell 0, at this op index.
    LeftOfTape(usize),
    /// The tape would grow past [`MAX_CELLS`], at this op index.
    TapeExhausted(usize),
    /// Reading or writing failed.
    Io(std::io::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::LeftOfTape(pc) => write!(f, "op {pc}: the pointer moved left of cell 0"),
            RunError::TapeExhausted(pc) => {
                write!(f, "op {pc}: the tape would grow past {MAX_CELLS} cells")
            }
            RunError::Io(e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Grows the tape so that cell `at` exists; false if that is past [`MAX_CELLS`].
#[dont_look_inside]
fn grow(tape: &mut Tape, at: usize) -> bool {
    if at >= MAX_CELLS {
        return false;
    }
    let len = (tape.cells.len() * 2).max(at + 1).min(MAX_CELLS);
    tape.cells.resize(len, 0);
    true
}

/// Writes a byte; false if writing failed (the error is kept for [`run`] to report).
#[dont_look_inside]
fn put(io: &mut Io, byte: u8) -> bool {
    match io.output.write_all(&[byte]) {
        Ok(()) => true,
        Err(e) => {
            io.error.get_or_insert(e);
            false
        }
    }
}

/// Reads a byte (0 at the end of input).
#[dont_look_inside]
fn get(io: &mut Io) -> u8 {
    let mut b = [0u8];
    match io.input.read(&mut b) {
        Ok(1) => b[0],
        Ok(_) => 0,
        Err(e) => {
            io.error.get_or_insert(e);
            0
        }
    }
}

/// The interpreter loop. Returns 0 at the end of the program, `-(1 + pc)` if the pointer moved
/// left of cell 0 at op `pc`, `1 + pc` if the tape would grow past [`MAX_CELLS`] there.
#[jit::interpreter(greens(pc, program), reds(ptr, tape, io), location = location)]
pub fn interpret(program: &Program, tape: &mut Tape, io: &mut Io) -> i64 {
    let mut pc: usize = 0;
    let mut ptr: usize = 0;
    loop {
        jit_merge_point!();
        match program.ops[pc] {
            Op::Add(n) => tape.cells[ptr] = tape.cells[ptr].wrapping_add(n),
            Op::Seek(d) => {
                let p = ptr as i64 + d;
                if p < 0 {
                    return -1 - pc as i64;
                }
                ptr = p as usize;
                if ptr >= tape.cells.len() && !grow(tape, ptr) {
                    return 1 + pc as i64;
                }
            }
            Op::Out => {
                if !put(io, tape.cells[ptr]) {
                    // The run ends at the first write error: `run` reports it.
                    return 0;
                }
            }
            Op::In => tape.cells[ptr] = get(io),
            Op::JumpIfZero(target) => {
                if tape.cells[ptr] == 0 {
                    pc = target as usize;
                    continue;
                }
            }
            Op::JumpIfNonZero(target) => {
                if tape.cells[ptr] != 0 {
                    pc = target as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Op::Halt => return 0,
        }
        pc += 1;
    }
}

/// The guest position the greens name, for the JIT log and the trace viewer: the op as
/// Brainfuck text and the innermost loop around it, e.g. `op 17 '-' in [->+<]` (long loops
/// are cut).
pub fn location(pc: usize, program: &Program) -> String {
    let ops = &program.ops;
    let Some(op) = ops.get(pc) else {
        return format!("op {pc} (past the end)");
    };
    // The innermost loop `[` at s whose end (the op after its `]`) is past pc.
    let around = (0..=pc).rev().find_map(|s| match ops[s] {
        Op::JumpIfZero(end) if end as usize > pc => Some((s, end as usize)),
        _ => None,
    });
    let me = text(std::slice::from_ref(op));
    match around {
        Some((s, end)) => {
            let mut body = text(&ops[s..end.min(ops.len())]);
            if body.chars().count() > 40 {
                body = body.chars().take(37).collect::<String>() + "...";
            }
            format!("op {pc} '{me}' in {body}")
        }
        None => format!("op {pc} '{me}'"),
    }
}

/// Ops as Brainfuck text (a run of more than 4 `+`, `-`, `>` or `<` as the character and its
/// count: `+*12`).
fn text(ops: &[Op]) -> String {
    let mut s = String::new();
    let run = |s: &mut String, c: char, n: u64| {
        if n > 4 {
            s.push_str(&format!("{c}*{n}"));
        } else {
            (0..n).for_each(|_| s.push(c));
        }
    };
    for op in ops {
        match *op {
            Op::Add(n) if n < 128 => run(&mut s, '+', u64::from(n)),
            Op::Add(n) => run(&mut s, '-', 256 - u64::from(n)),
            Op::Seek(d) if d >= 0 => run(&mut s, '>', d as u64),
            Op::Seek(d) => run(&mut s, '<', d.unsigned_abs()),
            Op::Out => s.push('.'),
            Op::In => s.push(','),
            Op::JumpIfZero(_) => s.push('['),
            Op::JumpIfNonZero(_) => s.push(']'),
            Op::Halt => s.push_str("(end)"),
        }
    }
    s
}

fn status(code: i64, io: &mut Io) -> Result<(), RunError> {
    if let Some(e) = io.error.take() {
        return Err(RunError::Io(e));
    }
    match code {
        0 => Ok(()),
        c if c < 0 => Err(RunError::LeftOfTape((-1 - c) as usize)),
        c => Err(RunError::TapeExhausted((c - 1) as usize)),
    }
}

/// Runs a program natively on a tape, with this I/O.
pub fn run(program: &Program, tape: &mut Tape, io: &mut Io) -> Result<(), RunError> {
    let code = interpret(program, tape, io);
    status(code, io)
}

/// Runs a program on its jitcode alone (no tracing): the codewriter's check mode.
pub fn run_jitcode(program: &Program, tape: &mut Tape, io: &mut Io) -> Result<(), RunError> {
    let code = interpret::run_jitcode(program, tape, io);
    status(code, io)
}

/// Runs a program on a fresh tape with stdin and stdout (buffered, flushed at the end), as the
/// `bf` binary does: `runner` is [`run`] or [`run_jitcode`]. Returns the run's result, then
/// the flush's.
pub fn run_stdio(
    program: &Program,
    runner: fn(&Program, &mut Tape, &mut Io) -> Result<(), RunError>,
) -> (Result<(), RunError>, std::io::Result<()>) {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = std::io::BufWriter::new(std::io::stdout().lock());
    let result = runner(
        program,
        &mut Tape::new(),
        &mut Io::new(&mut input, &mut output),
    );
    (result, output.flush())
}
