//! The parser: Brainfuck source to a program of ops. Runs of `+`/`-` and of `>`/`<` become one
//! op each, brackets are matched (each knows its partner), and every character other than the
//! eight commands is a comment. Errors say where.

use crate::{Op, Program};
use std::fmt;

/// Why a source is not a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A `[` with no matching `]`: its line and column (1-based).
    UnclosedBracket {
        /// Line of the `[`.
        line: usize,
        /// Column of the `[`.
        column: usize,
    },
    /// A `]` with no matching `[`.
    UnopenedBracket {
        /// Line of the `]`.
        line: usize,
        /// Column of the `]`.
        column: usize,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::UnclosedBracket { line, column } => {
                write!(f, "{line}:{column}: this `[` is never closed")
            }
            ParseError::UnopenedBracket { line, column } => {
                write!(f, "{line}:{column}: this `]` has no matching `[`")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses Brainfuck source (bytes: any encoding; only the eight commands count).
pub fn parse(src: &[u8]) -> Result<Program, ParseError> {
    let mut ops: Vec<Op> = Vec::new();
    let mut open: Vec<(usize, usize)> = Vec::new(); // (line, column) of each open `[`
    let (mut line, mut column) = (1, 0);
    for &c in src {
        column += 1;
        match c {
            b'\n' => {
                line += 1;
                column = 0;
            }
            b'+' | b'-' => {
                let d: u8 = if c == b'+' { 1 } else { 255 };
                match ops.last_mut() {
                    Some(Op::Add(n)) => *n = n.wrapping_add(d),
                    _ => ops.push(Op::Add(d)),
                }
            }
            b'>' | b'<' => {
                let d: i64 = if c == b'>' { 1 } else { -1 };
                match ops.last_mut() {
                    Some(Op::Seek(n)) => *n += d,
                    _ => ops.push(Op::Seek(d)),
                }
            }
            b'.' => ops.push(Op::Out),
            b',' => ops.push(Op::In),
            b'[' => {
                open.push((line, column));
                ops.push(Op::JumpIfZero(0));
            }
            b']' => {
                if open.pop().is_none() {
                    return Err(ParseError::UnopenedBracket { line, column });
                }
                // The targets are set below, once cancelled-out runs are gone.
                ops.push(Op::JumpIfNonZero(0));
            }
            _ => {}
        }
    }
    if let Some(&(line, column)) = open.first() {
        return Err(ParseError::UnclosedBracket { line, column });
    }
    // Runs that cancel out leave no op.
    ops.retain(|op| !matches!(op, Op::Add(0) | Op::Seek(0)));
    // The bracket targets, on the final indices.
    let mut stack = Vec::new();
    for i in 0..ops.len() {
        match ops[i] {
            Op::JumpIfZero(_) => stack.push(i),
            Op::JumpIfNonZero(_) => {
                let start = stack.pop().expect("brackets were matched above");
                ops[start] = Op::JumpIfZero(i as u32 + 1);
                ops[i] = Op::JumpIfNonZero(start as u32 + 1);
            }
            _ => {}
        }
    }
    ops.push(Op::Halt);
    Ok(Program { ops })
}
