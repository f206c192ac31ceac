//! Lua patterns: character classes, sets, anchors, quantifiers `* + - ?`, captures
//! (including position captures), back references `%1`, `%b` and `%f`. A backtracking
//! matcher over bytes, with a depth limit ("pattern too complex").

const MAXCAPTURES: usize = 32;
const MAXDEPTH: u32 = 200;
const CAP_UNFINISHED: isize = -1;
const CAP_POSITION: isize = -2;

/// A capture: a substring or a position.
#[derive(Clone, Debug)]
pub enum Capture {
    /// Bytes `start..start+len`.
    Str(usize, usize),
    /// A position capture `()` (1-based value).
    Pos(usize),
}

/// The state of one match attempt.
pub struct Matcher<'a> {
    src: &'a [u8],
    pat: &'a [u8],
    depth: u32,
    /// Number of captures.
    pub level: usize,
    cap: [(usize, isize); MAXCAPTURES],
}

type MResult = Result<Option<usize>, String>;

impl<'a> Matcher<'a> {
    /// A matcher of `pat` over `src`.
    pub fn new(src: &'a [u8], pat: &'a [u8]) -> Matcher<'a> {
        Matcher {
            src,
            pat,
            depth: 0,
            level: 0,
            cap: [(0, 0); MAXCAPTURES],
        }
    }

    /// Resets captures before a new attempt.
    pub fn reset(&mut self) {
        self.level = 0;
        self.depth = 0;
    }

    /// Capture `i` (or the whole match `s..e` when there are no captures and i == 0).
    pub fn capture(&self, i: usize, s: usize, e: usize) -> Result<Capture, String> {
        if i >= self.level {
            if i == 0 {
                return Ok(Capture::Str(s, e - s));
            }
            return Err(format!("invalid capture index %{}", i + 1));
        }
        let (st, len) = self.cap[i];
        if len == CAP_UNFINISHED {
            return Err("unfinished capture".into());
        }
        if len == CAP_POSITION {
            return Ok(Capture::Pos(st + 1));
        }
        Ok(Capture::Str(st, len as usize))
    }

    fn class_end(&self, p: usize) -> Result<usize, String> {
        class_end(self.pat, p)
    }

    fn single_match(&self, s: usize, p: usize, ep: usize) -> bool {
        if s >= self.src.len() {
            return false;
        }
        let c = self.src[s];
        match self.pat[p] {
            b'.' => true,
            b'%' => match_class(c, self.pat[p + 1]),
            b'[' => match_bracket(c, &self.pat[p..ep - 1]),
            pc => pc == c,
        }
    }

    /// Matches the pattern from `p` against the subject from `s`; the end of the match.
    pub fn do_match(&mut self, s: usize, p: usize) -> MResult {
        self.depth += 1;
        if self.depth > MAXDEPTH {
            return Err("pattern too complex".into());
        }
        let r = self.do_match_inner(s, p);
        self.depth -= 1;
        r
    }

    fn do_match_inner(&mut self, mut s: usize, mut p: usize) -> MResult {
        let pat = self.pat;
        loop {
            if p >= pat.len() {
                return Ok(Some(s));
            }
            match pat[p] {
                b'(' => {
                    return if p + 1 < pat.len() && pat[p + 1] == b')' {
                        self.start_capture(s, p + 2, CAP_POSITION)
                    } else {
                        self.start_capture(s, p + 1, CAP_UNFINISHED)
                    };
                }
                b')' => return self.end_capture(s, p + 1),
                b'$' if p + 1 == pat.len() => {
                    return Ok(if s == self.src.len() { Some(s) } else { None });
                }
                b'%' if p + 1 < pat.len() && pat[p + 1] == b'b' => {
                    match self.match_balance(s, p + 2)? {
                        Some(ns) => {
                            s = ns;
                            p += 4;
                            continue;
                        }
                        None => return Ok(None),
                    }
                }
                b'%' if p + 1 < pat.len() && pat[p + 1] == b'f' => {
                    p += 2;
                    if p >= pat.len() || pat[p] != b'[' {
                        return Err("missing '[' after '%f' in pattern".into());
                    }
                    let ep = self.class_end(p)?;
                    let prev = if s == 0 { 0 } else { self.src[s - 1] };
                    let cur = if s < self.src.len() { self.src[s] } else { 0 };
                    let set = &pat[p..ep - 1];
                    if !match_bracket(prev, set) && match_bracket(cur, set) {
                        p = ep;
                        continue;
                    }
                    return Ok(None);
                }
                b'%' if p + 1 < pat.len() && pat[p + 1].is_ascii_digit() => {
                    match self.match_capture(s, pat[p + 1])? {
                        Some(ns) => {
                            s = ns;
                            p += 2;
                            continue;
                        }
                        None => return Ok(None),
                    }
                }
                _ => {}
            }
            let ep = self.class_end(p)?;
            let epc = pat.get(ep).copied();
            if !self.single_match(s, p, ep) {
                if matches!(epc, Some(b'*') | Some(b'?') | Some(b'-')) {
                    p = ep + 1;
                    continue;
                }
                return Ok(None);
            }
            match epc {
                Some(b'?') => {
                    if let Some(r) = self.do_match(s + 1, ep + 1)? {
                        return Ok(Some(r));
                    }
                    p = ep + 1;
                }
                Some(b'+') => return self.max_expand(s + 1, p, ep),
                Some(b'*') => return self.max_expand(s, p, ep),
                Some(b'-') => return self.min_expand(s, p, ep),
                _ => {
                    s += 1;
                    p = ep;
                }
            }
        }
    }

    fn max_expand(&mut self, s: usize, p: usize, ep: usize) -> MResult {
        let mut i = 0;
        while self.single_match(s + i, p, ep) {
            i += 1;
        }
        loop {
            if let Some(r) = self.do_match(s + i, ep + 1)? {
                return Ok(Some(r));
            }
            if i == 0 {
                return Ok(None);
            }
            i -= 1;
        }
    }

    fn min_expand(&mut self, mut s: usize, p: usize, ep: usize) -> MResult {
        loop {
            if let Some(r) = self.do_match(s, ep + 1)? {
                return Ok(Some(r));
            }
            if self.single_match(s, p, ep) {
                s += 1;
            } else {
                return Ok(None);
            }
        }
    }

    fn start_capture(&mut self, s: usize, p: usize, what: isize) -> MResult {
        if self.level >= MAXCAPTURES {
            return Err("too many captures".into());
        }
        self.cap[self.level] = (s, what);
        self.level += 1;
        let r = self.do_match(s, p)?;
        if r.is_none() {
            self.level -= 1;
        }
        Ok(r)
    }

    fn end_capture(&mut self, s: usize, p: usize) -> MResult {
        let l = self.capture_to_close()?;
        self.cap[l].1 = (s - self.cap[l].0) as isize;
        let r = self.do_match(s, p)?;
        if r.is_none() {
            self.cap[l].1 = CAP_UNFINISHED;
        }
        Ok(r)
    }

    fn capture_to_close(&self) -> Result<usize, String> {
        for l in (0..self.level).rev() {
            if self.cap[l].1 == CAP_UNFINISHED {
                return Ok(l);
            }
        }
        Err("invalid pattern capture".into())
    }

    fn match_balance(&self, s: usize, p: usize) -> MResult {
        if p + 1 >= self.pat.len() {
            return Err("malformed pattern (missing arguments to '%b')".into());
        }
        if s >= self.src.len() || self.src[s] != self.pat[p] {
            return Ok(None);
        }
        let (b, e) = (self.pat[p], self.pat[p + 1]);
        let mut cont = 1;
        let mut i = s + 1;
        while i < self.src.len() {
            let c = self.src[i];
            if c == e {
                cont -= 1;
                if cont == 0 {
                    return Ok(Some(i + 1));
                }
            } else if c == b {
                cont += 1;
            }
            i += 1;
        }
        Ok(None)
    }

    fn match_capture(&self, s: usize, l: u8) -> MResult {
        let l = (l - b'1') as usize;
        if l >= self.level || self.cap[l].1 == CAP_UNFINISHED {
            return Err(format!("invalid capture index %{}", l + 1));
        }
        let (st, len) = self.cap[l];
        let len = if len == CAP_POSITION { 0 } else { len as usize };
        if self.src.len() - s >= len && self.src[st..st + len] == self.src[s..s + len] {
            Ok(Some(s + len))
        } else {
            Ok(None)
        }
    }
}

fn match_class(c: u8, cl: u8) -> bool {
    let r = match cl.to_ascii_lowercase() {
        b'a' => c.is_ascii_alphabetic(),
        b'c' => c.is_ascii_control(),
        b'd' => c.is_ascii_digit(),
        b'g' => c.is_ascii_graphic(),
        b'l' => c.is_ascii_lowercase(),
        b'p' => c.is_ascii_punctuation(),
        b's' => matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c),
        b'u' => c.is_ascii_uppercase(),
        b'w' => c.is_ascii_alphanumeric(),
        b'x' => c.is_ascii_hexdigit(),
        _ => return cl == c,
    };
    if cl.is_ascii_uppercase() {
        !r
    } else {
        r
    }
}

/// `set` is `[...` without the closing `]`.
fn match_bracket(c: u8, set: &[u8]) -> bool {
    let mut p = 1;
    let mut neg = false;
    if p < set.len() && set[p] == b'^' {
        neg = true;
        p += 1;
    }
    while p < set.len() {
        if set[p] == b'%' && p + 1 < set.len() {
            p += 1;
            if match_class(c, set[p]) {
                return !neg;
            }
            p += 1;
        } else if p + 2 < set.len() && set[p + 1] == b'-' {
            if set[p] <= c && c <= set[p + 2] {
                return !neg;
            }
            p += 3;
        } else {
            if set[p] == c {
                return !neg;
            }
            p += 1;
        }
    }
    neg
}

/// True if the pattern has no special characters (a plain find).
pub fn is_plain(p: &[u8]) -> bool {
    !p.iter().any(|&c| {
        matches!(
            c,
            b'^' | b'$' | b'*' | b'+' | b'?' | b'.' | b'(' | b'[' | b'%' | b'-'
        )
    })
}

/// The end of the pattern item that starts at `p` (a character, `%x`, a set).
fn class_end(pat: &[u8], p: usize) -> Result<usize, String> {
    let mut p = p;
    let c = pat[p];
    p += 1;
    if c == b'%' {
        if p >= pat.len() {
            return Err("malformed pattern (ends with '%')".into());
        }
        return Ok(p + 1);
    }
    if c == b'[' {
        if p < pat.len() && pat[p] == b'^' {
            p += 1;
        }
        loop {
            if p >= pat.len() {
                return Err("malformed pattern (missing ']')".into());
            }
            let cc = pat[p];
            p += 1;
            if cc == b'%' {
                if p >= pat.len() {
                    return Err("malformed pattern (missing ']')".into());
                }
                p += 1;
            }
            if p < pat.len() && pat[p] == b']' {
                return Ok(p + 1);
            }
            if p >= pat.len() {
                return Err("malformed pattern (missing ']')".into());
            }
        }
    }
    Ok(p)
}

/// A set of bytes: bit `c % 64` of word `c / 64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    /// Whether `c` is in the set.
    #[inline(always)]
    pub fn has(&self, c: u8) -> bool {
        (self.0[(c >> 6) as usize] >> (c & 63)) & 1 != 0
    }

    fn add(&mut self, c: u8) {
        self.0[(c >> 6) as usize] |= 1 << (c & 63);
    }

    fn union(&mut self, o: &ByteSet) {
        for i in 0..4 {
            self.0[i] |= o.0[i];
        }
    }

    fn invert(&mut self) {
        for w in &mut self.0 {
            *w = !*w;
        }
    }
}

/// The bytes `%cl` matches ([`match_class`] of every byte), for every `cl`: made once.
fn class_set(cl: u8) -> ByteSet {
    static SETS: std::sync::OnceLock<Vec<ByteSet>> = std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        (0..=255u8)
            .map(|cl| {
                let mut b = ByteSet([0; 4]);
                for c in 0..=255u8 {
                    if match_class(c, cl) {
                        b.add(c);
                    }
                }
                b
            })
            .collect()
    })[cl as usize]
}

/// The first item of `pat` (a pattern without its `^`) when every match must start with one
/// byte it matches: a character, `.`, `%x` or a set, with no quantifier or `+` (not `*`, `?`
/// or `-`, which may match nothing), and not a capture, `%b`, `%f`, a back reference or the
/// anchor `$`. Gives the bytes it matches (as [`Matcher`]'s `single_match` would) and the
/// end of the item in `pat`. None otherwise, and for a malformed item (the matcher reports
/// it).
pub fn first_item(pat: &[u8]) -> Option<(ByteSet, usize)> {
    // The last few patterns' items (a program searches with a few constant patterns, over
    // and over): building a set costs more than the short searches it serves.
    type Seen = (usize, [(Vec<u8>, Option<(ByteSet, usize)>); 4]);
    thread_local! {
        static SEEN: std::cell::RefCell<Seen> = Default::default();
    }
    if pat.len() > 32 {
        return first_item_of(pat);
    }
    SEEN.with(|c| {
        let mut c = c.borrow_mut();
        if let Some((_, r)) =
            c.1.iter()
                .find(|(p, _)| p.as_slice() == pat && !p.is_empty())
        {
            return *r;
        }
        let r = first_item_of(pat);
        let i = c.0;
        c.0 = (i + 1) % 4;
        c.1[i] = (pat.to_vec(), r);
        r
    })
}

/// [`first_item`], made.
fn first_item_of(pat: &[u8]) -> Option<(ByteSet, usize)> {
    let mut set = ByteSet([0; 4]);
    let ep = match *pat.first()? {
        b'(' | b')' => return None,
        b'$' if pat.len() == 1 => return None,
        b'.' => {
            set.invert();
            1
        }
        b'%' => {
            let cl = *pat.get(1)?;
            if cl == b'b' || cl == b'f' || cl.is_ascii_digit() {
                return None;
            }
            set = class_set(cl);
            2
        }
        b'[' => {
            let ep = class_end(pat, 0).ok()?;
            // As `match_bracket`: the set without its closing `]`.
            let body = &pat[..ep - 1];
            let mut p = 1;
            let mut neg = false;
            if p < body.len() && body[p] == b'^' {
                neg = true;
                p += 1;
            }
            while p < body.len() {
                if body[p] == b'%' && p + 1 < body.len() {
                    p += 1;
                    set.union(&class_set(body[p]));
                    p += 1;
                } else if p + 2 < body.len() && body[p + 1] == b'-' {
                    for c in body[p]..=body[p + 2] {
                        set.add(c);
                    }
                    p += 3;
                } else {
                    set.add(body[p]);
                    p += 1;
                }
            }
            if neg {
                set.invert();
            }
            ep
        }
        c => {
            set.add(c);
            1
        }
    };
    match pat.get(ep) {
        Some(b'*') | Some(b'?') | Some(b'-') => None,
        _ => Some((set, ep)),
    }
}
