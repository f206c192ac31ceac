//! The Brainfuck benchmark: for each program of `programs/` (or those named), times the
//! interpreter with the JIT on and off and, when `gcc` is on the PATH, the program translated
//! to C and compiled with `gcc -O2`, and prints a table with the ratios.
//!
//! `cargo run --release -p bf --example bench -- [--runs N] [--median] [--base PATH] [NAME...]`
//!
//! `--base PATH` also times the JIT of another build of this bench (a copy of
//! `target/release/examples/bench` kept from before a change), interleaved with the others,
//! and adds its time and this build's speedup over it to the table: before and after in one
//! run.
//!
//! Every run is a fresh process (this binary again, with `--run on|off FILE`, running the
//! library exactly as the `bf` binary does), so each JIT run pays for its warm-up and
//! compilation; gcc's compile time is not counted. Runs of the modes are interleaved so that
//! a busy machine slows them alike; the table shows the minimum of the runs' wall times (the
//! median with `--median`). Every run's output is compared with the program's `.out` file; a
//! difference is reported and makes the exit status 1.
//!
//! Beside the times, the compile cost of the JIT runs: the traces compiled (loops and
//! bridges), the ops recorded in them, the time spent tracing, optimizing and emitting code
//! (of the run with the least), and that time per recorded op. The child reports them on a
//! last line of its stderr.
//!
//! The C translation folds runs of `+-<>` as the parser does (it is made from the parsed ops),
//! uses an `unsigned char` tape of `bf::MAX_CELLS` cells (the most the interpreter's tape grows
//! to) with no bounds checks, `putchar` for `.` and `getchar` for `,` (0 at the end of input).

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: bench [--runs N] [--median] [--base PATH] [NAME...]";

/// How a JIT child's last stderr line starts: then traces, recorded ops, compile seconds.
const COST: &str = "bench-cost:";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--run") {
        return child(&args[1..]);
    }
    let mut runs = 5;
    let mut median = false;
    let mut base = None;
    let mut names = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => match it.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => runs = n,
                _ => return usage(),
            },
            "--median" => median = true,
            "--base" => match it.next() {
                Some(p) => base = Some(PathBuf::from(p)),
                None => return usage(),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => return usage(),
            s => names.push(s.trim_end_matches(".bf").to_string()),
        }
    }
    match bench(runs, median, base.as_deref(), &names) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::from(2)
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

/// The child: runs one program with the JIT on or off, as `bf [--no-jit] FILE` does.
fn child(args: &[String]) -> ExitCode {
    let [mode, file] = args else {
        return usage();
    };
    let src = std::fs::read(file).expect("the program is readable");
    let program = bf::parse(&src).expect("the program parses");
    if mode == "off" {
        bf::interpret::with_driver(|d| d.set_params("off")).expect("`off` is a parameter");
    }
    let (r, flushed) = bf::run_stdio(&program, bf::run);
    flushed.expect("stdout is writable");
    if mode == "on" {
        let (traces, ops, secs) = bf::interpret::with_driver(|d| {
            d.with_stats(|s| {
                let t = s.tracing + s.optimizing + s.compiling;
                (s.traces.len(), s.recorded_ops, t.as_secs_f64())
            })
        });
        eprintln!("{COST} {traces} {ops} {secs}");
    }
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{file}: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    NoJit,
    Jit,
    Gcc,
    /// The JIT of the `--base` build.
    Base,
}

const MODES: [Mode; 4] = [Mode::NoJit, Mode::Jit, Mode::Gcc, Mode::Base];

struct Entry {
    name: String,
    path: PathBuf,
    expected: Vec<u8>,
    /// The gcc-compiled translation, if gcc is there and compiled it.
    exe: Option<PathBuf>,
    times: [Vec<Duration>; 4],
    /// The JIT runs' compile cost: traces, recorded ops, the least compile time seen.
    cost: Option<(usize, usize, f64)>,
    mismatches: usize,
}

fn bench(runs: usize, median: bool, base: Option<&Path>, names: &[String]) -> Result<bool, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bf"))
        .collect();
    files.sort();
    let stem = |p: &Path| p.file_stem().unwrap().to_string_lossy().into_owned();
    if !names.is_empty() {
        for n in names {
            if !files.iter().any(|p| &stem(p) == n) {
                return Err(format!("no program {n}.bf in {}", dir.display()));
            }
        }
        files.retain(|p| names.contains(&stem(p)));
    }
    let tmp = std::env::temp_dir().join(format!("bf-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let gcc = Command::new("gcc").arg("--version").output().is_ok();
    if !gcc {
        eprintln!("bench: gcc is not on the PATH; no C column");
    }
    let mut programs = Vec::new();
    for path in files {
        let name = stem(&path);
        let expected =
            std::fs::read(path.with_extension("out")).map_err(|e| format!("{name}.out: {e}"))?;
        let src = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let parsed = bf::parse(&src).map_err(|e| format!("{name}.bf:{e}"))?;
        let exe = if gcc {
            compile_c(&tmp, &name, &parsed)?
        } else {
            None
        };
        programs.push(Entry {
            name,
            path,
            expected,
            exe,
            times: Default::default(),
            cost: None,
            mismatches: 0,
        });
    }
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    for run in 0..runs {
        eprint!("\rbench: run {} of {runs}", run + 1);
        for p in &mut programs {
            for (m, mode) in MODES.iter().enumerate() {
                let mut cmd = match mode {
                    Mode::NoJit | Mode::Jit => {
                        let mut c = Command::new(&me);
                        c.arg("--run")
                            .arg(if *mode == Mode::Jit { "on" } else { "off" })
                            .arg(&p.path);
                        c
                    }
                    Mode::Gcc => match &p.exe {
                        Some(exe) => Command::new(exe),
                        None => continue,
                    },
                    Mode::Base => match base {
                        Some(b) => {
                            let mut c = Command::new(b);
                            c.arg("--run").arg("on").arg(&p.path);
                            c
                        }
                        None => continue,
                    },
                };
                let (t, out, ok, cost) = time(&mut cmd)?;
                if let Some(c) = cost.filter(|_| *mode == Mode::Jit) {
                    p.cost = Some(match p.cost {
                        Some(old) if old.2 <= c.2 => old,
                        _ => c,
                    });
                }
                if !ok || out != p.expected {
                    p.mismatches += 1;
                    eprintln!(
                        "\nbench: MISMATCH: {} ({}): {} (output {} bytes, expected {})",
                        p.name,
                        label(*mode),
                        if ok { "wrong output" } else { "failed" },
                        out.len(),
                        p.expected.len()
                    );
                }
                p.times[m].push(t);
            }
        }
    }
    eprintln!();
    let _ = std::fs::remove_dir_all(&tmp);
    print!("{}", table(&programs, runs, median, base.is_some()));
    let bad: usize = programs.iter().map(|p| p.mismatches).sum();
    if bad > 0 {
        println!("\n*** {bad} RUNS GAVE THE WRONG OUTPUT (see above) ***");
    }
    Ok(bad == 0)
}

fn label(m: Mode) -> &'static str {
    match m {
        Mode::NoJit => "--no-jit",
        Mode::Jit => "jit",
        Mode::Gcc => "gcc -O2",
        Mode::Base => "base jit",
    }
}

/// What a child's run gave: its wall time, its stdout, whether it exited with 0, and the
/// compile cost it reported (traces, recorded ops, seconds).
type Timed = (Duration, Vec<u8>, bool, Option<(usize, usize, f64)>);

/// Runs a command with empty stdin. Its stderr is passed on, but for the cost line.
fn time(cmd: &mut Command) -> Result<Timed, String> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let mut stderr = child.stderr.take().unwrap();
    // Read on a thread: a child that fills the stderr pipe would block before its stdout ends.
    let errs = std::thread::spawn(move || {
        let mut e = Vec::new();
        let _ = stderr.read_to_end(&mut e);
        e
    });
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    let errs = errs
        .join()
        .map_err(|_| "reading stderr failed".to_string())?;
    let mut cost = None;
    for line in String::from_utf8_lossy(&errs).lines() {
        match line
            .strip_prefix(COST)
            .map(|r| r.split_whitespace().collect::<Vec<_>>())
        {
            Some(v) if v.len() == 3 => {
                cost = match (v[0].parse(), v[1].parse(), v[2].parse()) {
                    (Ok(t), Ok(o), Ok(s)) => Some((t, o, s)),
                    _ => None,
                }
            }
            _ => eprintln!("{line}"),
        }
    }
    Ok((elapsed, out, status.success(), cost))
}

/// Translates to C and compiles with `gcc -O2`; None (with a warning) if gcc fails.
fn compile_c(tmp: &Path, name: &str, program: &bf::Program) -> Result<Option<PathBuf>, String> {
    let c = tmp.join(format!("{name}.c"));
    let exe = tmp.join(name);
    std::fs::write(&c, to_c(program)).map_err(|e| format!("{}: {e}", c.display()))?;
    let out = Command::new("gcc")
        .arg("-O2")
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output()
        .map_err(|e| format!("gcc: {e}"))?;
    if !out.status.success() {
        eprintln!(
            "bench: gcc failed on {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return Ok(None);
    }
    Ok(Some(exe))
}

/// The program as C.
fn to_c(program: &bf::Program) -> String {
    let mut s = String::new();
    s.push_str("#include <stdio.h>\n#include <stdlib.h>\n\nint main(void) {\n");
    let _ = writeln!(
        s,
        "    unsigned char *p = calloc({}, 1);\n    if (!p) return 2;",
        bf::MAX_CELLS
    );
    let mut depth = 1;
    for op in &program.ops {
        let pad = "    ".repeat(depth);
        match *op {
            bf::Op::Add(n) => {
                let _ = writeln!(s, "{pad}*p += {n};");
            }
            bf::Op::Seek(d) => {
                let _ = writeln!(s, "{pad}p += {d};");
            }
            bf::Op::Out => {
                let _ = writeln!(s, "{pad}putchar(*p);");
            }
            bf::Op::In => {
                let _ = writeln!(s, "{pad}{{ int c = getchar(); *p = c == EOF ? 0 : c; }}");
            }
            bf::Op::JumpIfZero(_) => {
                let _ = writeln!(s, "{pad}while (*p) {{");
                depth += 1;
            }
            bf::Op::JumpIfNonZero(_) => {
                depth -= 1;
                let _ = writeln!(s, "{}}}", "    ".repeat(depth));
            }
            bf::Op::Halt => {}
        }
    }
    s.push_str("    return 0;\n}\n");
    s
}

fn table(programs: &[Entry], runs: usize, median: bool, base: bool) -> String {
    let pick = |v: &[Duration]| -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = v.iter().map(Duration::as_secs_f64).collect();
        v.sort_by(f64::total_cmp);
        Some(if median { v[v.len() / 2] } else { v[0] })
    };
    let secs = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{t:.3}"));
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".to_string(),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "seconds, {} of {runs} runs (wall clock, each a fresh process)\n",
        if median { "median" } else { "minimum" }
    );
    let (base_head, base_rule) = if base {
        (" base jit | base/jit |", "---:|---:|")
    } else {
        ("", "")
    };
    let _ = writeln!(
        s,
        "| program | --no-jit | jit | gcc -O2 | no-jit/jit | jit/gcc |{base_head} traces | ops | compile ms | µs/op | output |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|{base_rule}---:|---:|---:|---:|---|"
    );
    for p in programs {
        let [n, j, g, b] = [&p.times[0], &p.times[1], &p.times[2], &p.times[3]].map(|v| pick(v));
        let base_cols = if base {
            format!(" {} | {} |", secs(b), ratio(b, j))
        } else {
            String::new()
        };
        let cost = match p.cost {
            Some((traces, ops, t)) => format!(
                "{traces} | {ops} | {:.1} | {}",
                t * 1e3,
                if ops > 0 {
                    format!("{:.2}", t * 1e6 / ops as f64)
                } else {
                    "-".to_string()
                }
            ),
            None => "- | - | - | -".to_string(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |{base_cols} {cost} | {} |",
            p.name,
            secs(n),
            secs(j),
            secs(g),
            ratio(n, j),
            ratio(j, g),
            if p.mismatches == 0 {
                "ok".to_string()
            } else {
                format!("{} MISMATCHES", p.mismatches)
            }
        );
    }
    s
}
