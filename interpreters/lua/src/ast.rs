//! The syntax tree the parser builds and the compiler consumes. Names are unresolved here:
//! the compiler decides local, upvalue or global.

/// Binary operators (the arithmetic and bitwise ones share the VM's numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    IDiv,
    BAnd,
    BOr,
    BXor,
    Shl,
    Shr,
    Concat,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    Len,
    BNot,
}

/// An expression.
#[derive(Clone, Debug)]
pub enum Expr {
    Nil,
    True,
    False,
    Int(i64),
    Num(f64),
    Str(Vec<u8>),
    Vararg,
    FuncDef(Box<FuncBody>),
    Name(String),
    Idx(Box<Expr>, Box<Expr>, u32),
    CallExpr(Box<Expr>, Vec<Expr>, u32),
    Method(Box<Expr>, String, Vec<Expr>, u32),
    Bin(BinOp, Box<Expr>, Box<Expr>, u32),
    Un(UnOp, Box<Expr>, u32),
    Ctor(Vec<Field>, u32),
    Parens(Box<Expr>),
}

impl Expr {
    /// True for calls and `...`, whose value count is open.
    pub fn is_multi(&self) -> bool {
        matches!(self, Expr::CallExpr(..) | Expr::Method(..) | Expr::Vararg)
    }
}

/// A table constructor field.
#[derive(Clone, Debug)]
pub enum Field {
    Pos(Expr),
    Keyed(Expr, Expr),
}

/// A function's parameters and body.
#[derive(Clone, Debug)]
pub struct FuncBody {
    pub params: Vec<String>,
    pub vararg: bool,
    pub body: Block,
    pub line: u32,
    pub end_line: u32,
    pub name: String,
}

/// A block of statements.
pub type Block = Vec<Stat>;

/// A statement.
#[derive(Clone, Debug)]
pub enum Stat {
    /// `local names <attribs> = exprs`; the bool is `<const>`.
    Loc(Vec<(String, bool)>, Vec<Expr>, u32),
    Set(Vec<Expr>, Vec<Expr>, u32),
    CallStat(Expr, u32),
    Do(Block),
    WhileDo(Expr, Block, u32),
    RepeatUntil(Block, Expr, u32),
    If(Vec<(Expr, Block)>, Option<Block>, u32),
    NumFor(String, Expr, Expr, Option<Expr>, Block, u32),
    GenFor(Vec<String>, Vec<Expr>, Block, u32),
    LocalFunction(String, Box<FuncBody>, u32),
    Ret(Vec<Expr>, u32),
    Brk(u32),
    GoTo(String, u32),
    Lbl(String, u32),
    /// The end of a block, at the line of the token that closes it (for messages).
    End(u32),
}
