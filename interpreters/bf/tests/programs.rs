//! The programs of `programs/` give their expected output (`.out`, written by an independent
//! oracle: `tools/bfi.py`) with the JIT on, with it off, and on jitcode alone; bad input gives a
//! clear error and a non-zero exit, never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Programs too slow for the jitcode runner (about 40 times slower than the interpreter) in a
/// test, with their cost; every other program is checked on jitcode too.
const SLOW_ON_JITCODE: &[(&str, &str)] = &[
    ("busy.bf", "16 million loop passes"),
    ("collatz.bf", "about 1 s with the JIT off"),
    ("mandelbrot.bf", "about 1 s with the JIT off"),
    ("nested.bf", "about 1 s with the JIT off"),
    ("primes.bf", "about 1 s with the JIT off"),
];

fn programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bf"))
        .collect();
    v.sort();
    assert!(v.len() >= 8, "the programs folder has its programs");
    v
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    JitOn,
    JitOff,
    Jitcode,
}

fn run_with(src: &[u8], mode: Mode) -> Vec<u8> {
    let program = bf::parse(src).unwrap();
    // No reset between programs: a program parsed later may reuse an earlier one's address,
    // and the driver must notice that the earlier code does not fit.
    bf::interpret::with_driver(|d| {
        d.set_params(match mode {
            Mode::JitOn => "on",
            _ => "off",
        })
        .unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    let r = match mode {
        Mode::Jitcode => bf::run_jitcode(&program, &mut tape, &mut io),
        _ => bf::run(&program, &mut tape, &mut io),
    };
    r.unwrap();
    out
}

/// Fails with the first line that differs, not with two byte vectors of thousands of items.
fn assert_output(path: &Path, mode: Mode, got: &[u8], want: &[u8]) {
    if got == want {
        return;
    }
    let (g, w) = (String::from_utf8_lossy(got), String::from_utf8_lossy(want));
    let line = g.lines().zip(w.lines()).take_while(|(a, b)| a == b).count();
    panic!(
        "{} ({mode:?}): output differs from the expected output at line {}:\n  got:      {:?}\n  expected: {:?}\n({} bytes, expected {})",
        path.display(),
        line + 1,
        g.lines().nth(line).unwrap_or("<end>"),
        w.lines().nth(line).unwrap_or("<end>"),
        got.len(),
        want.len()
    );
}

fn check_every_program(mode: Mode) {
    for p in programs() {
        let name = p.file_name().unwrap().to_str().unwrap();
        if matches!(mode, Mode::Jitcode) && SLOW_ON_JITCODE.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let expected = std::fs::read(p.with_extension("out")).unwrap();
        let src = std::fs::read(&p).unwrap();
        assert_output(&p, mode, &run_with(&src, mode), &expected);
    }
}

#[test]
fn every_program_gives_its_expected_output_with_the_jit_on() {
    check_every_program(Mode::JitOn);
}

#[test]
fn every_program_gives_its_expected_output_with_the_jit_off() {
    check_every_program(Mode::JitOff);
}

#[test]
fn every_quick_program_gives_its_expected_output_on_jitcode() {
    check_every_program(Mode::Jitcode);
}

#[test]
fn the_slow_list_names_programs_that_exist() {
    let names: Vec<String> = programs()
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    for (n, _) in SLOW_ON_JITCODE {
        assert!(names.iter().any(|m| m == n), "{n} is not in programs/");
    }
}

fn bf(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_bf"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().expect("exited, not killed by a signal"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `args` and no input, and checks that it fails: exit code `code`,
/// nothing on stdout, and `needle` in the message on stderr. Returns stderr.
fn fails_with(args: &[&str], code: i32, needle: &str) -> String {
    let (got, out, err) = bf(args, b"");
    assert_eq!((got, out.as_str()), (code, ""), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    err
}

fn temp_file(name: &str, content: &[u8]) -> String {
    let p = std::env::temp_dir().join(format!("bf-test-{}-{name}", std::process::id()));
    std::fs::write(&p, content).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn binary_runs_a_program_and_echoes_input() {
    let f = temp_file("echo.bf", b",[.,]");
    let (code, out, err) = bf(&[&f], b"meta-jit");
    assert_eq!((code, out.as_str(), err.as_str()), (0, "meta-jit", ""));
}

#[test]
fn unbalanced_brackets_are_reported_with_their_position() {
    let f = temp_file("open.bf", b"+\n+[>[-]");
    fails_with(&[&f], 1, ":2:2: this `[` is never closed");
    let f = temp_file("close.bf", b"+]");
    fails_with(&[&f], 1, ":1:2: this `]` has no matching `[`");
}

#[test]
fn empty_file_is_an_empty_program() {
    let f = temp_file("empty.bf", b"");
    assert_eq!(bf(&[&f], b""), (0, String::new(), String::new()));
}

#[test]
fn missing_file_is_an_error() {
    let needle = "bf: cannot read /nonexistent/prog.bf:";
    let err = fails_with(&["/nonexistent/prog.bf"], 2, needle);
    assert!(err.starts_with(needle), "{err}");
}

#[test]
fn binary_garbage_is_comments_or_a_clear_error() {
    // Bytes that are not commands are comments: this one has none and prints nothing.
    let garbage: Vec<u8> = (0u8..=255).filter(|b| !b"+-<>[].,".contains(b)).collect();
    let f = temp_file("garbage.bf", &garbage);
    assert_eq!(bf(&[&f], b""), (0, String::new(), String::new()));
    // Garbage with unbalanced brackets is an error, not a panic.
    let mut g = garbage.clone();
    g.extend_from_slice(&[0xff, b']', 0x00, 0x80]);
    let f = temp_file("garbage2.bf", &g);
    fails_with(&[&f], 1, "has no matching `[`");
}

#[test]
fn moving_left_of_the_tape_is_an_error() {
    let f = temp_file("left.bf", b"+>><<<");
    fails_with(&[&f], 1, "op 1: the pointer moved left of cell 0");
}

#[test]
fn the_tape_grows_to_the_right() {
    // 40,000 cells to the right of the initial 30,000, then back.
    let mut src = b">".repeat(70_000);
    src.extend_from_slice(b"+++[<+>-]<.");
    let out = run_with(&src, Mode::JitOff);
    assert_eq!(out, vec![3]);
}

#[test]
fn bad_command_line() {
    fails_with(
        &["--frobnicate", "x.bf"],
        2,
        "unknown option `--frobnicate`",
    );
    fails_with(&[], 2, "usage: bf");
}

#[test]
fn jit_parameters_and_modes() {
    let f = temp_file("loop.bf", b"++++++++[>++++++++<-]>+.");
    for args in [
        vec!["--no-jit", f.as_str()],
        vec!["--jitcode", f.as_str()],
        vec!["--jit-param", "threshold=2", f.as_str()],
    ] {
        assert_eq!(
            bf(&args, b""),
            (0, "A".to_string(), String::new()),
            "{args:?}"
        );
    }
    fails_with(&["--jit-param", "frob=1", &f], 2, "--jit-param frob=1");
}

#[test]
fn out_of_range_and_unknown_parameters_are_errors() {
    let f = temp_file("params.bf", b"+.");
    let e = fails_with(
        &["--jit-param", "threshold=4294967296", &f],
        2,
        "from 1 to 4294967295",
    );
    assert!(e.contains("threshold=4294967296"), "{e}");
    let e = fails_with(&["--jit-param", "treshold=3", &f], 2, "trace_eagerness");
    assert!(e.contains("unknown JIT parameter"), "{e}");
}

/// A program that prints forever, read by a consumer that stops after one byte, ends with a
/// write error instead of running on (in every mode).
#[test]
fn a_closed_pipe_ends_the_run_with_an_error() {
    use std::io::Read;
    let f = temp_file("forever.bf", b"+[.]");
    for mode in ["--no-jit", "--jitcode", "--jit-param=threshold=2"] {
        let mut args: Vec<&str> = mode.splitn(2, '=').collect();
        args.push(&f);
        let mut child = Command::new(env!("CARGO_BIN_EXE_bf"))
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        // The read end is dropped here: the next write fails.
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mode}: {err}");
        assert!(err.contains("Broken pipe"), "{mode}: {err}");
    }
}

/// A full device is a write error, reported with a non-zero exit, not lost silently. (With
/// standard output closed, `>&-`, Rust's runtime reopens it on `/dev/null` before `main`, so
/// that case is the same as `> /dev/null` and cannot be told apart.)
#[test]
fn a_full_device_is_an_error() {
    let f = temp_file("hi.bf", b"++++++++[>++++++++<-]>+.");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bf"))
        .arg(&f)
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
}
