//! The JIT log (like PyPy's `PYPYLOG`): one environment variable, `METAJIT_LOG`, selects what
//! is printed to standard error, as a comma-separated list of categories:
//!
//! - `trace`: every trace before optimization, in the IR's text form;
//! - `opt`: every trace after optimization;
//! - `asm`: the machine code of every compiled trace, disassembled, with its IR lines;
//! - `guard`: guard failures (guard id, trace, and whether a bridge is traced), and the
//!   traces freed when they are invalidated (`[jit-invalidate]` lines);
//! - `abort`: aborted traces with their reason;
//! - `summary`: loops, bridges, aborts, guard failures and the time spent tracing, optimizing
//!   and compiling, when the driver goes away (at the end of the thread);
//! - `perfmap`: appends each compiled trace's code range to `/tmp/perf-PID.map` for `perf`
//!   (a file, not standard error);
//! - `all`: everything above except `perfmap`.
//!
//! Tests get the same facts as data from [`crate::warm::Stats`].
//!
//! Owns: parsing the selection and formatting the lines. Must not know: how traces are made.
#![deny(unsafe_code)]

/// Which categories are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Traces before optimization.
    pub trace: bool,
    /// Traces after optimization.
    pub opt: bool,
    /// Disassembled machine code.
    pub asm: bool,
    /// Guard failures.
    pub guard: bool,
    /// Aborts.
    pub abort: bool,
    /// The summary.
    pub summary: bool,
    /// A perf map (`/tmp/perf-PID.map`) naming each trace's machine code, so that `perf
    /// report` attributes samples to traces (not part of `all`: it writes a file).
    pub perfmap: bool,
}

impl Selection {
    /// Parses a selection (`"trace,opt"`, `"all"`); unknown names are reported.
    pub fn parse(s: &str) -> Result<Selection, String> {
        let mut sel = Selection::default();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "trace" => sel.trace = true,
                "opt" => sel.opt = true,
                "asm" => sel.asm = true,
                "guard" => sel.guard = true,
                "abort" => sel.abort = true,
                "summary" => sel.summary = true,
                "perfmap" => sel.perfmap = true,
                "all" => {
                    sel = Selection {
                        trace: true,
                        opt: true,
                        asm: true,
                        guard: true,
                        abort: true,
                        summary: true,
                        perfmap: sel.perfmap,
                    }
                }
                other => return Err(format!("unknown METAJIT_LOG category `{other}`")),
            }
        }
        Ok(sel)
    }

    /// The selection of `METAJIT_LOG` (nothing when unset; an unknown name is reported once
    /// on standard error and ignored).
    pub fn from_env() -> Selection {
        match std::env::var("METAJIT_LOG") {
            Ok(s) => Selection::parse(&s).unwrap_or_else(|e| {
                eprintln!("meta-jit: {e}");
                Selection::default()
            }),
            Err(_) => Selection::default(),
        }
    }
}

/// Prints one log section: a header line, then `body` indented by nothing (IR text is already
/// line-oriented), then an end marker, in the style of PyPy's `{jit-log-opt-loop ... jit-log-opt-loop}`.
pub fn section(name: &str, header: &str, body: &str) {
    let mut out = format!("{{jit-{name} {header}\n");
    out.push_str(body);
    if !body.ends_with('\n') && !body.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("jit-{name}}}\n"));
    eprint!("{out}");
}

/// Prints one log line.
pub fn line(name: &str, text: &str) {
    eprintln!("[jit-{name}] {text}");
}

/// Appends `START SIZE NAME` (hex start and size) to `/tmp/perf-PID.map`, the file `perf`
/// reads to name samples in code it did not load from a file.
pub fn perf_map(start: usize, size: usize, name: &str) {
    use std::io::Write;
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path);
    if let Ok(mut f) = file {
        let _ = writeln!(f, "{start:x} {size:x} {name}");
    }
}
