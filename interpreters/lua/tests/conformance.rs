//! The conformance suite: every program of `tests/conformance/` (files named `mod_*.lua` are
//! modules the programs require) runs in three modes — JIT off, JIT on at a low threshold, and
//! jitcode only — and must give PUC Lua 5.4's stdout (`tests/expected/NAME.out`), and for a
//! program that fails, its exit status and the first line of stderr (`NAME.err`, see
//! `tools/regen-expected.sh`, which writes both files with `lua5.4`).
//!
//! Programs run from `tests/conformance/` as `lua [MODE FLAGS] NAME.lua`, with `NAME.in` (or
//! nothing) on stdin. Every mismatch is reported in one failure. Programs that the interpreter
//! does not pass yet are listed in [`KNOWN_FAILING`]; the test checks that each of them still
//! fails, so that the list only shrinks.
//!
//! Environment (for working on the interpreter; CI sets none of them):
//! - `LUA_CONFORMANCE_MODES=nojit,jit,jitcode`: run only these modes;
//! - `LUA_CONFORMANCE_FILTER=text`: run only programs whose name contains `text`;
//! - `LUA_TEST_THREADS=n`: worker threads (default: the machine's parallelism);
//! - `LUA_CONFORMANCE_PRINT_FAILING=1`: print every failing pair as a `KNOWN_FAILING` entry.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::{
    diff_summary, parallel_map, run_lua, run_lua_env, take_gc_stats, take_jit_summary, Run,
};

/// The modes a program runs in, with the flags that select them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    NoJit,
    Jit,
    Jitcode,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::NoJit, Mode::Jit, Mode::Jitcode];

    fn flags(self) -> &'static [&'static str] {
        match self {
            Mode::NoJit => &["--no-jit"],
            // A threshold of 3 compiles every loop that runs a few times: the programs are small.
            Mode::Jit => &["--jit-param", "threshold=3"],
            Mode::Jitcode => &["--jitcode"],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::NoJit => "nojit",
            Mode::Jit => "jit",
            Mode::Jitcode => "jitcode",
        }
    }
}

/// All three modes, for [`KNOWN_FAILING`] entries (unused while the list is empty).
#[allow(dead_code)]
const ALL: &[Mode] = &Mode::ALL;

/// Programs that the interpreter does not pass yet, with the modes they fail in (each entry
/// stands for its (program, mode) pairs). The test fails when one of these pairs passes: remove
/// it from the list then. Empty since the `lua` branch's b0136e0: every program passes in every
/// mode.
const KNOWN_FAILING: &[(&str, &[Mode])] = &[];

/// The time one program may take in one mode before it counts as hung.
const LIMIT: Duration = Duration::from_secs(30);

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn programs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir().join("conformance"))
        .expect("tests/conformance exists")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".lua") && !n.starts_with("mod_"))
        .map(|n| n.trim_end_matches(".lua").to_string())
        .collect();
    v.sort();
    v
}

/// What PUC Lua gave for one program.
struct Expected {
    stdout: Vec<u8>,
    status: i32,
    stderr_first_line: String,
    traceback: bool,
}

fn expected(name: &str) -> Expected {
    let exp = dir().join("expected");
    let stdout = std::fs::read(exp.join(format!("{name}.out")))
        .unwrap_or_else(|e| panic!("expected/{name}.out: {e} (run tools/regen-expected.sh)"));
    let Ok(err) = std::fs::read_to_string(exp.join(format!("{name}.err"))) else {
        return Expected {
            stdout,
            status: 0,
            stderr_first_line: String::new(),
            traceback: false,
        };
    };
    let field = |key: &str| -> String {
        err.lines()
            .find_map(|l| {
                l.strip_prefix(key)
                    .map(|v| v.strip_prefix(' ').unwrap_or(v).to_string())
            })
            .unwrap_or_else(|| panic!("expected/{name}.err has no `{key}` line"))
    };
    Expected {
        stdout,
        status: field("status").parse().expect("a numeric status"),
        stderr_first_line: field("stderr"),
        traceback: field("traceback") == "yes",
    }
}

/// Every way `got` differs from `want`, or an empty list.
fn mismatches(got: &Run, want: &Expected) -> Vec<String> {
    let mut v = Vec::new();
    if got.timed_out {
        v.push(format!("timed out after {} s", LIMIT.as_secs()));
    }
    if got.stdout != want.stdout {
        v.push(format!(
            "stdout {}",
            diff_summary(&got.stdout, &want.stdout)
        ));
    }
    if got.status != Some(want.status) {
        v.push(format!(
            "status {} expected {}",
            got.status_text(),
            want.status
        ));
    }
    let first = got.stderr_first_line();
    if first != want.stderr_first_line {
        v.push(format!(
            "stderr line 1 {first:?} expected {:?}",
            want.stderr_first_line
        ));
    }
    let has_traceback = String::from_utf8_lossy(&got.stderr)
        .lines()
        .any(|l| l == "stack traceback:");
    if has_traceback != want.traceback {
        v.push(format!(
            "stack traceback {} expected {}",
            has_traceback, want.traceback
        ));
    }
    if want.status == 0 && want.stderr_first_line.is_empty() && !got.stderr.is_empty() {
        let s: String = String::from_utf8_lossy(&got.stderr)
            .chars()
            .take(300)
            .collect();
        v.push(format!("unexpected stderr {s:?}"));
    }
    v
}

fn selected_modes() -> Vec<Mode> {
    match std::env::var("LUA_CONFORMANCE_MODES") {
        Ok(s) => {
            let want: Vec<&str> = s.split(',').map(str::trim).collect();
            for w in &want {
                assert!(
                    Mode::ALL.iter().any(|m| m.name() == *w),
                    "unknown mode {w:?} in LUA_CONFORMANCE_MODES"
                );
            }
            Mode::ALL
                .into_iter()
                .filter(|m| want.contains(&m.name()))
                .collect()
        }
        Err(_) => Mode::ALL.to_vec(),
    }
}

#[test]
fn conformance() {
    let all = programs();
    assert!(
        all.len() >= 150,
        "the corpus has {} programs, fewer than 150",
        all.len()
    );
    for (p, _) in KNOWN_FAILING {
        assert!(
            all.iter().any(|a| a == p),
            "KNOWN_FAILING names {p}, which is not a program"
        );
    }
    let filter = std::env::var("LUA_CONFORMANCE_FILTER").unwrap_or_default();
    let modes = selected_modes();
    let jobs: Vec<(String, Mode)> = all
        .iter()
        .filter(|p| p.contains(&filter))
        .flat_map(|p| modes.iter().map(move |m| (p.clone(), *m)))
        .collect();
    let cwd = dir().join("conformance");
    let start = Instant::now();
    let results = parallel_map(&jobs, support::threads(), |(name, mode)| {
        let want = expected(name);
        let stdin = std::fs::read(cwd.join(format!("{name}.in"))).unwrap_or_default();
        let file = format!("{name}.lua");
        let mut args: Vec<&str> = mode.flags().to_vec();
        args.push(&file);
        let t = Instant::now();
        // With the JIT on, meta-jit's summary (on stderr, taken out before the comparison)
        // says whether the run compiled anything.
        let env: &[(&str, &str)] = if *mode == Mode::Jit {
            &[("METAJIT_LOG", "summary")]
        } else {
            &[]
        };
        let mut got = run_lua_env(&args, env, &cwd, &stdin, LIMIT);
        let compiled = take_jit_summary(&mut got);
        (mismatches(&got, &want), t.elapsed(), compiled)
    });
    let known: BTreeSet<(&str, Mode)> = KNOWN_FAILING
        .iter()
        .flat_map(|(p, ms)| ms.iter().map(move |m| (*p, *m)))
        .collect();
    let mut failures = Vec::new();
    let mut now_passing = Vec::new();
    let mut still_failing = 0;
    let mut slowest: Vec<(Duration, String)> = Vec::new();
    let jit_compiled = results.iter().filter(|r| r.2).count();
    for ((name, mode), (problems, took, _)) in jobs.iter().zip(&results) {
        slowest.push((*took, format!("{name} ({})", mode.name())));
        let is_known = known.contains(&(name.as_str(), *mode));
        match (problems.is_empty(), is_known) {
            (true, true) => now_passing.push(format!("{name} ({})", mode.name())),
            (false, true) => still_failing += 1,
            (true, false) => {}
            (false, false) => {
                failures.push(format!("{name} ({}): {}", mode.name(), problems.join("; ")))
            }
        }
    }
    slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
    if std::env::var_os("LUA_CONFORMANCE_PRINT_FAILING").is_some() {
        for ((name, mode), (problems, _, _)) in jobs.iter().zip(&results) {
            if !problems.is_empty() {
                println!("    (\"{name}\", Mode::{mode:?}),");
            }
        }
    }
    println!(
        "conformance: {} programs x {} modes = {} runs in {:.1} s; {} known-failing pairs listed, {} still fail",
        jobs.len() / modes.len().max(1),
        modes.len(),
        jobs.len(),
        start.elapsed().as_secs_f64(),
        known.len(),
        still_failing
    );
    let slow: Vec<String> = slowest
        .iter()
        .take(5)
        .map(|(d, n)| format!("{n} {:.2} s", d.as_secs_f64()))
        .collect();
    println!("slowest: {}", slow.join(", "));
    if modes.contains(&Mode::Jit) {
        println!(
            "JIT mode: {jit_compiled} programs compiled a loop or a bridge (METAJIT_LOG=summary)"
        );
    }
    let mut msg = String::new();
    if !failures.is_empty() {
        msg += &format!(
            "{} of {} runs differ from PUC Lua 5.4:\n  {}\n",
            failures.len(),
            jobs.len(),
            failures.join("\n  ")
        );
    }
    if !now_passing.is_empty() {
        msg += &format!(
            "{} runs listed in KNOWN_FAILING now pass; remove them from the list:\n  {}\n",
            now_passing.len(),
            now_passing.join("\n  ")
        );
    }
    assert!(msg.is_empty(), "{msg}");
}

/// The name of `tests/gc/roots.lua` among the corpus's programs in the stress test.
const ROOTS: &str = "gc/roots";

/// The corpus again, JIT off and on, with the collector running all the time: the plain loop
/// collects at every fifth call or backward jump (`LUA_GC_STRESS=5`; set `LUA_GC_STRESS` to
/// choose another period, 1 for every one), and the portal and compiled
/// code whenever 4 KiB were allocated (or twice the live bytes). A value that the VM's roots
/// miss (a native's captured value, an argument, an error in flight) is freed at the next
/// collection and the program's output changes or it crashes. The two stack-overflow programs
/// are left out: a collection there scans a stack of 200,000 frames, at every call.
/// `tests/gc/roots.lua` (expected output `roots.out`, from `lua5.4`) runs too: it is written
/// for this test, with values that only a native, an iterator, a metamethod or an error holds;
/// it is not in the corpus, whose programs the fuzz test mutates.
#[test]
fn conformance_while_collecting_all_the_time() {
    let filter = std::env::var("LUA_CONFORMANCE_FILTER").unwrap_or_default();
    let modes = [Mode::NoJit, Mode::Jit];
    let mut names: Vec<String> = programs()
        .into_iter()
        .filter(|p| !p.contains("stack_overflow"))
        .collect();
    names.push(ROOTS.to_string());
    let jobs: Vec<(String, Mode)> = names
        .into_iter()
        .filter(|p| p.contains(&filter))
        .flat_map(|p| modes.iter().map(move |m| (p.clone(), *m)))
        .collect();
    let corpus = dir().join("conformance");
    let stress = std::env::var("LUA_GC_STRESS").unwrap_or_else(|_| "5".into());
    let start = Instant::now();
    let results = parallel_map(&jobs, support::threads(), |(name, mode)| {
        let (cwd, file, want) = if name == ROOTS {
            let stdout = std::fs::read(dir().join("gc/roots.out")).unwrap();
            let want = Expected {
                stdout,
                status: 0,
                stderr_first_line: String::new(),
                traceback: false,
            };
            (dir().join("gc"), "roots.lua".to_string(), want)
        } else {
            (corpus.clone(), format!("{name}.lua"), expected(name))
        };
        let stdin = std::fs::read(cwd.join(format!("{name}.in"))).unwrap_or_default();
        let mut args: Vec<&str> = mode.flags().to_vec();
        args.push(&file);
        let env = [
            ("LUA_GC_STRESS", stress.as_str()),
            ("LUA_GC_THRESHOLD", "4096"),
            ("LUA_GC_STATS", "1"),
        ];
        let mut got = run_lua_env(&args, &env, &cwd, &stdin, LIMIT);
        let stats = take_gc_stats(&mut got);
        (mismatches(&got, &want), stats)
    });
    let mut failures = Vec::new();
    let mut collections = 0;
    let mut in_compiled = 0;
    let mut roots_collections = Vec::new();
    for ((name, mode), (problems, stats)) in jobs.iter().zip(&results) {
        let Some(stats) = stats else {
            // `os.exit` ends the process before the statistics are written.
            let src = std::fs::read_to_string(corpus.join(format!("{name}.lua"))).unwrap();
            if !src.contains("os.exit") {
                failures.push(format!("{name} ({}): no gc stats line", mode.name()));
            }
            continue;
        };
        collections += stats.collections;
        in_compiled += stats.in_compiled_code;
        if name == ROOTS {
            roots_collections.push(stats.collections);
        }
        if stats.abandoned > 0 || stats.skipped_untraceable > 0 {
            failures.push(format!(
                "{name} ({}): {} collections abandoned, {} skipped (untraceable root)",
                mode.name(),
                stats.abandoned,
                stats.skipped_untraceable
            ));
        }
        if !problems.is_empty() {
            failures.push(format!("{name} ({}): {}", mode.name(), problems.join("; ")));
        }
    }
    println!(
        "collecting all the time: {} runs in {:.1} s, {collections} collections ({in_compiled} in compiled code)",
        jobs.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if filter.is_empty() {
        assert!(
            collections > 20 * jobs.len() as u64,
            "only {collections} collections in {} runs",
            jobs.len()
        );
        // The stress mode's extra collections happen at the plain loop's calls and returns;
        // with the JIT on, the portal follows most calls itself, and collects where the heap
        // asks (79 times when the portal began following calls, 158 with the JIT off).
        assert!(
            roots_collections.len() == 2 && roots_collections.iter().all(|&c| c > 50),
            "roots.lua collected {roots_collections:?} times (JIT off, on)"
        );
    }
}

/// `-e CHUNK`, the script's arguments in `arg` and `...`, and an error from `-e`.
#[test]
fn command_line() {
    let cwd = dir().join("conformance");
    let limit = Duration::from_secs(30);
    let r = run_lua(&["-e", "print(1 + 1, 2^53, 'x' .. 1)"], &cwd, b"", limit);
    assert_eq!(
        (r.status, String::from_utf8_lossy(&r.stdout).as_ref()),
        (Some(0), "2\t9.007199254741e+15\tx1\n")
    );
    // Output of `lua5.4 base_arg.lua a b`.
    let r = run_lua(&["base_arg.lua", "a", "b"], &cwd, b"", limit);
    assert_eq!(
        String::from_utf8_lossy(&r.stdout),
        "table\tbase_arg.lua\t2\ta\n2\n",
        "{r:?}"
    );
    assert_eq!(r.status, Some(0));
    for mode in Mode::ALL {
        let mut args = mode.flags().to_vec();
        args.extend(["-e", "error('from -e')"]);
        let r = run_lua(&args, &cwd, b"", limit);
        assert_eq!(r.status, Some(1), "{mode:?}: {r:?}");
        assert_eq!(
            r.stderr_first_line(),
            "lua: (command line):1: from -e",
            "{mode:?}"
        );
    }
}
