//! Benchmark runner: every `bench/*.lua` (or `--dir DIR`) with `lua --no-jit`, `lua` (JIT on),
//! and `lua5.4` / `luajit` when installed, side by side; best of `--runs N` (default 3) times,
//! ratios against PUC Lua and geometric means.
//!
//! Times are the CPU time (user + system) of the child process, which a machine shared with
//! other jobs disturbs much less than the wall clock; `--wall` measures the wall clock instead.
//!
//! `--base PATH` also measures another `lua` binary (a build kept from before a change), in the
//! same run, program by program just before this workspace's: two more columns and geomeans.
//!
//! `cargo run --release -p lua --example bench -- [--runs N] [--wall] [--dir DIR] [--base PATH] [NAME...]`

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// CPU time (user + system) used so far by the children this process waited for.
fn children_cpu() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given and reads nothing else.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn best_time(cmd: &[&str], file: &Path, runs: usize, wall: bool) -> Option<f64> {
    let mut best: Option<f64> = None;
    for _ in 0..runs {
        let cpu = children_cpu();
        let t = Instant::now();
        let st = Command::new(cmd[0])
            .args(&cmd[1..])
            .arg(file.file_name()?)
            .current_dir(file.parent()?)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !st.success() {
            return None;
        }
        let s = if wall {
            t.elapsed().as_secs_f64()
        } else {
            children_cpu() - cpu
        };
        best = Some(best.map_or(s, |b: f64| b.min(s)));
    }
    best
}

fn installed(name: &str) -> bool {
    Command::new(name)
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn main() {
    let mut runs = 3;
    let mut wall = false;
    let mut dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/bench"));
    let mut only: Vec<String> = vec![];
    let mut base: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(3),
            "--wall" => wall = true,
            "--dir" => dir = PathBuf::from(args.next().expect("--dir DIR")),
            "--base" => base = Some(args.next().expect("--base PATH")),
            _ => only.push(a),
        }
    }
    // The interpreter measured is this workspace's `lua` binary beside this example: build it
    // now (a no-op when it is up to date), so that a stale binary is never measured.
    let mut build = std::process::Command::new(env!("CARGO"));
    build.args(["build", "-q", "-p", "lua", "--bin", "lua"]);
    if !cfg!(debug_assertions) {
        build.arg("--release");
    }
    match build.status() {
        Ok(s) if s.success() => {}
        other => {
            eprintln!("bench: building the lua binary failed: {other:?}");
            std::process::exit(1);
        }
    }
    let me = std::env::current_exe().expect("the bench binary");
    let lua = me
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("lua"))
        .expect("target dir");
    let lua = lua.to_string_lossy().into_owned();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|f| f.extension().is_some_and(|e| e == "lua"));
    files.retain(|f| {
        only.is_empty()
            || only
                .iter()
                .any(|o| f.file_stem().is_some_and(|s| s == o.as_str()))
    });
    files.sort();
    if files.is_empty() {
        eprintln!("bench: no .lua files in {}", dir.display());
        return;
    }
    let puc = installed("lua5.4");
    let luajit = installed("luajit");
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a / b),
        _ => None,
    };
    let fmt = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{t:.3}"));
    let fmtr = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}x"));
    if base.is_some() {
        print!("{:<16} {:>9} {:>9} ", "program", "base nj s", "base jit");
    } else {
        print!("{:<16} ", "program");
    }
    print!(
        "{:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "no-jit s", "jit s", "lua5.4 s", "luajit s", "nojit/puc", "puc/jit"
    );
    if base.is_some() {
        print!(" {:>8} {:>8}", "base n/p", "p/base j");
    }
    println!();
    let (mut g1, mut g2, mut n) = (0.0, 0.0, 0);
    let (mut gb1, mut gb2) = (0.0, 0.0);
    for f in &files {
        let (bnojit, bjit) = match &base {
            Some(b) => (
                best_time(&[b, "--no-jit"], f, runs, wall),
                best_time(&[b], f, runs, wall),
            ),
            None => (None, None),
        };
        let nojit = best_time(&[&lua, "--no-jit"], f, runs, wall);
        let jit = best_time(&[&lua], f, runs, wall);
        let p = if puc {
            best_time(&["lua5.4"], f, runs, wall)
        } else {
            None
        };
        let lj = if luajit {
            best_time(&["luajit"], f, runs, wall)
        } else {
            None
        };
        let r1 = ratio(nojit, p);
        let r2 = ratio(p, jit);
        let (rb1, rb2) = (ratio(bnojit, p), ratio(p, bjit));
        if let (Some(a), Some(b)) = (r1, r2) {
            g1 += a.ln();
            g2 += b.ln();
            n += 1;
            if let (Some(c), Some(d)) = (rb1, rb2) {
                gb1 += c.ln();
                gb2 += d.ln();
            }
        }
        let name = f.file_stem().unwrap().to_string_lossy();
        if base.is_some() {
            print!("{:<16} {:>9} {:>9} ", name, fmt(bnojit), fmt(bjit));
        } else {
            print!("{:<16} ", name);
        }
        print!(
            "{:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
            fmt(nojit),
            fmt(jit),
            fmt(p),
            fmt(lj),
            fmtr(r1),
            fmtr(r2),
        );
        if base.is_some() {
            print!(" {:>8} {:>8}", fmtr(rb1), fmtr(rb2));
        }
        println!();
    }
    if n > 0 {
        println!(
            "geomean: no-jit is {:.2}x PUC's time; the JIT is {:.2}x faster than PUC",
            (g1 / n as f64).exp(),
            (g2 / n as f64).exp()
        );
        if base.is_some() {
            println!(
                "geomean (base): no-jit is {:.2}x PUC's time; the JIT is {:.2}x faster than PUC",
                (gb1 / n as f64).exp(),
                (gb2 / n as f64).exp()
            );
        }
    }
}
