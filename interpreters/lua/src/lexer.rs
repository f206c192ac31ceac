//! The lexer: Lua 5.4 source bytes to tokens, with every numeric literal form, long strings
//! and comments, and the escapes `\z \x \u{} \ddd`. Errors read as PUC Lua's
//! (`chunk:line: message near 'token'`). It knows nothing about the grammar.

use crate::value::{str_to_number, Value};

/// A token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name.
    Name(String),
    /// A string literal (bytes).
    Str(Vec<u8>),
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Num(f64),
    /// A keyword or a symbol, as written.
    Sym(&'static str),
    /// The end of the chunk.
    Eof,
}

const KEYWORDS: &[&str] = &[
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
];

const SYMS: &[&str] = &[
    "...", "..", "==", "~=", "<=", ">=", "<<", ">>", "//", "::", "+", "-", "*", "/", "%", "^", "#",
    "&", "~", "|", "<", ">", "=", "(", ")", "{", "}", "[", "]", ";", ":", ",", ".",
];

/// The lexer state.
pub struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    /// The current line.
    pub line: u32,
    chunk: String,
}

/// A token with the line it ends on and its source text (for `near '...'`).
#[derive(Clone, Debug)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its line.
    pub line: u32,
    /// Its text as written.
    pub text: String,
}

impl<'a> Lexer<'a> {
    /// A lexer over `src`; `chunk` is the chunk name for messages.
    pub fn new(src: &'a [u8], chunk: &str) -> Lexer<'a> {
        let mut l = Lexer {
            src,
            pos: 0,
            line: 1,
            chunk: chunk.to_string(),
        };
        if src.starts_with(b"#") {
            while l.pos < src.len() && src[l.pos] != b'\n' {
                l.pos += 1;
            }
        }
        l
    }

    fn peek(&self, k: usize) -> u8 {
        *self.src.get(self.pos + k).unwrap_or(&0)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn err(&self, msg: &str, near: Option<&str>) -> String {
        match near {
            Some("<eof>") => format!("{}:{}: {} near <eof>", self.chunk, self.line, msg),
            Some(n) => format!("{}:{}: {} near '{}'", self.chunk, self.line, msg, n),
            None => format!("{}:{}: {}", self.chunk, self.line, msg),
        }
    }

    fn newline(&mut self) {
        let c = self.src[self.pos];
        self.pos += 1;
        if self.pos < self.src.len() {
            let d = self.src[self.pos];
            if (d == b'\n' || d == b'\r') && d != c {
                self.pos += 1;
            }
        }
        self.line += 1;
    }

    /// The next token.
    pub fn next_token(&mut self) -> Result<Token, String> {
        loop {
            if self.at_end() {
                return Ok(Token {
                    tok: Tok::Eof,
                    line: self.line,
                    text: "<eof>".into(),
                });
            }
            let c = self.src[self.pos];
            match c {
                b'\n' | b'\r' => self.newline(),
                b' ' | b'\t' | 0x0b | 0x0c => self.pos += 1,
                b'-' if self.peek(1) == b'-' => {
                    self.pos += 2;
                    if self.peek(0) == b'[' {
                        if let Some(level) = self.long_bracket_level() {
                            self.long_string(level, true)?;
                            continue;
                        }
                    }
                    while !self.at_end()
                        && self.src[self.pos] != b'\n'
                        && self.src[self.pos] != b'\r'
                    {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let start = self.pos;
        let c = self.src[self.pos];
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while !self.at_end()
                && (self.src[self.pos].is_ascii_alphanumeric() || self.src[self.pos] == b'_')
            {
                self.pos += 1;
            }
            let s = std::str::from_utf8(&self.src[start..self.pos])
                .unwrap()
                .to_string();
            match KEYWORDS.iter().find(|k| **k == s) {
                Some(k) => Tok::Sym(k),
                None => Tok::Name(s),
            }
        } else if c.is_ascii_digit() || (c == b'.' && self.peek(1).is_ascii_digit()) {
            self.number()?
        } else if c == b'"' || c == b'\'' {
            self.string(c)?
        } else if c == b'[' && self.long_bracket_level().is_some() {
            let level = self.long_bracket_level().unwrap();
            Tok::Str(self.long_string(level, false)?)
        } else {
            let rest = &self.src[self.pos..];
            match SYMS.iter().find(|s| rest.starts_with(s.as_bytes())) {
                Some(s) => {
                    self.pos += s.len();
                    Tok::Sym(s)
                }
                None => {
                    let near = if c.is_ascii_graphic() {
                        (c as char).to_string()
                    } else {
                        format!("<\\{}>", c)
                    };
                    return Err(self.err("unexpected symbol", Some(&near)));
                }
            }
        };
        let text = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
        Ok(Token {
            tok,
            line: self.line,
            text,
        })
    }

    /// At `[`: the level of a long bracket `[==[` if one starts here.
    fn long_bracket_level(&self) -> Option<usize> {
        let mut k = 1;
        while self.peek(k) == b'=' {
            k += 1;
        }
        if self.peek(k) == b'[' {
            Some(k - 1)
        } else {
            None
        }
    }

    fn long_string(&mut self, level: usize, comment: bool) -> Result<Vec<u8>, String> {
        let start_line = self.line;
        self.pos += level + 2;
        if !self.at_end() && (self.src[self.pos] == b'\n' || self.src[self.pos] == b'\r') {
            self.newline();
        }
        let mut out = Vec::new();
        loop {
            if self.at_end() {
                let what = if comment { "comment" } else { "string" };
                let msg = format!("unfinished long {what} (starting at line {start_line})");
                return Err(self.err(&msg, Some("<eof>")));
            }
            let c = self.src[self.pos];
            if c == b']' {
                let mut k = 1;
                while self.peek(k) == b'=' {
                    k += 1;
                }
                if k - 1 == level && self.peek(k) == b']' {
                    self.pos += k + 1;
                    return Ok(out);
                }
                out.push(c);
                self.pos += 1;
            } else if c == b'\n' || c == b'\r' {
                self.newline();
                out.push(b'\n');
            } else {
                out.push(c);
                self.pos += 1;
            }
        }
    }

    fn number(&mut self) -> Result<Tok, String> {
        let start = self.pos;
        let hex = self.peek(0) == b'0' && (self.peek(1) == b'x' || self.peek(1) == b'X');
        if hex {
            self.pos += 2;
        }
        loop {
            let c = self.peek(0);
            let expo = if hex {
                c == b'p' || c == b'P'
            } else {
                c == b'e' || c == b'E'
            };
            if expo {
                self.pos += 1;
                if self.peek(0) == b'+' || self.peek(0) == b'-' {
                    self.pos += 1;
                }
            } else if c.is_ascii_hexdigit() || c == b'.' {
                self.pos += 1;
            } else {
                break;
            }
        }
        // A number touching a name character is malformed, as in Lua.
        while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        match str_to_number(text) {
            Some(Value::Int(i)) => Ok(Tok::Int(i)),
            Some(Value::Num(f)) => Ok(Tok::Num(f)),
            _ => Err(self.err("malformed number", Some(&String::from_utf8_lossy(text)))),
        }
    }

    fn string(&mut self, q: u8) -> Result<Tok, String> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            if self.at_end() {
                return Err(self.err("unfinished string", Some("<eof>")));
            }
            let c = self.src[self.pos];
            if c == q {
                self.pos += 1;
                return Ok(Tok::Str(out));
            }
            match c {
                b'\n' | b'\r' => {
                    let near = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
                    return Err(self.err("unfinished string", Some(&near)));
                }
                b'\\' => {
                    self.pos += 1;
                    let e = self.peek(0);
                    let simple = match e {
                        b'n' => Some(b'\n'),
                        b't' => Some(b'\t'),
                        b'a' => Some(7),
                        b'b' => Some(8),
                        b'f' => Some(12),
                        b'v' => Some(11),
                        b'r' => Some(b'\r'),
                        b'\\' => Some(b'\\'),
                        b'"' => Some(b'"'),
                        b'\'' => Some(b'\''),
                        _ => None,
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        self.pos += 1;
                        continue;
                    }
                    match e {
                        b'\n' | b'\r' => {
                            self.newline();
                            out.push(b'\n');
                        }
                        b'x' => {
                            self.pos += 1;
                            let mut v = 0u32;
                            for _ in 0..2 {
                                let d = self.peek(0);
                                if !d.is_ascii_hexdigit() {
                                    return Err(self.escape_err(start, 1));
                                }
                                v = v * 16 + (d as char).to_digit(16).unwrap();
                                self.pos += 1;
                            }
                            out.push(v as u8);
                        }
                        b'z' => {
                            self.pos += 1;
                            while !self.at_end() && self.src[self.pos].is_ascii_whitespace() {
                                if self.src[self.pos] == b'\n' || self.src[self.pos] == b'\r' {
                                    self.newline();
                                } else {
                                    self.pos += 1;
                                }
                            }
                        }
                        b'u' => {
                            self.pos += 1;
                            if self.peek(0) != b'{' {
                                return Err(self.escape_err(start, 1));
                            }
                            self.pos += 1;
                            let mut v: u64 = 0;
                            let mut n = 0;
                            while self.peek(0).is_ascii_hexdigit() {
                                v = v * 16 + (self.peek(0) as char).to_digit(16).unwrap() as u64;
                                if v > 0x7FFF_FFFF {
                                    return Err(self.escape_err(start, 1));
                                }
                                self.pos += 1;
                                n += 1;
                            }
                            if n == 0 || self.peek(0) != b'}' {
                                return Err(self.escape_err(start, 1));
                            }
                            self.pos += 1;
                            utf8_encode(v as u32, &mut out);
                        }
                        d if d.is_ascii_digit() => {
                            let mut v = 0u32;
                            let mut k = 0;
                            while k < 3 && self.peek(0).is_ascii_digit() {
                                v = v * 10 + (self.peek(0) - b'0') as u32;
                                self.pos += 1;
                                k += 1;
                            }
                            if v > 255 {
                                let end = (self.pos + 1).min(self.src.len());
                                let near =
                                    String::from_utf8_lossy(&self.src[start..end]).into_owned();
                                return Err(self.err("decimal escape too large", Some(&near)));
                            }
                            out.push(v as u8);
                        }
                        _ => {
                            if !self.at_end() {
                                self.pos += 1;
                            }
                            return Err(self.escape_err(start, 0));
                        }
                    }
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn escape_err(&mut self, start: usize, extra: usize) -> String {
        let end = (self.pos + extra).min(self.src.len());
        let near = String::from_utf8_lossy(&self.src[start..end]).into_owned();
        self.err("invalid escape sequence", Some(&near))
    }
}

/// Appends the (extended, up to 2^31) UTF-8 encoding of `c`.
pub fn utf8_encode(c: u32, out: &mut Vec<u8>) {
    if c < 0x80 {
        out.push(c as u8);
        return;
    }
    let mut buf = [0u8; 8];
    let mut n = 0;
    let mut mfb: u32 = 0x3f;
    let mut x = c;
    loop {
        buf[7 - n] = 0x80 | (x & 0x3f) as u8;
        n += 1;
        x >>= 6;
        mfb >>= 1;
        if x <= mfb {
            break;
        }
    }
    buf[7 - n] = ((!mfb << 1) | x) as u8;
    n += 1;
    out.extend_from_slice(&buf[8 - n..]);
}
