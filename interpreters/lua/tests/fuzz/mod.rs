//! Inputs for the lexer and parser fuzz test (`no_panic.rs`): random bytes, random token
//! streams and mutated corpus programs, deterministic per seed, and the Lua driver that reads
//! them length-prefixed from stdin and prints, for each, whether `load` compiles it and the
//! message it gives. Shared with `tools/fuzz_dump.rs`, which records PUC Lua's verdicts.

#![allow(dead_code)]

#[path = "../gen/mod.rs"]
mod gen;
pub use gen::Rng;

/// Reads length-prefixed chunks from stdin and prints whether each compiles.
pub const DRIVER: &str = r#"local data = io.read("a")
local pos, n = 1, 0
while pos <= #data do
  local nl = data:find("\n", pos, true)
  local len = tonumber(data:sub(pos, nl - 1))
  local chunk = data:sub(nl + 1, nl + len)
  pos = nl + len + 1
  n = n + 1
  local f, e = load(chunk, "=fuzz")
  -- Control characters escaped, so that each verdict is one line.
  print(n, f ~= nil, (tostring(e):gsub("[%c\\]", function(c) return "\\" .. c:byte() end)))
end
print("done", n)"#;

pub const TOKENS: &[&str] = &[
    "local",
    "function",
    "end",
    "if",
    "then",
    "else",
    "elseif",
    "while",
    "do",
    "for",
    "in",
    "repeat",
    "until",
    "return",
    "break",
    "goto",
    "::",
    "and",
    "or",
    "not",
    "nil",
    "true",
    "false",
    "...",
    "=",
    "==",
    "~=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "^",
    "#",
    "&",
    "|",
    "~",
    "<<",
    ">>",
    "..",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ":",
    ",",
    ".",
    "x",
    "y",
    "t",
    "f",
    "_ENV",
    "1",
    "0x1p4",
    "3.5",
    "1e309",
    "9223372036854775808",
    "\"s\"",
    "'q\\n'",
    "[[long]]",
    "[==[",
    "]==]",
    "--",
    "--[[",
    "]]",
    "\"\\x4",
    "\"\\u{110000}\"",
    "<const>",
    "<close>",
    "\n",
    " ",
];

pub fn random_bytes(rng: &mut Rng) -> Vec<u8> {
    let n = rng.below(200);
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

pub fn random_tokens(rng: &mut Rng) -> Vec<u8> {
    let n = 1 + rng.below(60);
    let mut s = String::new();
    for _ in 0..n {
        s += *rng.pick(TOKENS);
        s.push(' ');
    }
    s.into_bytes()
}

pub fn mutated(rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut p = rng.pick(corpus).clone();
    for _ in 0..1 + rng.below(4) {
        if p.is_empty() {
            break;
        }
        let a = rng.below(p.len());
        let b = (a + rng.below(20)).min(p.len());
        match rng.below(4) {
            0 => {
                p.drain(a..b);
            }
            1 => {
                let piece: Vec<u8> = p[a..b].to_vec();
                let at = rng.below(p.len());
                p.splice(at..at, piece);
            }
            2 => p[a] = rng.next_u64() as u8,
            _ => {
                let tok = rng.pick(TOKENS).as_bytes().to_vec();
                p.splice(a..a, tok);
            }
        }
    }
    p
}

/// Inputs per process.
pub const PER_PROCESS: usize = 100;

/// The inputs of batch `b` (of `cases` in all) from `seed`: the driver's stdin and the inputs.
pub fn batch(seed: u64, b: u64, cases: usize, corpus: &[Vec<u8>]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(b));
    let n = PER_PROCESS.min(cases - b as usize * PER_PROCESS);
    let mut input = Vec::new();
    let mut kept = Vec::new();
    for _ in 0..n {
        let case = match rng.below(3) {
            0 => random_bytes(&mut rng),
            1 => random_tokens(&mut rng),
            _ => mutated(&mut rng, corpus),
        };
        input.extend_from_slice(format!("{}\n", case.len()).as_bytes());
        input.extend_from_slice(&case);
        kept.push(case);
    }
    (input, kept)
}

/// The corpus programs (sorted by content) that `mutated` starts from.
pub fn corpus(conformance_dir: &std::path::Path) -> Vec<Vec<u8>> {
    let mut corpus: Vec<Vec<u8>> = std::fs::read_dir(conformance_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lua"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    corpus.sort();
    corpus
}
