//! Runs the `lua` binary as a child process with a time limit, for the integration tests
//! (`conformance.rs`, `random_programs.rs`). Knows nothing of what the programs check.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const LUA: &str = env!("CARGO_BIN_EXE_lua");

/// What one run of the binary gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The exit status; `None` when killed by a signal or by the time limit.
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The child was killed at the time limit.
    pub timed_out: bool,
}

impl Run {
    /// The first line of stderr, lossily decoded, without its line end.
    pub fn stderr_first_line(&self) -> String {
        let s = String::from_utf8_lossy(&self.stderr);
        s.lines().next().unwrap_or("").to_string()
    }

    /// The status as text: a number, `killed` or `timeout`.
    pub fn status_text(&self) -> String {
        match (self.timed_out, self.status) {
            (true, _) => "timeout".into(),
            (false, Some(c)) => c.to_string(),
            (false, None) => "killed by a signal".into(),
        }
    }
}

/// Runs `lua ARGS...` in `cwd` with `stdin` as its input, killing it after `limit`.
pub fn run_lua(args: &[&str], cwd: &Path, stdin: &[u8], limit: Duration) -> Run {
    run_lua_env(args, &[], cwd, stdin, limit)
}

/// [`run_lua`] with environment variables set for the child.
pub fn run_lua_env(
    args: &[&str],
    env: &[(&str, &str)],
    cwd: &Path,
    stdin: &[u8],
    limit: Duration,
) -> Run {
    let mut child = Command::new(LUA)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {LUA}: {e}"));
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The program may exit without reading its input: a broken pipe is no error here.
        let _ = input.write_all(&data);
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for lua") {
            break s;
        }
        if start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("waiting for the killed lua");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = writer.join();
    Run {
        status: if timed_out { None } else { status.code() },
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        timed_out,
    }
}

/// Runs `jobs` on `threads` threads (at least one), returning the results in job order.
pub fn parallel_map<T: Sync, R: Send>(
    jobs: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() {
                    break;
                }
                let r = f(&jobs[i]);
                results.lock().unwrap()[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

/// The worker threads to use: `LUA_TEST_THREADS`, else the machine's parallelism.
pub fn threads() -> usize {
    std::env::var("LUA_TEST_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// A short description of where two outputs first differ.
pub fn diff_summary(got: &[u8], want: &[u8]) -> String {
    let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    let gl: Vec<&str> = g.split_inclusive('\n').collect();
    let wl: Vec<&str> = w.split_inclusive('\n').collect();
    let same = gl.iter().zip(&wl).take_while(|(a, b)| a == b).count();
    let clip = |s: Option<&&str>| -> String {
        let s = s.map_or("<end of output>", |s| s);
        let s: String = s.chars().take(160).collect();
        format!("{s:?}")
    };
    format!(
        "line {}: got {} expected {} ({} bytes, expected {})",
        same + 1,
        clip(gl.get(same)),
        clip(wl.get(same)),
        got.len(),
        want.len()
    )
}

/// Removes meta-jit's summary from `run`'s stderr (its `[jit-summary]` lines and its
/// `{jit-guards ... jit-guards}` table of the hottest guards); returns whether the summary
/// reports a compiled loop or bridge.
pub fn take_jit_summary(run: &mut Run) -> bool {
    let text = String::from_utf8_lossy(&run.stderr).into_owned();
    let mut summary = Vec::new();
    let mut rest = Vec::new();
    let mut in_guards = false;
    for l in text.split_inclusive('\n') {
        if l.starts_with("{jit-guards") {
            in_guards = true;
        }
        if in_guards || l.starts_with("[jit-summary]") {
            summary.push(l);
        } else {
            rest.push(l);
        }
        if l.trim_end() == "jit-guards}" {
            in_guards = false;
        }
    }
    run.stderr = rest.concat().into_bytes();
    let count = |l: &str, key: &str| -> u64 {
        l.split(key)
            .nth(1)
            .and_then(|r| r.split(',').next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    };
    summary
        .iter()
        .any(|l| count(l, "loops:") + count(l, "bridges:") > 0)
}

/// What the interpreter's `LUA_GC_STATS=1` line said (see `lua::run_chunk`).
#[derive(Clone, Copy, Debug, Default)]
#[allow(dead_code)]
pub struct GcStats {
    pub collections: u64,
    pub in_compiled_code: u64,
    pub abandoned: u64,
    pub skipped_untraceable: u64,
    pub live_bytes: u64,
    pub peak_rss_kb: u64,
}

/// Takes the `gc: ...` line that `LUA_GC_STATS=1` writes out of the run's stderr (so that the
/// rest compares as usual) and parses it; `None` when there is none.
#[allow(dead_code)]
pub fn take_gc_stats(run: &mut Run) -> Option<GcStats> {
    let text = String::from_utf8_lossy(&run.stderr).into_owned();
    let mut stats = None;
    let mut rest = Vec::new();
    for l in text.split_inclusive('\n') {
        match l.strip_prefix("gc: ") {
            Some(line) => {
                let field = |key: &str| -> u64 {
                    line.split_whitespace()
                        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0)
                };
                stats = Some(GcStats {
                    collections: field("collections"),
                    in_compiled_code: field("in_compiled_code"),
                    abandoned: field("abandoned"),
                    skipped_untraceable: field("skipped_untraceable"),
                    live_bytes: field("live_bytes"),
                    peak_rss_kb: field("peak_rss_kb"),
                });
            }
            None => rest.push(l),
        }
    }
    run.stderr = rest.concat().into_bytes();
    stats
}
