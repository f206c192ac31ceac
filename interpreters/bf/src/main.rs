//! `bf [--no-jit | --jitcode] [--jit-param name=value]... FILE`: runs a Brainfuck program with
//! the JIT (or without it, or on its jitcode alone), reading stdin and writing stdout.
//!
//! Exit status: 0 when the program ends, 1 when it stops with an error (unbalanced brackets,
//! the pointer left of cell 0, the tape exhausted, I/O), 2 for a bad command line or an
//! unreadable file.

use std::process::ExitCode;

const USAGE: &str = "usage: bf [--no-jit | --jitcode] [--jit-param name=value]... FILE";

enum Mode {
    Jit,
    NoJit,
    Jitcode,
}

fn main() -> ExitCode {
    let mut mode = Mode::Jit;
    let mut file = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--jit-param" => {
                let Some(p) = args.next() else {
                    eprintln!("bf: --jit-param needs name=value\n{USAGE}");
                    return ExitCode::from(2);
                };
                if let Err(e) = bf::interpret::with_driver(|d| d.set_params(&p)) {
                    eprintln!("bf: --jit-param {p}: {e}");
                    return ExitCode::from(2);
                }
            }
            "--no-jit" => mode = Mode::NoJit,
            "--jitcode" => mode = Mode::Jitcode,
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            a if a.starts_with('-') && a.len() > 1 => {
                eprintln!("bf: unknown option `{a}`\n{USAGE}");
                return ExitCode::from(2);
            }
            a if file.is_none() => file = Some(a.to_string()),
            _ => {
                eprintln!("bf: more than one file\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(file) = file else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let src = match std::fs::read(&file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bf: cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let program = match bf::parse(&src) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bf: {file}:{e}");
            return ExitCode::from(1);
        }
    };
    if let Mode::NoJit = mode {
        bf::interpret::with_driver(|d| d.set_params("off")).expect("`off` is a parameter");
    }
    let runner = match mode {
        Mode::Jitcode => bf::run_jitcode,
        Mode::Jit | Mode::NoJit => bf::run,
    };
    let (result, flushed) = bf::run_stdio(&program, runner);
    if let Err(e) = result {
        eprintln!("bf: {file}: {e}");
        return ExitCode::from(1);
    }
    if let Err(e) = flushed {
        eprintln!("bf: writing output: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
