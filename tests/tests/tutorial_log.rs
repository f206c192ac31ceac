//! Keeps the tutorial chapter (`book/src/tutorial-bf.md`) true to what the JIT does.
//!
//! The chapter shows the optimized trace of its interpreter's hot loop. The trace changes
//! whenever the tracer or the optimizer does, so this test runs the chapter's interpreter on the
//! chapter's program and compares the trace it compiles with the excerpt in the chapter, modulo
//! the IR's renaming of values and the addresses of constants (both parsed by the IR's parser
//! and printed again). When it fails, it prints the new trace: paste it into the chapter and
//! update the prose that reads it.
//!
//! The interpreter below, between the `chapter:begin` and `chapter:end` lines, is a copy of the
//! chapter's final listing; the first test checks that the two are the same code.

// chapter:begin
use meta_jit::hints as jit;
use meta_jit::hints::*;

/// One instruction; runs of `+`/`-` and of `>`/`<` become one `Add` or `Seek`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, JitLayout)]
#[repr(C, u8)]
pub enum Op {
    /// Add to the current cell (wrapping): `+` is `Add(1)`, `-` is `Add(255)`.
    Add(u8),
    /// Move the pointer by this many cells.
    Seek(i64),
    /// `.`: write the current cell.
    Out,
    /// `,`: read a byte into the current cell (0 at the end of the input).
    In,
    /// `[`: if the current cell is 0, go to the op after the matching `]`.
    JumpIfZero(u32),
    /// `]`: if the current cell is not 0, go to the op after the matching `[`.
    JumpIfNonZero(u32),
    /// The end of the program.
    Halt,
}

#[derive(JitLayout)]
pub struct Program {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Op>,
}

#[derive(JitLayout)]
pub struct Tape {
    pub cells: Vec<u8>,
}

pub struct Io {
    pub input: Vec<u8>,
    pub read: usize,
    pub output: Vec<u8>,
}

#[dont_look_inside]
fn put(io: &mut Io, byte: u8) {
    io.output.push(byte);
}

#[dont_look_inside]
fn get(io: &mut Io) -> u8 {
    let byte = io.input.get(io.read).copied().unwrap_or(0);
    io.read += 1;
    byte
}

#[jit::interpreter(greens(pc, program), reds(ptr, tape, io))]
pub fn run(program: &Program, tape: &mut Tape, io: &mut Io) {
    let mut pc: usize = 0;
    let mut ptr: usize = 0;
    loop {
        jit_merge_point!();
        match program.ops[pc] {
            Op::Add(n) => tape.cells[ptr] = tape.cells[ptr].wrapping_add(n),
            Op::Seek(d) => ptr = (ptr as i64).wrapping_add(d) as usize,
            Op::Out => put(io, tape.cells[ptr]),
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
            Op::Halt => return,
        }
        pc += 1;
    }
}

/// Parses a program; panics on unbalanced brackets.
pub fn parse(src: &str) -> Program {
    let mut ops = Vec::new();
    let mut open = Vec::new();
    for c in src.chars() {
        match c {
            '+' | '-' => {
                let n = if c == '+' { 1 } else { 255 };
                match ops.last_mut() {
                    Some(Op::Add(m)) => *m = m.wrapping_add(n),
                    _ => ops.push(Op::Add(n)),
                }
            }
            '>' | '<' => {
                let d = if c == '>' { 1 } else { -1 };
                match ops.last_mut() {
                    Some(Op::Seek(e)) => *e += d,
                    _ => ops.push(Op::Seek(d)),
                }
            }
            '.' => ops.push(Op::Out),
            ',' => ops.push(Op::In),
            '[' => {
                open.push(ops.len());
                ops.push(Op::JumpIfZero(0));
            }
            ']' => {
                let start = open.pop().expect("unbalanced `]`");
                ops.push(Op::JumpIfNonZero(start as u32 + 1));
                ops[start] = Op::JumpIfZero(ops.len() as u32);
            }
            _ => {} // everything else is a comment
        }
    }
    assert!(open.is_empty(), "unbalanced `[`");
    ops.push(Op::Halt);
    Program { ops }
}
// chapter:end

use meta_jit::ir::parse::{parse_with, Env};

const CHAPTER: &str = include_str!("../../book/src/tutorial-bf.md");

/// The chapter's program (its final listing must contain this line).
const ALPHABET: &str = "++++++++[>++++++++<-]>+<++++++++++++++++++++++++++[>.+<-]++++++++++.";

/// The lines of the fenced block that follows `<!-- tutorial_log: NAME -->` in the chapter.
fn chapter_block(name: &str) -> Vec<&'static str> {
    let marker = format!("<!-- tutorial_log: {name} -->");
    let at = CHAPTER
        .find(&marker)
        .unwrap_or_else(|| panic!("tutorial-bf.md has no `{marker}`"));
    let mut lines = CHAPTER[at + marker.len()..]
        .lines()
        .skip_while(|l| !l.starts_with("```"));
    lines
        .next()
        .unwrap_or_else(|| panic!("no code block after `{marker}`"));
    lines.take_while(|l| !l.starts_with("```")).collect()
}

/// A Rust line as the reader of the book sees it and rustdoc compiles it: a hidden line
/// (`# ` or a lone `#`) without its mark.
fn unhidden(line: &str) -> &str {
    let t = line.trim_start();
    if t == "#" {
        ""
    } else if let Some(rest) = t.strip_prefix("# ") {
        rest
    } else {
        line
    }
}

fn non_blank<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    lines
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect()
}

#[test]
fn the_chapter_listing_is_this_interpreter() {
    let me = include_str!("tutorial_log.rs");
    let copy = me
        .split("// chapter:begin\n")
        .nth(1)
        .and_then(|s| s.split("// chapter:end\n").next())
        .expect("markers");
    let copy = non_blank(copy.lines());
    let listing = chapter_block("interpreter");
    let listing = non_blank(listing.iter().map(|l| unhidden(l)));
    let found = listing.windows(copy.len()).any(|w| w == copy.as_slice());
    assert!(
        found,
        "the final listing of book/src/tutorial-bf.md (after `<!-- tutorial_log: interpreter -->`) \
         no longer contains the interpreter of tests/tests/tutorial_log.rs between its \
         `chapter:begin` and `chapter:end` lines: make them the same code"
    );
    assert!(
        listing.iter().any(|l| l.contains(ALPHABET)),
        "the chapter's final listing no longer runs the program {ALPHABET}"
    );
}

/// A trace text (a JIT log section or a printed trace) in canonical form: the log's header and
/// end lines dropped, every constant address replaced by its order of first appearance, parsed
/// and printed again (which renames the values in order).
fn canonical(text: &str) -> Result<String, String> {
    let body: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("{jit-") && !l.starts_with("jit-"))
        .collect();
    let mut body = body.join("\n");
    // Constant addresses differ from run to run.
    let mut addrs: Vec<String> = Vec::new();
    let mut out = String::new();
    let mut rest = body.as_str();
    while let Some(at) = rest.find("ConstPtr(") {
        let (head, tail) = rest.split_at(at + "ConstPtr(".len());
        out.push_str(head);
        let end = tail.find(')').expect("ConstPtr(...)");
        let addr = tail[..end].to_string();
        let k = addrs.iter().position(|a| *a == addr).unwrap_or_else(|| {
            addrs.push(addr);
            addrs.len() - 1
        });
        out.push_str(&format!("{:#x}", (k + 1) * 0x1000));
        rest = &tail[end..];
    }
    out.push_str(rest);
    body = out;
    // Functions are named; any address will do.
    let mut env = Env::new();
    for (k, piece) in body.split("ConstFn(").skip(1).enumerate() {
        let name = piece.split(')').next().unwrap_or("");
        env = env.func(name, 0x10_0000 + k * 0x100);
    }
    parse_with(&body, &env)
        .map(|t| t.to_string())
        .map_err(|e| format!("cannot parse the trace ({e}):\n{body}"))
}

#[test]
fn the_chapter_shows_the_trace_the_jit_compiles() {
    let program = parse(ALPHABET);
    run::with_driver(|d| d.set_params("threshold=10,keep_optimized=1").unwrap());
    let mut tape = Tape {
        cells: vec![0; 30_000],
    };
    let mut io = Io {
        input: Vec::new(),
        read: 0,
        output: Vec::new(),
    };
    run(&program, &mut tape, &mut io);
    assert_eq!(io.output, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ\n");
    let stats = run::with_driver(|d| d.stats());
    // As the chapter's summary line shows: the loop calls `put`, so it is not a counted loop,
    // and its trace goes round at once.
    assert_eq!(
        (
            stats.loops(),
            stats.counted_loops,
            stats.bridges(),
            stats.retraced,
            stats.guard_failures,
            stats.entries
        ),
        (1, 0, 0, 0, 1, 1),
        "{}",
        stats.summary()
    );
    let now = stats.traces[0].optimized().to_string();
    let now_canonical = canonical(&now).expect("the JIT's own trace parses");
    let shown = chapter_block("optimized trace").join("\n");
    let shown_canonical = canonical(&shown);
    assert!(
        shown_canonical.as_ref() == Ok(&now_canonical),
        "the optimized trace in book/src/tutorial-bf.md (after `<!-- tutorial_log: optimized \
         trace -->`) is not what the JIT compiles now. Replace the excerpt with the trace \
         below (keep the log's `{{jit-log-opt loop of run` and `jit-log-opt}}` lines around it) \
         and update the prose that reads it.\n\n--- the JIT now:\n{now}\n--- the chapter, \
         canonical:\n{}",
        shown_canonical.unwrap_or_else(|e| e)
    );
}
