//! The programs of `programs/` give their expected output, natively and on jitcode alone; bad
//! input gives a clear error and a non-zero exit, never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;

fn programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bf"))
        .collect();
    v.sort();
    assert!(v.len() >= 4, "the programs folder has its programs");
    v
}

fn run_with(src: &[u8], jitcode: bool) -> Vec<u8> {
    let program = bf::parse(src).unwrap();
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    let r = if jitcode {
        bf::run_jitcode(&program, &mut tape, &mut io)
    } else {
        bf::run(&program, &mut tape, &mut io)
    };
    r.unwrap();
    out
}

#[test]
fn every_program_gives_its_expected_output_natively() {
    for p in programs() {
        let expected = std::fs::read(p.with_extension("out")).unwrap();
        let src = std::fs::read(&p).unwrap();
        assert_eq!(run_with(&src, false), expected, "{}", p.display());
    }
}

#[test]
fn every_program_gives_its_expected_output_on_jitcode() {
    for p in programs() {
        if p.file_name().unwrap() == "busy.bf" {
            continue; // 16 million steps: too slow for the jitcode runner in a test
        }
        let expected = std::fs::read(p.with_extension("out")).unwrap();
        let src = std::fs::read(&p).unwrap();
        assert_eq!(run_with(&src, true), expected, "{}", p.display());
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
    let (code, out, err) = bf(&[&f], b"");
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains(":2:2: this `[` is never closed"), "{err}");
    let f = temp_file("close.bf", b"+]");
    let (code, _, err) = bf(&[&f], b"");
    assert_eq!(code, 1);
    assert!(err.contains(":1:2: this `]` has no matching `[`"), "{err}");
}

#[test]
fn empty_file_is_an_empty_program() {
    let f = temp_file("empty.bf", b"");
    assert_eq!(bf(&[&f], b""), (0, String::new(), String::new()));
}

#[test]
fn missing_file_is_an_error() {
    let (code, out, err) = bf(&["/nonexistent/prog.bf"], b"");
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with("bf: cannot read /nonexistent/prog.bf:"),
        "{err}"
    );
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
    let (code, _, err) = bf(&[&f], b"");
    assert_eq!(code, 1);
    assert!(err.contains("has no matching `[`"), "{err}");
}

#[test]
fn moving_left_of_the_tape_is_an_error() {
    let f = temp_file("left.bf", b"+>><<<");
    let (code, _, err) = bf(&[&f], b"");
    assert_eq!(code, 1);
    assert!(
        err.contains("op 1: the pointer moved left of cell 0"),
        "{err}"
    );
}

#[test]
fn the_tape_grows_to_the_right() {
    // 40,000 cells to the right of the initial 30,000, then back.
    let mut src = b">".repeat(70_000);
    src.extend_from_slice(b"+++[<+>-]<.");
    let out = run_with(&src, false);
    assert_eq!(out, vec![3]);
}

#[test]
fn bad_command_line() {
    let (code, _, err) = bf(&["--frobnicate", "x.bf"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("unknown option `--frobnicate`"), "{err}");
    let (code, _, err) = bf(&[], b"");
    assert_eq!(code, 2);
    assert!(err.contains("usage: bf"), "{err}");
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
    let (code, _, err) = bf(&["--jit-param", "frob=1", &f], b"");
    assert_eq!(code, 2);
    assert!(err.contains("--jit-param frob=1"), "{err}");
}
