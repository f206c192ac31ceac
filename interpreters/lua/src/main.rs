//! `lua [--no-jit] [--jitcode] [--jit-param k=v[,k=v]] FILE.lua [args...]` or
//! `lua -e CHUNK`: runs a Lua 5.4 program. Errors go to stderr as PUC Lua prints them, with
//! exit status 1; a bad command line exits with 2.

use lua::Mode;
use std::process::ExitCode;

const USAGE: &str =
    "usage: lua [--no-jit | --jitcode] [--jit-param k=v[,k=v]] (FILE.lua [args...] | -e CHUNK)";

fn main() -> ExitCode {
    let mut mode = Mode::Jit;
    let mut args = std::env::args().skip(1);
    let mut params: Vec<String> = vec![];
    let mut chunk: Option<String> = None;
    let mut file: Option<String> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--no-jit" => mode = Mode::NoJit,
            "--jitcode" => mode = Mode::Jitcode,
            "--jit-param" => match args.next() {
                Some(p) => params.push(p),
                None => {
                    eprintln!("lua: --jit-param needs k=v\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-e" => match args.next() {
                Some(c) => {
                    chunk = Some(c);
                    break;
                }
                None => {
                    eprintln!("lua: '-e' needs argument\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with("--") => {
                eprintln!("lua: unknown option '{s}'\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => {
                file = Some(a);
                break;
            }
        }
    }
    let rest: Vec<String> = args.collect();
    // Deep recursion in the parser and in nested native calls needs more than the default
    // main-thread stack. The JIT's driver is per thread: it is configured on the thread that
    // runs the program.
    let run = move || -> i32 {
        if let Err(e) = lua::jit::configure(mode, &params) {
            eprintln!("lua: {e}");
            return 2;
        }
        if let Some(c) = chunk {
            return lua::run_chunk(c.as_bytes(), "(command line)", None, &rest, mode);
        }
        let Some(file) = file else {
            eprintln!("{USAGE}");
            return 2;
        };
        let src = match std::fs::read(&file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("lua: cannot open {file}: {e}");
                return 1;
            }
        };
        lua::run_chunk(&src, &file, Some(&file), &rest, mode)
    };
    let h = std::thread::Builder::new()
        .stack_size(1 << 28)
        .spawn(run)
        .expect("spawn the interpreter thread");
    let code = h.join().unwrap_or(101);
    ExitCode::from(code as u8)
}
