//! The command line's JIT options reach the driver of the thread that runs the program (the
//! interpreter runs on a thread of its own, with a bigger stack; the driver is per thread).

mod support;

use std::time::Duration;

/// The `[jit-summary]` line `lua ARGS -e CHUNK` prints with `METAJIT_LOG=summary`.
fn summary(args: &[&str]) -> String {
    let chunk = "local s = 0 for i = 1, 20000 do s = s + i end print(s)";
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-e", chunk]);
    let dir = std::env::temp_dir();
    let r = support::run_lua_env(
        &all,
        &[("METAJIT_LOG", "summary")],
        &dir,
        b"",
        Duration::from_secs(60),
    );
    assert_eq!(r.status, Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "200010000");
    let err = String::from_utf8_lossy(&r.stderr).to_string();
    err.lines()
        .find(|l| l.starts_with("[jit-summary]"))
        .unwrap_or_else(|| panic!("no summary in: {err}"))
        .to_string()
}

#[test]
fn jit_params_reach_the_interpreter_thread() {
    // A threshold above the loop's 20,000 turns: nothing is compiled.
    let high = summary(&["--jit-param", "threshold=1000000"]);
    assert!(high.contains("loops: 0,"), "{high}");
    // A low one: the loop is.
    let low = summary(&["--jit-param", "threshold=3"]);
    assert!(!low.contains("loops: 0,"), "{low}");
}
