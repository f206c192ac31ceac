//! The parser: tokens to the syntax tree, with PUC Lua's error messages
//! (`chunk:line: 'end' expected (to close 'if' at line 3) near '<eof>'`). It does not resolve
//! names or check gotos; the compiler does.

use crate::ast::*;
use crate::lexer::{Lexer, Tok, Token};

/// The parser state.
pub struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Token,
    ahead: Option<Token>,
    chunk: String,
    depth: u32,
    /// Whether each enclosing function takes `...`.
    vararg: Vec<bool>,
}

type PResult<T> = Result<T, String>;

const MAX_DEPTH: u32 = 190;

/// Parses a chunk into its main function body.
pub fn parse_chunk(src: &[u8], chunk: &str) -> PResult<FuncBody> {
    let mut lex = Lexer::new(src, chunk);
    let tok = lex.next_token()?;
    let mut p = Parser {
        lex,
        tok,
        ahead: None,
        chunk: chunk.to_string(),
        depth: 0,
        vararg: vec![true],
    };
    let body = p.block()?;
    if p.tok.tok != Tok::Eof {
        return Err(p.err_near("'<eof>' expected"));
    }
    Ok(FuncBody {
        params: vec![],
        vararg: true,
        body,
        line: 0,
        end_line: p.tok.line,
        name: "main chunk".into(),
    })
}

fn unop(t: &Tok) -> Option<UnOp> {
    match t {
        Tok::Sym("-") => Some(UnOp::Neg),
        Tok::Sym("not") => Some(UnOp::Not),
        Tok::Sym("#") => Some(UnOp::Len),
        Tok::Sym("~") => Some(UnOp::BNot),
        _ => None,
    }
}

fn binop(t: &Tok) -> Option<(BinOp, u8, u8)> {
    let Tok::Sym(s) = t else { return None };
    Some(match *s {
        "+" => (BinOp::Add, 10, 10),
        "-" => (BinOp::Sub, 10, 10),
        "*" => (BinOp::Mul, 11, 11),
        "%" => (BinOp::Mod, 11, 11),
        "^" => (BinOp::Pow, 14, 13),
        "/" => (BinOp::Div, 11, 11),
        "//" => (BinOp::IDiv, 11, 11),
        "&" => (BinOp::BAnd, 6, 6),
        "|" => (BinOp::BOr, 4, 4),
        "~" => (BinOp::BXor, 5, 5),
        "<<" => (BinOp::Shl, 7, 7),
        ">>" => (BinOp::Shr, 7, 7),
        ".." => (BinOp::Concat, 9, 8),
        "==" => (BinOp::Eq, 3, 3),
        "~=" => (BinOp::Ne, 3, 3),
        "<" => (BinOp::Lt, 3, 3),
        "<=" => (BinOp::Le, 3, 3),
        ">" => (BinOp::Gt, 3, 3),
        ">=" => (BinOp::Ge, 3, 3),
        "and" => (BinOp::And, 2, 2),
        "or" => (BinOp::Or, 1, 1),
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    fn advance(&mut self) -> PResult<Token> {
        let next = match self.ahead.take() {
            Some(t) => t,
            None => self.lex.next_token()?,
        };
        Ok(std::mem::replace(&mut self.tok, next))
    }

    fn peek_ahead(&mut self) -> PResult<&Tok> {
        if self.ahead.is_none() {
            self.ahead = Some(self.lex.next_token()?);
        }
        Ok(&self.ahead.as_ref().unwrap().tok)
    }

    fn err_near(&self, msg: &str) -> String {
        let near = match &self.tok.tok {
            Tok::Eof => "<eof>".to_string(),
            _ => format!("'{}'", self.tok.text),
        };
        format!("{}:{}: {} near {}", self.chunk, self.tok.line, msg, near)
    }

    fn is(&self, s: &str) -> bool {
        matches!(&self.tok.tok, Tok::Sym(t) if *t == s)
    }

    fn accept(&mut self, s: &str) -> PResult<bool> {
        if self.is(s) {
            self.advance()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect(&mut self, s: &str) -> PResult<()> {
        if self.accept(s)? {
            Ok(())
        } else {
            Err(self.err_near(&format!("'{}' expected", s)))
        }
    }

    fn expect_match(&mut self, what: &str, who: &str, line: u32) -> PResult<()> {
        if self.accept(what)? {
            return Ok(());
        }
        if line == self.tok.line {
            Err(self.err_near(&format!("'{}' expected", what)))
        } else {
            Err(self.err_near(&format!(
                "'{}' expected (to close '{}' at line {})",
                what, who, line
            )))
        }
    }

    fn name(&mut self) -> PResult<String> {
        if let Tok::Name(n) = &self.tok.tok {
            let n = n.clone();
            self.advance()?;
            Ok(n)
        } else {
            Err(self.err_near("<name> expected"))
        }
    }

    fn block_end(&self) -> bool {
        matches!(
            self.tok.tok,
            Tok::Eof | Tok::Sym("end") | Tok::Sym("else") | Tok::Sym("elseif") | Tok::Sym("until")
        )
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            // PUC Lua 5.4 counts parser nesting as C calls and reports it without a position.
            return Err("C stack overflow".to_string());
        }
        Ok(())
    }

    fn block(&mut self) -> PResult<Block> {
        self.enter()?;
        let mut stats = Vec::new();
        while !self.block_end() {
            if self.is("return") {
                let line = self.tok.line;
                self.advance()?;
                let exprs = if self.block_end() || self.is(";") {
                    vec![]
                } else {
                    self.exprlist()?
                };
                self.accept(";")?;
                stats.push(Stat::Ret(exprs, line));
                if !self.block_end() {
                    return Err(self.err_near("'<eof>' expected"));
                }
                break;
            }
            if let Some(s) = self.statement()? {
                stats.push(s);
            }
        }
        self.depth -= 1;
        stats.push(Stat::End(self.tok.line));
        Ok(stats)
    }

    fn statement(&mut self) -> PResult<Option<Stat>> {
        let line = self.tok.line;
        let Tok::Sym(s) = self.tok.tok else {
            return self.expr_stat().map(Some);
        };
        match s {
            ";" => {
                self.advance()?;
                Ok(None)
            }
            "if" => {
                self.advance()?;
                let mut arms = vec![];
                let c = self.expr()?;
                self.expect("then")?;
                let b = self.block()?;
                arms.push((c, b));
                let mut els = None;
                loop {
                    if self.is("elseif") {
                        self.advance()?;
                        let c = self.expr()?;
                        self.expect("then")?;
                        let b = self.block()?;
                        arms.push((c, b));
                    } else if self.is("else") {
                        self.advance()?;
                        els = Some(self.block()?);
                        self.expect_match("end", "if", line)?;
                        break;
                    } else {
                        self.expect_match("end", "if", line)?;
                        break;
                    }
                }
                Ok(Some(Stat::If(arms, els, line)))
            }
            "while" => {
                self.advance()?;
                let c = self.expr()?;
                self.expect("do")?;
                let b = self.block()?;
                self.expect_match("end", "while", line)?;
                Ok(Some(Stat::WhileDo(c, b, line)))
            }
            "do" => {
                self.advance()?;
                let b = self.block()?;
                self.expect_match("end", "do", line)?;
                Ok(Some(Stat::Do(b)))
            }
            "for" => {
                self.advance()?;
                let n1 = self.name()?;
                if self.is("=") {
                    self.advance()?;
                    let a = self.expr()?;
                    self.expect(",")?;
                    let b = self.expr()?;
                    let c = if self.accept(",")? {
                        Some(self.expr()?)
                    } else {
                        None
                    };
                    self.expect("do")?;
                    let body = self.block()?;
                    self.expect_match("end", "for", line)?;
                    Ok(Some(Stat::NumFor(n1, a, b, c, body, line)))
                } else if self.is(",") || self.is("in") {
                    let mut names = vec![n1];
                    while self.accept(",")? {
                        names.push(self.name()?);
                    }
                    self.expect("in")?;
                    let exprs = self.exprlist()?;
                    self.expect("do")?;
                    let body = self.block()?;
                    self.expect_match("end", "for", line)?;
                    Ok(Some(Stat::GenFor(names, exprs, body, line)))
                } else {
                    Err(self.err_near("'=' or 'in' expected"))
                }
            }
            "repeat" => {
                self.advance()?;
                let b = self.block()?;
                self.expect_match("until", "repeat", line)?;
                let c = self.expr()?;
                Ok(Some(Stat::RepeatUntil(b, c, line)))
            }
            "function" => {
                self.advance()?;
                let n = self.name()?;
                let mut full = n.clone();
                let mut target = Expr::Name(n);
                let mut method = false;
                loop {
                    if self.is(".") || self.is(":") {
                        let colon = self.is(":");
                        let l = self.tok.line;
                        self.advance()?;
                        let k = self.name()?;
                        full.push(if colon { ':' } else { '.' });
                        full.push_str(&k);
                        target =
                            Expr::Idx(Box::new(target), Box::new(Expr::Str(k.into_bytes())), l);
                        if colon {
                            method = true;
                            break;
                        }
                    } else {
                        break;
                    }
                }
                let body = self.func_body(method, line, full)?;
                Ok(Some(Stat::Set(
                    vec![target],
                    vec![Expr::FuncDef(Box::new(body))],
                    line,
                )))
            }
            "local" => {
                self.advance()?;
                if self.accept("function")? {
                    let n = self.name()?;
                    let body = self.func_body(false, line, n.clone())?;
                    return Ok(Some(Stat::LocalFunction(n, Box::new(body), line)));
                }
                let mut names = vec![];
                let mut closes = 0;
                loop {
                    let n = self.name()?;
                    let mut is_const = false;
                    if self.accept("<")? {
                        let a = self.name()?;
                        if a != "const" && a != "close" {
                            return Err(format!(
                                "{}:{}: unknown attribute '{}'",
                                self.chunk, self.tok.line, a
                            ));
                        }
                        is_const = true;
                        if a == "close" {
                            closes += 1;
                            if closes > 1 {
                                return Err(format!(
                                    "{}:{}: multiple to-be-closed variables in local list",
                                    self.chunk, self.tok.line
                                ));
                            }
                        }
                        self.expect(">")?;
                    }
                    names.push((n, is_const));
                    if !self.accept(",")? {
                        break;
                    }
                }
                let exprs = if self.accept("=")? {
                    self.exprlist()?
                } else {
                    vec![]
                };
                Ok(Some(Stat::Loc(names, exprs, line)))
            }
            "return" => unreachable!("handled by block"),
            "break" => {
                self.advance()?;
                Ok(Some(Stat::Brk(line)))
            }
            "goto" => {
                self.advance()?;
                let n = self.name()?;
                Ok(Some(Stat::GoTo(n, line)))
            }
            "::" => {
                self.advance()?;
                let n = self.name()?;
                self.expect("::")?;
                let _ = line;
                // PUC Lua reports label errors at the token after the label.
                Ok(Some(Stat::Lbl(n, self.tok.line)))
            }
            _ => self.expr_stat().map(Some),
        }
    }

    fn expr_stat(&mut self) -> PResult<Stat> {
        let line = self.tok.line;
        let e = self.suffixed()?;
        if self.is("=") || self.is(",") {
            let mut targets = vec![e];
            while self.accept(",")? {
                targets.push(self.suffixed()?);
            }
            for t in &targets {
                if !matches!(t, Expr::Name(_) | Expr::Idx(..)) {
                    return Err(self.err_near("syntax error"));
                }
            }
            self.expect("=")?;
            let exprs = self.exprlist()?;
            Ok(Stat::Set(targets, exprs, line))
        } else {
            if !matches!(e, Expr::CallExpr(..) | Expr::Method(..)) {
                return Err(self.err_near("syntax error"));
            }
            Ok(Stat::CallStat(e, line))
        }
    }

    fn func_body(&mut self, method: bool, line: u32, name: String) -> PResult<FuncBody> {
        self.enter()?;
        let mut params = vec![];
        if method {
            params.push("self".to_string());
        }
        let mut vararg = false;
        self.expect("(")?;
        if !self.is(")") {
            loop {
                if self.accept("...")? {
                    vararg = true;
                    break;
                }
                match &self.tok.tok {
                    Tok::Name(_) => params.push(self.name()?),
                    _ => return Err(self.err_near("<name> expected")),
                }
                if !self.accept(",")? {
                    break;
                }
            }
        }
        self.expect(")")?;
        self.vararg.push(vararg);
        let body = self.block()?;
        self.vararg.pop();
        let end_line = self.tok.line;
        self.expect_match("end", "function", line)?;
        self.depth -= 1;
        Ok(FuncBody {
            params,
            vararg,
            body,
            line,
            end_line,
            name,
        })
    }

    fn exprlist(&mut self) -> PResult<Vec<Expr>> {
        let mut v = vec![self.expr()?];
        while self.accept(",")? {
            v.push(self.expr()?);
        }
        Ok(v)
    }

    /// An expression.
    pub fn expr(&mut self) -> PResult<Expr> {
        self.subexpr(0)
    }

    fn subexpr(&mut self, limit: u8) -> PResult<Expr> {
        self.enter()?;
        let mut e = if let Some(op) = unop(&self.tok.tok) {
            let line = self.tok.line;
            self.advance()?;
            let operand = self.subexpr(12)?;
            // Fold negation of numeric literals (as Lua's constant folding does).
            match (op, &operand) {
                (UnOp::Neg, Expr::Int(i)) => Expr::Int(i.wrapping_neg()),
                (UnOp::Neg, Expr::Num(f)) => Expr::Num(-f),
                _ => Expr::Un(op, Box::new(operand), line),
            }
        } else {
            self.simple()?
        };
        while let Some((op, l, r)) = binop(&self.tok.tok) {
            if l <= limit {
                break;
            }
            let line = self.tok.line;
            self.advance()?;
            let rhs = self.subexpr(r)?;
            e = Expr::Bin(op, Box::new(e), Box::new(rhs), line);
        }
        self.depth -= 1;
        Ok(e)
    }

    fn simple(&mut self) -> PResult<Expr> {
        let e = match &self.tok.tok {
            Tok::Int(i) => Expr::Int(*i),
            Tok::Num(f) => Expr::Num(*f),
            Tok::Str(s) => Expr::Str(s.clone()),
            Tok::Sym("nil") => Expr::Nil,
            Tok::Sym("true") => Expr::True,
            Tok::Sym("false") => Expr::False,
            Tok::Sym("...") => {
                if !self.vararg.last().copied().unwrap_or(true) {
                    return Err(self.err_near("cannot use '...' outside a vararg function"));
                }
                Expr::Vararg
            }
            Tok::Sym("{") => return self.table(),
            Tok::Sym("function") => {
                let line = self.tok.line;
                self.advance()?;
                let b = self.func_body(false, line, String::new())?;
                return Ok(Expr::FuncDef(Box::new(b)));
            }
            _ => return self.suffixed(),
        };
        self.advance()?;
        Ok(e)
    }

    fn primary(&mut self) -> PResult<Expr> {
        match &self.tok.tok {
            Tok::Name(n) => {
                let n = n.clone();
                self.advance()?;
                Ok(Expr::Name(n))
            }
            Tok::Sym("(") => {
                let line = self.tok.line;
                self.advance()?;
                let e = self.expr()?;
                self.expect_match(")", "(", line)?;
                Ok(Expr::Parens(Box::new(e)))
            }
            _ => Err(self.err_near("unexpected symbol")),
        }
    }

    fn suffixed(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            let line = self.tok.line;
            match &self.tok.tok {
                Tok::Sym(".") => {
                    self.advance()?;
                    let n = self.name()?;
                    e = Expr::Idx(Box::new(e), Box::new(Expr::Str(n.into_bytes())), line);
                }
                Tok::Sym("[") => {
                    self.advance()?;
                    let k = self.expr()?;
                    self.expect("]")?;
                    e = Expr::Idx(Box::new(e), Box::new(k), line);
                }
                Tok::Sym(":") => {
                    self.advance()?;
                    let n = self.name()?;
                    let args = self.call_args()?;
                    e = Expr::Method(Box::new(e), n, args, line);
                }
                Tok::Sym("(") | Tok::Sym("{") | Tok::Str(_) => {
                    let args = self.call_args()?;
                    e = Expr::CallExpr(Box::new(e), args, line);
                }
                _ => return Ok(e),
            }
        }
    }

    fn call_args(&mut self) -> PResult<Vec<Expr>> {
        match &self.tok.tok {
            Tok::Str(s) => {
                let s = s.clone();
                self.advance()?;
                Ok(vec![Expr::Str(s)])
            }
            Tok::Sym("{") => Ok(vec![self.table()?]),
            Tok::Sym("(") => {
                let line = self.tok.line;
                self.advance()?;
                if self.accept(")")? {
                    return Ok(vec![]);
                }
                let args = self.exprlist()?;
                self.expect_match(")", "(", line)?;
                Ok(args)
            }
            _ => Err(self.err_near("function arguments expected")),
        }
    }

    fn table(&mut self) -> PResult<Expr> {
        let line = self.tok.line;
        self.expect("{")?;
        let mut fields = vec![];
        while !self.is("}") {
            if self.is("[") {
                self.advance()?;
                let k = self.expr()?;
                self.expect("]")?;
                self.expect("=")?;
                let v = self.expr()?;
                fields.push(Field::Keyed(k, v));
            } else if matches!(self.tok.tok, Tok::Name(_)) && *self.peek_ahead()? == Tok::Sym("=") {
                let n = self.name()?;
                self.advance()?;
                let v = self.expr()?;
                fields.push(Field::Keyed(Expr::Str(n.into_bytes()), v));
            } else {
                fields.push(Field::Pos(self.expr()?));
            }
            if !self.accept(",")? && !self.accept(";")? {
                break;
            }
        }
        self.expect_match("}", "{", line)?;
        Ok(Expr::Ctor(fields, line))
    }
}
