//! The JIT log (like PyPy's `PYPYLOG`): one environment variable, `METAJIT_LOG`, selects what
//! is printed to standard error, as a comma-separated list of categories:
//!
//! - `trace`: every trace before optimization, in the IR's text form, with the guest position
//!   of each merge point it passed as a `# ...` line (PyPy's `debug_merge_point`) and every
//!   guard's number (`id=N`);
//! - `opt`: every trace after optimization, the same way (see [`locate`] for how positions are
//!   placed after optimization);
//! - `asm`: the machine code of every compiled trace, disassembled, with its IR lines;
//! - `guard`: a guard that starts a bridge, the traces freed when they are invalidated
//!   (`[jit-invalidate]` lines), and at the end the hottest guards with their failure counts
//!   and positions;
//! - `guard-each`: a line for every guard failure (not part of `all`: a program can fail
//!   guards millions of times);
//! - `abort`: aborted traces with their reason and the position where tracing stopped;
//! - `summary`: loops, bridges, aborts, guard failures and the time spent tracing, optimizing
//!   and compiling, and the hottest guards, when the driver goes away (at the end of the
//!   thread);
//! - `perfmap`: appends each compiled trace's code range to `/tmp/perf-PID.map` for `perf`
//!   (a file, not standard error);
//! - `html:FILE`: writes the trace viewer, one self-contained HTML page, to `FILE` when the
//!   driver goes away (see [`viewer`]);
//! - `all`: everything above except `guard-each`, `perfmap` and `html`.
//!
//! Every header names the guest position with the interpreter's location hook
//! ([`LocationFn`], `#[jit::interpreter(..., location = f)]`); without one, the greens' values.
//! Tests get the same facts as data from [`crate::warm::Stats`] and
//! [`crate::warm::JitDriver::guard_counts`].
//!
//! Owns: parsing the selection, formatting the lines, placing positions ([`locate`]) and the
//! viewer page ([`viewer`]). Must not know: how traces are made, or any guest language.
#![deny(unsafe_code)]

pub mod locate;
pub mod viewer;

pub use locate::{GuardCount, Located, LocationFn};

/// The names `METAJIT_LOG` takes (`html:FILE` besides).
pub const NAMES: &[&str] = &[
    "trace",
    "opt",
    "asm",
    "guard",
    "guard-each",
    "abort",
    "summary",
    "perfmap",
    "all",
];

/// Which categories are printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Traces before optimization.
    pub trace: bool,
    /// Traces after optimization.
    pub opt: bool,
    /// Disassembled machine code.
    pub asm: bool,
    /// Bridges started, invalidations, and the hottest guards at the end.
    pub guard: bool,
    /// A line for every guard failure.
    pub guard_each: bool,
    /// Aborts.
    pub abort: bool,
    /// The summary.
    pub summary: bool,
    /// A perf map (`/tmp/perf-PID.map`) naming each trace's machine code, so that `perf
    /// report` attributes samples to traces (not part of `all`: it writes a file).
    pub perfmap: bool,
    /// Where to write the trace viewer's page, if anywhere.
    pub html: Option<String>,
}

impl Selection {
    /// Parses a selection (`"trace,opt"`, `"all"`); unknown names are reported.
    pub fn parse(s: &str) -> Result<Selection, String> {
        let mut sel = Selection::default();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if let Some(file) = name.strip_prefix("html:") {
                sel.html = Some(file.to_string());
                continue;
            }
            match name {
                "trace" => sel.trace = true,
                "opt" => sel.opt = true,
                "asm" => sel.asm = true,
                "guard" => sel.guard = true,
                "guard-each" => sel.guard_each = true,
                "abort" => sel.abort = true,
                "summary" => sel.summary = true,
                "perfmap" => sel.perfmap = true,
                "all" => {
                    sel = Selection {
                        trace: true,
                        opt: true,
                        asm: true,
                        guard: true,
                        guard_each: sel.guard_each,
                        abort: true,
                        summary: true,
                        perfmap: sel.perfmap,
                        html: sel.html.take(),
                    }
                }
                other => {
                    return Err(format!(
                        "unknown METAJIT_LOG category `{other}` (the categories: {}, html:FILE)",
                        NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(sel)
    }

    /// Whether anything shows guest positions (then the driver renders them).
    pub fn locates(&self) -> bool {
        self.trace
            || self.opt
            || self.asm
            || self.guard
            || self.guard_each
            || self.abort
            || self.summary
            || self.html.is_some()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse() {
        let s = Selection::parse("guard-each, html:/tmp/x.html,opt").unwrap();
        assert!(s.guard_each && s.opt && !s.trace && !s.guard);
        assert_eq!(s.html.as_deref(), Some("/tmp/x.html"));
        let all = Selection::parse("html:a.html,all").unwrap();
        assert!(all.trace && all.guard && !all.guard_each && !all.perfmap);
        assert_eq!(all.html.as_deref(), Some("a.html"));
        assert!(!Selection::default().locates());
        let e = Selection::parse("trace,gaurd").unwrap_err();
        assert!(e.contains("`gaurd`") && e.contains("guard-each") && e.contains("html:FILE"));
    }
}
