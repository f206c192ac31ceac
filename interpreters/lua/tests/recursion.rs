//! Deep guest recursion (issue 17's 10,000 levels) in every mode: the interpreter keeps Lua
//! frames on its own stack, so 10,000 and 190,000 levels run, and a runaway recursion ends in
//! Lua's `stack overflow` error (caught by `pcall`), never a native crash. With the JIT at a
//! low threshold, the recursive function's loop-free body is run by the plain loop and the
//! loop around the calls is compiled. PUC Lua 5.4 prints the same two lines.

mod support;

use std::path::Path;
use std::time::Duration;

const PROGRAM: &str = "
local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end
local function g(n) if n == 0 then return 0 end return g(n - 1) + 1 end
local s = 0
for i = 1, 30 do s = s + f(10000) end
print(s, g(190000))
print(pcall(g, 1000000))
";

#[test]
fn deep_recursion_runs_and_runaway_recursion_is_a_lua_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for mode in [
        &["--no-jit"][..],
        &["--jitcode"][..],
        &["--jit-param", "threshold=3"][..],
    ] {
        let mut args = mode.to_vec();
        args.extend(["-e", PROGRAM]);
        let mut run = support::run_lua(&args, dir, b"", Duration::from_secs(120));
        support::take_jit_summary(&mut run);
        assert_eq!(run.status, Some(0), "{mode:?}: {}", run.stderr_first_line());
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            "300000\t190000\nfalse\t(command line):3: stack overflow\n",
            "{mode:?}"
        );
    }
}
