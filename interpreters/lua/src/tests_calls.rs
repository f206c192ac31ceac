//! The plain loop's calls and returns without `'frame`'s entry, and its two-word copies of
//! field reads, methods, moves and results (`Vm::run`, `exec::copy_words`): a program that
//! checks itself, in every mode.

use crate::vm::Vm;
use crate::Mode;

const PROGRAM: &str = r#"
-- Field reads into the object's own register and into another one, from objects of two
-- layouts (a field given later sits at another position), through __index tables and
-- functions.
local A = {}
A.__index = A
function A.new(link, v) return setmetatable({link = link, v = v}, A) end
function A:get() return self.v end
local head = nil
for i = 1, 50 do
  local o = A.new(nil, i)
  if i % 2 == 0 then o.link = head else o.extra = i; o.link = head end
  head = o
end
local p, sum, n = head, 0, 0
while p do sum = sum + p:get() + p.v; n = n + 1; p = p.link end
assert(sum == 2 * 1275 and n == 50)
local q = head
q = q.link.link.link
assert(q.v == 47)
local F = setmetatable({}, {__index = function(_, k) return k .. "!" end})
local x = F.abc
assert(x == "abc!")
F = F.xyz
assert(F == "xyz!")
local deep = setmetatable({}, {__index = setmetatable({}, {__index = {z = 7}})})
assert(deep.z == 7)
local obj = {inner = {val = 5, m = function(self, k) return self.val * k end}}
assert(obj.inner:m(3) == 15)
assert(("ab"):rep(3) == "ababab")

-- Calls and returns: Lua functions, a table with __call, natives, varargs, tail calls, results
-- wanted 0, 1, several and all, errors under pcall, recursion that grows the stack.
local C = setmetatable({}, {__call = function(self, a, b) return a + b, a * b end})
local function pair(a, b) return a, b end
local function va(...) local t = {...}; return select('#', ...), ... end
local function tail(k, acc) if k == 0 then return acc end return tail(k - 1, acc + k) end
local function viaC(a) local s, m = C(a, 2); return s + m end
local total = 0
for i = 1, 100 do
  local s, m = C(i, 3)
  local a, b = pair(i, s)
  local c, d, e = va(i, m)
  total = total + s + m + a + b + c + d + e + viaC(i) + tail(10, 0)
  pair(i)
end
assert(total == 100 * 55 + 2 * 5050 + 2 * (5050 + 300) + 100 * 2 + 5050 + 3 * 5050 + 5050 + 5050 * 2 + 200 + 5050 * 2)
local ok, err = pcall(function() local t = nil; return t.x end)
assert(not ok and err:find("attempt to index"))
local function rec(k) if k == 0 then return 0 end local r = rec(k - 1); return r + A.new(nil, 1).v end
assert(rec(20000) == 20000)
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
assert(fib(20) == 6765)
RESULT = 1
"#;

#[test]
fn calls_returns_and_field_reads_in_every_mode() {
    for mode in [Mode::NoJit, Mode::Jitcode, Mode::Jit] {
        let mut vm = Vm::new();
        vm.mode = mode;
        let f = vm.load(PROGRAM.as_bytes(), "calls").unwrap();
        if let Err(e) = vm.run_main(&f, vec![]) {
            panic!("mode {mode:?}: {}", crate::error_report(&mut vm, &e));
        }
        assert!(
            matches!(vm.get_global("RESULT"), crate::value::Value::Int(1)),
            "mode {mode:?}"
        );
    }
}
