//! A generator of random terminating Lua 5.4 programs, deterministic per seed, for checking the
//! interpreter's JIT against its interpreter (`random_programs.rs`) and, through
//! `tools/check-generator.sh`, against PUC Lua.
//!
//! A program is a prelude of helpers (a checksum `mix`, a NaN-normalizing `S`, guarded integer
//! division, a metatable `M` for objects) followed by *units*: each unit is a function generated
//! from its own seed, called under `pcall`, whose values are folded into the checksum that the
//! program prints after each unit. Units use integers, floats, strings, tables, closures with
//! shared upvalues, objects with metamethods (not `__concat`, see `str_expr`), method calls,
//! varargs, bounded recursion, numeric (integer and float) loops, `while`, `repeat`, `break`,
//! and caught errors.
//!
//! Everything is typed at generation time, so that no operation can raise an error PUC Lua would
//! raise (comparing a number with a string, bitwise operations on floats, integer division by
//! zero, calling nil); the only errors are the deliberate ones inside `pcall`. Termination: loops
//! have constant bounds and counters the body cannot assign; a function containing a loop (a
//! *heavy* one) is never called inside a loop; recursion is bounded by a small constant.
//!
//! This module knows the Lua language, not the interpreter: it only produces text.

#![allow(dead_code)]

use std::fmt::Write;

/// splitmix64: small, fast and good enough to draw program shapes from.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The static type of a generated variable or expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    /// Always an integer.
    Int,
    /// An integer or a float.
    Num,
    Str,
    Bool,
    /// An array of numbers.
    Tab,
    /// A table with metatable `M` and a numeric field `v`.
    Obj,
}

const TYPES: [Ty; 6] = [Ty::Int, Ty::Num, Ty::Str, Ty::Bool, Ty::Tab, Ty::Obj];

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    /// Loop counters and loop variables are read-only: the body must not change them.
    assignable: bool,
}

#[derive(Clone, Debug)]
struct Func {
    name: String,
    arity: usize,
    /// Contains a loop or calls a heavy function: never called inside a loop.
    heavy: bool,
}

/// The helpers every program starts with.
const PRELUDE: &str = r##"local H = 0
local function S(x)
  if x ~= x then return "nan" end
  local t = type(x)
  if t == "number" or t == "string" or t == "boolean" or t == "nil" then return tostring(x) end
  if t == "table" and getmetatable(x) == nil then return "table#" .. #x end
  return t
end
local function mix(x)
  local s = S(x)
  for i = 1, #s do H = (H * 31 + s:byte(i)) % 4294967296 end
end
local function idiv(a, b) if b == 0 then b = 3 end return a // b end
local function imod(a, b) if b == 0 then b = 7 end return a % b end
local function cut(s) if #s > 24 then return s:sub(1, 24) end return s end
local function num(s) return tonumber(s) or 0 end
local function tb(t, i) return t[i] or 0 end
local function V(x) if type(x) == "table" then return x.v end return x end
local M = {}
M.__index = M
local function MK(v) return setmetatable({v = v}, M) end
M.__add = function(a, b) return MK(V(a) + V(b)) end
M.__sub = function(a, b) return MK(V(a) - V(b)) end
M.__mul = function(a, b) return MK(V(a) * V(b)) end
M.__unm = function(a) return MK(-a.v) end
M.__eq = function(a, b) return a.v == b.v end
M.__lt = function(a, b) return a.v < b.v end
M.__le = function(a, b) return a.v <= b.v end
M.__len = function(a) return a.v end
M.__call = function(self, x) return self.v + x end
M.__concat = function(a, b) return cut(S(V(a)) .. S(V(b))) end
M.__tostring = function(a) return "O(" .. S(a.v) .. ")" end
function M:get() return self.v end
function M:bump(d) self.v = self.v + d return self end
local function va(...)
  local a, b = ...
  return (a or 0) + (b or 0) + select("#", ...)
end
"##;

/// Generates one unit: the text of `local function NAME() ... end`.
struct Unit {
    rng: Rng,
    out: String,
    indent: usize,
    vars: Vec<Var>,
    funcs: Vec<Func>,
    next_id: usize,
    loop_depth: usize,
    /// The generated function being written, if any (its body cannot see later names).
    in_func: usize,
    /// Heaviness of the function being written.
    body_heavy: bool,
    /// Statements still allowed in this unit.
    budget: usize,
}

impl Unit {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id)
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn vars_of(&self, ty: Ty, assignable: bool) -> Vec<usize> {
        (0..self.vars.len())
            .filter(|&i| {
                let v = &self.vars[i];
                (v.ty == ty || (ty == Ty::Num && v.ty == Ty::Int && !assignable))
                    && (!assignable || v.assignable)
            })
            .collect()
    }

    fn var(&mut self, ty: Ty) -> Option<String> {
        let c = self.vars_of(ty, false);
        if c.is_empty() {
            return None;
        }
        let i = *self.rng.pick(&c);
        Some(self.vars[i].name.clone())
    }

    fn callable(&self) -> Vec<usize> {
        (0..self.funcs.len())
            .filter(|&i| self.loop_depth == 0 || !self.funcs[i].heavy)
            .collect()
    }

    fn int_lit(&mut self) -> String {
        match self.rng.below(10) {
            0 => "math.maxinteger".into(),
            1 => "math.mininteger".into(),
            2 => format!("0x{:x}", self.rng.below(4096)),
            3 => format!("-{}", self.rng.below(100)),
            4 => format!("{}", self.rng.next_u64() as i64 >> self.rng.below(64))
                .replace("-9223372036854775808", "math.mininteger"),
            _ => format!("{}", self.rng.below(20)),
        }
    }

    fn float_lit(&mut self) -> String {
        self.rng
            .pick(&[
                "0.5", "-0.0", "1.5", "3.25", "1e10", "1e300", "-2.5", "0.1", "2.0", "1e-3",
                "0x1p4", "7.75",
            ])
            .to_string()
    }

    fn str_lit(&mut self) -> String {
        let s = self
            .rng
            .pick(&[
                "\"\"",
                "\"abc\"",
                "\"10\"",
                "\"0x1F\"",
                "\" 3.5 \"",
                "\"hello world\"",
                "\"a,b,c\"",
                "\"Lua\"",
                "\"x\"",
                "\"-7\"",
                "\"1e2\"",
                "'q\\n'",
            ])
            .to_string();
        // Parenthesized, so that a method call on it is valid: `("abc"):upper()`.
        format!("({s})")
    }

    /// An expression of type `ty`, at most `depth` levels deep.
    fn expr(&mut self, ty: Ty, depth: usize) -> String {
        let leaf = depth == 0 || self.rng.chance(1, 3);
        match ty {
            Ty::Int => self.int_expr(depth, leaf),
            Ty::Num => self.num_expr(depth, leaf),
            Ty::Str => self.str_expr(depth, leaf),
            Ty::Bool => self.bool_expr(depth, leaf),
            Ty::Tab => self.tab_expr(depth, leaf),
            Ty::Obj => self.obj_expr(depth, leaf),
        }
    }

    fn int_expr(&mut self, depth: usize, leaf: bool) -> String {
        if leaf {
            if self.rng.chance(2, 3) {
                if let Some(v) = self.var(Ty::Int) {
                    return v;
                }
            }
            return self.int_lit();
        }
        let d = depth - 1;
        match self.rng.below(14) {
            0 => format!("({} + {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            1 => format!("({} - {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            2 => format!("({} * {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            3 => format!("idiv({}, {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            4 => format!("imod({}, {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            5 => format!("({} & {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            6 => format!("({} | {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            7 => format!("({} ~ {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            8 => format!("({} << {})", self.expr(Ty::Int, d), self.rng.below(70)),
            9 => format!("({} >> {})", self.expr(Ty::Int, d), self.rng.below(70)),
            10 => format!("(~{})", self.expr(Ty::Int, d)),
            11 => format!("(#{})", self.expr(Ty::Str, d)),
            12 => format!("(#{})", self.expr(Ty::Tab, d)),
            _ => format!(
                "(math.tointeger({}) or {})",
                self.expr(Ty::Num, d),
                self.rng.below(9)
            ),
        }
    }

    fn num_expr(&mut self, depth: usize, leaf: bool) -> String {
        if leaf {
            return match self.rng.below(6) {
                0 => self.float_lit(),
                1 => self.int_lit(),
                _ => self.var(Ty::Num).unwrap_or_else(|| self.float_lit()),
            };
        }
        let d = depth - 1;
        match self.rng.below(27) {
            0 | 1 => format!("({} + {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            2 => format!("({} - {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            3 => format!("({} * {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            4 => format!("({} / {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            5 => format!("idiv({}, {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            6 => format!("imod({}, {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            7 => format!(
                "({} ^ {})",
                self.expr(Ty::Num, d),
                self.rng.pick(&["2", "0.5", "3", "-1"])
            ),
            8 => format!("(- {})", self.expr(Ty::Num, d)),
            9 => format!("math.abs({})", self.expr(Ty::Num, d)),
            10 => format!(
                "math.max({}, {})",
                self.expr(Ty::Num, d),
                self.expr(Ty::Num, d)
            ),
            11 => format!(
                "math.min({}, {})",
                self.expr(Ty::Num, d),
                self.expr(Ty::Num, d)
            ),
            12 => format!("math.floor({})", self.expr(Ty::Num, d)),
            13 => format!("num({})", self.expr(Ty::Str, d)),
            14 => {
                let t = self.expr(Ty::Tab, d);
                format!("tb({t}, imod({}, 6) + 1)", self.expr(Ty::Int, d))
            }
            15 => self.expr(Ty::Int, depth),
            16 => format!("{}.v", self.expr(Ty::Obj, d)),
            17 => format!("{}:get()", self.expr(Ty::Obj, d)),
            18 => format!("{}({})", self.expr(Ty::Obj, d), self.expr(Ty::Num, d)),
            22 => format!("(#{})", self.expr(Ty::Obj, d)),
            19 => format!("va({}, {})", self.expr(Ty::Num, d), self.expr(Ty::Num, d)),
            20 => format!(
                "({} and {} or {})",
                self.expr(Ty::Bool, d),
                self.expr(Ty::Num, d),
                self.expr(Ty::Num, d)
            ),
            21 => format!("math.sin({})", self.expr(Ty::Num, d)),
            23 => format!("math.sin({})", self.expr(Ty::Num, d)),
            // An optional field of an object, or of its class through `__index` (shapes).
            24 => {
                let f = *self.rng.pick(&["a", "b", "c", "w"]);
                format!(
                    "({}.{f} or {})",
                    self.expr(Ty::Obj, d),
                    self.expr(Ty::Num, d)
                )
            }
            _ => {
                let c = self.callable();
                if c.is_empty() {
                    return self.expr(Ty::Num, d);
                }
                let f = self.funcs[*self.rng.pick(&c)].clone();
                if f.heavy {
                    self.body_heavy = true;
                }
                let args: Vec<String> = (0..f.arity).map(|_| self.expr(Ty::Num, d)).collect();
                format!("{}({})", f.name, args.join(", "))
            }
        }
    }

    fn str_expr(&mut self, depth: usize, leaf: bool) -> String {
        if leaf {
            if self.rng.chance(1, 2) {
                if let Some(v) = self.var(Ty::Str) {
                    return v;
                }
            }
            return self.str_lit();
        }
        let d = depth - 1;
        match self.rng.below(15) {
            0 | 1 => format!(
                "cut({} .. {})",
                self.expr(Ty::Str, d),
                self.expr(Ty::Str, d)
            ),
            2 => format!("S({})", self.expr(Ty::Num, d)),
            3 => format!("{}:upper()", self.expr(Ty::Str, d)),
            4 => format!("string.lower({})", self.expr(Ty::Str, d)),
            5 => format!("{}:reverse()", self.expr(Ty::Str, d)),
            6 => format!(
                "{}:sub({}, {})",
                self.expr(Ty::Str, d),
                self.expr(Ty::Int, d),
                self.expr(Ty::Int, d)
            ),
            7 => format!(
                "cut({}:rep(imod({}, 3)))",
                self.expr(Ty::Str, d),
                self.expr(Ty::Int, d)
            ),
            8 => format!(
                "string.format(\"%d:%x\", {}, {})",
                self.expr(Ty::Int, d),
                self.expr(Ty::Int, d)
            ),
            9 => format!("cut(({}:gsub(\"[%a%d]\", \"%0.\")))", self.expr(Ty::Str, d)),
            10 => format!("({}:match(\"%a+\") or \"\")", self.expr(Ty::Str, d)),
            11 => format!("string.char(65 + imod({}, 26))", self.expr(Ty::Int, d)),
            // Not `obj .. s` (`__concat`): PUC Lua 5.4.4 reads freed memory when a `__concat`
            // call meets a stack reallocation (found by tools/check-generator.sh, confirmed
            // with valgrind), so programs using it cannot be validated against it.
            12 => format!(
                "cut(tostring({}) .. {})",
                self.expr(Ty::Obj, d),
                self.str_lit()
            ),
            13 => format!("tostring({})", self.expr(Ty::Obj, d)),
            _ => format!("tostring({})", self.expr(Ty::Bool, d)),
        }
    }

    fn bool_expr(&mut self, depth: usize, leaf: bool) -> String {
        if leaf {
            if self.rng.chance(1, 2) {
                if let Some(v) = self.var(Ty::Bool) {
                    return v;
                }
            }
            return self.rng.pick(&["true", "false"]).to_string();
        }
        let d = depth - 1;
        let cmp = *self.rng.pick(&["<", "<=", "==", "~=", ">", ">="]);
        match self.rng.below(10) {
            0..=2 => format!(
                "({} {cmp} {})",
                self.expr(Ty::Num, d),
                self.expr(Ty::Num, d)
            ),
            3 => format!(
                "({} {cmp} {})",
                self.expr(Ty::Str, d),
                self.expr(Ty::Str, d)
            ),
            4 => format!("(not {})", self.expr(Ty::Bool, d)),
            5 => format!(
                "({} and {})",
                self.expr(Ty::Bool, d),
                self.expr(Ty::Bool, d)
            ),
            6 => format!("({} or {})", self.expr(Ty::Bool, d), self.expr(Ty::Bool, d)),
            7 => {
                let op = *self.rng.pick(&["<", "<=", "==", "~="]);
                format!("({} {op} {})", self.expr(Ty::Obj, d), self.expr(Ty::Obj, d))
            }
            8 => format!("({} == {})", self.expr(Ty::Int, d), self.expr(Ty::Int, d)),
            _ => format!("(math.type({}) == \"integer\")", self.expr(Ty::Num, d)),
        }
    }

    fn tab_expr(&mut self, depth: usize, leaf: bool) -> String {
        if leaf || self.rng.chance(1, 2) {
            if let Some(v) = self.var(Ty::Tab) {
                return v;
            }
        }
        let d = depth.saturating_sub(1);
        let n = self.rng.below(5);
        let items: Vec<String> = (0..n).map(|_| self.expr(Ty::Num, d)).collect();
        format!("{{{}}}", items.join(", "))
    }

    fn obj_expr(&mut self, depth: usize, leaf: bool) -> String {
        if leaf {
            if self.rng.chance(2, 3) {
                if let Some(v) = self.var(Ty::Obj) {
                    return v;
                }
            }
            let v = self.expr(Ty::Num, 0);
            return format!("MK({v})");
        }
        let d = depth - 1;
        match self.rng.below(6) {
            0 => format!("({} + {})", self.expr(Ty::Obj, d), self.expr(Ty::Num, d)),
            1 => format!("({} - {})", self.expr(Ty::Num, d), self.expr(Ty::Obj, d)),
            2 => format!("({} * {})", self.expr(Ty::Obj, d), self.expr(Ty::Obj, d)),
            3 => format!("(- {})", self.expr(Ty::Obj, d)),
            4 => format!("MK({})", self.expr(Ty::Num, d)),
            _ => format!("{}:bump({})", self.expr(Ty::Obj, d), self.expr(Ty::Num, d)),
        }
    }

    fn declare(&mut self, ty: Ty, assignable: bool) -> String {
        let name = self.fresh("v");
        self.vars.push(Var {
            name: name.clone(),
            ty,
            assignable,
        });
        name
    }

    /// A block of `n` statements in a new scope (the caller writes the keywords around it).
    fn block(&mut self, n: usize) {
        let mark = self.vars.len();
        let fmark = self.funcs.len();
        self.indent += 1;
        for _ in 0..n {
            self.stmt();
        }
        self.indent -= 1;
        self.vars.truncate(mark);
        self.funcs.truncate(fmark);
    }

    fn loop_iterations(&mut self) -> usize {
        if self.loop_depth == 0 {
            10 + self.rng.below(90)
        } else {
            1 + self.rng.below(5)
        }
    }

    fn stmt(&mut self) {
        if self.budget == 0 {
            let e = self.expr(Ty::Num, 1);
            self.line(&format!("mix({e})"));
            return;
        }
        self.budget -= 1;
        let nested = self.loop_depth < 2 && self.indent < 5;
        let k = self.rng.below(26);
        match k {
            0..=3 => {
                let ty = *self.rng.pick(&TYPES);
                let e = self.expr(ty, 3);
                let name = self.declare(ty, true);
                self.line(&format!("local {name} = {e}"));
            }
            4..=7 => {
                let ty = *self.rng.pick(&TYPES);
                let c = self.vars_of(ty, true);
                if c.is_empty() {
                    let e = self.expr(Ty::Num, 2);
                    self.line(&format!("mix({e})"));
                    return;
                }
                let i = *self.rng.pick(&c);
                let name = self.vars[i].name.clone();
                let e = self.expr(ty, 3);
                self.line(&format!("{name} = {e}"));
            }
            8 | 9 => {
                let ty = *self.rng.pick(&TYPES);
                let e = self.expr(ty, 3);
                self.line(&format!("mix({e})"));
            }
            10 => {
                let t = self.expr(Ty::Tab, 1);
                let e = self.expr(Ty::Num, 2);
                if self.rng.chance(1, 2) {
                    // Capped, so that tables (and loops over them) stay small.
                    self.line(&format!(
                        "do local t = {t} if #t < 32 then t[#t + 1] = {e} end end"
                    ));
                } else {
                    let i = self.expr(Ty::Int, 1);
                    self.line(&format!("do local t = {t} t[imod({i}, 8) + 1] = {e} end"));
                }
            }
            11 if nested => {
                let c = self.expr(Ty::Bool, 2);
                self.line(&format!("if {c} then"));
                let n = 1 + self.rng.below(3);
                self.block(n);
                if self.rng.chance(1, 2) {
                    self.line("else");
                    let n = 1 + self.rng.below(2);
                    self.block(n);
                }
                self.line("end");
            }
            12 | 13 if nested => {
                let n = self.loop_iterations();
                self.body_heavy = true;
                let name = self.fresh("i");
                let header = match self.rng.below(4) {
                    0 => format!("for {name} = {n}, 1, -1 do"),
                    1 => format!("for {name} = 1, {}, {} do", n * 2, 2),
                    2 => format!("for {name} = 0.5, {n}.5, 0.5 do"),
                    _ => format!("for {name} = 1, {n} do"),
                };
                let float = header.contains("0.5");
                self.line(&header);
                self.vars.push(Var {
                    name,
                    ty: if float { Ty::Num } else { Ty::Int },
                    assignable: false,
                });
                self.loop_body();
                self.vars.pop();
                self.line("end");
            }
            14 if nested => {
                let n = self.loop_iterations();
                self.body_heavy = true;
                let w = self.fresh("w");
                self.line(&format!("local {w} = 0"));
                // The condition runs on every pass: generate it as loop code (no heavy calls).
                self.loop_depth += 1;
                let cond = if self.rng.chance(1, 2) {
                    format!("{w} < {n}")
                } else {
                    format!("{w} < {n} and {}", self.expr(Ty::Bool, 1))
                };
                self.loop_depth -= 1;
                self.line(&format!("while {cond} do"));
                self.line(&format!("  {w} = {w} + 1"));
                self.vars.push(Var {
                    name: w,
                    ty: Ty::Int,
                    assignable: false,
                });
                self.loop_body();
                self.vars.pop();
                self.line("end");
            }
            15 if nested => {
                let n = self.loop_iterations();
                self.body_heavy = true;
                let r = self.fresh("r");
                self.line(&format!("local {r} = 0"));
                self.line("repeat");
                self.line(&format!("  {r} = {r} + 1"));
                self.vars.push(Var {
                    name: r.clone(),
                    ty: Ty::Int,
                    assignable: false,
                });
                self.loop_body();
                self.loop_depth += 1;
                let c = self.expr(Ty::Bool, 1);
                self.loop_depth -= 1;
                self.vars.pop();
                self.line(&format!("until {r} >= {n} or ({c} and {r} > {})", n / 2));
            }
            16 | 17 if self.loop_depth == 0 && self.indent < 4 => self.function(),
            18 if self.loop_depth == 0 => {
                let f = self.fresh("rec");
                let depth = 1 + self.rng.below(20);
                let n = self.fresh("n");
                self.line(&format!("local {f}"));
                self.line(&format!("{f} = function({n}, acc)"));
                self.line(&format!("  if {n} <= 0 then return acc end"));
                self.vars.push(Var {
                    name: n.clone(),
                    ty: Ty::Int,
                    assignable: false,
                });
                self.vars.push(Var {
                    name: "acc".into(),
                    ty: Ty::Num,
                    assignable: false,
                });
                let e = self.expr(Ty::Num, 2);
                self.vars.truncate(self.vars.len() - 2);
                self.line(&format!("  return {f}({n} - 1, {e})"));
                self.line("end");
                let start = self.expr(Ty::Num, 1);
                let v = self.declare(Ty::Num, true);
                self.line(&format!("local {v} = {f}({depth}, {start})"));
            }
            19 => {
                let ok = self.fresh("ok");
                let body = match self.rng.below(4) {
                    0 => format!(
                        "error(\"e\" .. {}, {})",
                        self.expr(Ty::Str, 1),
                        self.rng.below(2)
                    ),
                    1 => format!("local z = nil return z.f + {}", self.expr(Ty::Num, 1)),
                    2 => format!("error({{{}}})", self.expr(Ty::Num, 1)),
                    _ => format!("return {}", self.expr(Ty::Num, 2)),
                };
                self.line(&format!("local {ok}, e{ok} = pcall(function() {body} end)"));
                self.line(&format!(
                    "mix({ok}) mix(type(e{ok}) == \"table\" and e{ok}[1] or e{ok})"
                ));
            }
            20 => {
                let a = self.vars_of(Ty::Num, true);
                if a.len() >= 2 {
                    let x = self.vars[*self.rng.pick(&a)].name.clone();
                    let y = self.vars[*self.rng.pick(&a)].name.clone();
                    self.line(&format!("{x}, {y} = {y}, {x}"));
                } else {
                    let e = self.expr(Ty::Str, 2);
                    self.line(&format!("mix({e})"));
                }
            }
            21 if self.loop_depth > 0 => {
                let c = self.expr(Ty::Bool, 2);
                self.line(&format!("if {c} then break end"));
            }
            22 => {
                let t = self.expr(Ty::Tab, 1);
                self.line(&format!(
                    "do local s = 0 for _, x in ipairs({t}) do s = s + x end mix(s) end"
                ));
            }
            // Objects' fields come and go, in any order, so that objects of one class have
            // many shapes; an integer or a computed string key makes a dictionary.
            23 => {
                let o = self.expr(Ty::Obj, 1);
                let f = *self.rng.pick(&["a", "b", "c"]);
                let e = if self.rng.chance(1, 3) {
                    "nil".to_string()
                } else {
                    self.expr(Ty::Num, 2)
                };
                let place = match self.rng.below(10) {
                    0 => format!("o[{}]", 1 + self.rng.below(2)),
                    1 => format!("o[\"{f}\" .. \"{f}\"]"),
                    _ => format!("o.{f}"),
                };
                self.line(&format!("do local o = {o} {place} = {e} end"));
            }
            // The class's fields, which objects without their own read through `__index`.
            24 => {
                let f = *self.rng.pick(&["a", "b", "c", "w"]);
                let e = if self.rng.chance(1, 3) {
                    "nil".to_string()
                } else {
                    self.expr(Ty::Num, 2)
                };
                self.line(&format!("M.{f} = {e}"));
            }
            _ => {
                let e = self.expr(Ty::Num, 3);
                self.line(&format!("mix({e})"));
            }
        }
    }

    fn loop_body(&mut self) {
        self.loop_depth += 1;
        let n = 1 + self.rng.below(4);
        self.block(n);
        self.loop_depth -= 1;
    }

    /// A local closure over the current variables, which may assign them (shared upvalues).
    fn function(&mut self) {
        let name = self.fresh("f");
        let arity = self.rng.below(3);
        let params: Vec<String> = (0..arity).map(|_| self.fresh("p")).collect();
        self.line(&format!("local function {name}({})", params.join(", ")));
        let mark = self.vars.len();
        for p in &params {
            self.vars.push(Var {
                name: p.clone(),
                ty: Ty::Num,
                assignable: true,
            });
        }
        let saved_heavy = std::mem::replace(&mut self.body_heavy, false);
        self.in_func += 1;
        self.indent += 1;
        let n = 1 + self.rng.below(4);
        let fmark = self.funcs.len();
        for _ in 0..n {
            self.stmt();
        }
        self.funcs.truncate(fmark);
        let r = self.expr(Ty::Num, 2);
        self.line(&format!("return {r}"));
        self.indent -= 1;
        self.in_func -= 1;
        self.vars.truncate(mark);
        let heavy = std::mem::replace(&mut self.body_heavy, saved_heavy);
        self.line("end");
        self.funcs.push(Func {
            name: name.clone(),
            arity,
            heavy,
        });
        if self.rng.chance(2, 3) {
            if heavy {
                self.body_heavy = true;
            }
            let args: Vec<String> = (0..arity).map(|_| self.expr(Ty::Num, 1)).collect();
            self.line(&format!("mix({name}({}))", args.join(", ")));
        }
    }
}

/// The text of unit `index` (a function named `unit{index}`) generated from `seed`.
pub fn unit(seed: u64, index: usize) -> String {
    let mut u = Unit {
        rng: Rng::new(seed),
        out: String::new(),
        indent: 1,
        vars: Vec::new(),
        funcs: Vec::new(),
        next_id: 0,
        loop_depth: 0,
        in_func: 0,
        body_heavy: false,
        budget: 40,
    };
    let n = 6 + u.rng.below(10);
    for _ in 0..n {
        u.stmt();
    }
    let names: Vec<String> = u.vars.iter().map(|v| v.name.clone()).collect();
    for v in names {
        u.line(&format!("mix({v})"));
    }
    u.line("return H");
    format!("local function unit{index}()\n{}end\n", u.out)
}

/// A whole program: the prelude, then units with seeds `seeds`, each run under `pcall` and
/// followed by a line with the checksum.
pub fn program(seeds: &[u64]) -> String {
    let mut s =
        format!("-- generated by interpreters/lua/tests/gen, unit seeds {seeds:?}\n{PRELUDE}");
    for (i, seed) in seeds.iter().enumerate() {
        s += &unit(*seed, i);
        writeln!(s, "print(\"unit {i} seed {seed}\", pcall(unit{i}))").unwrap();
        writeln!(s, "print(\"H\", H)").unwrap();
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn deterministic() {
        assert_eq!(super::program(&[1, 2, 3]), super::program(&[1, 2, 3]));
        assert_ne!(super::unit(1, 0), super::unit(2, 0));
    }
}
