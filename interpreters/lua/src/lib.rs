//! A Lua 5.4 interpreter on meta-jit: lexer, parser, compiler to a register bytecode, and a
//! VM whose single dispatch loop runs guest frames (calls push a frame and continue in the
//! same loop), with the standard libraries the conformance suite needs.
//!
//! Strings, tables and functions are objects of meta-jit's collected heap (`Gc`); values are
//! `Copy`.

pub mod ast;
pub mod compile;
pub mod jit;
pub mod lexer;
pub mod parser;
pub mod proto;
pub mod shape;
pub mod stdlib;
pub mod table;
pub mod value;
pub mod vm;

use value::Value;
use vm::Vm;

/// How to run: the plain interpreter, with the JIT, or on jitcode alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, meta_jit::hints::Trace)]
pub enum Mode {
    /// JIT on (the default).
    Jit,
    /// The plain interpreter loop.
    NoJit,
    /// The interpreter's jitcode alone.
    Jitcode,
}

/// The message and traceback of an uncaught error, as `lua` prints them.
pub fn error_report(vm: &mut Vm, e: &vm::LuaError) -> String {
    let msg = match &e.value {
        Value::Str(s) => String::from_utf8_lossy(&s.bytes).into_owned(),
        Value::Int(_) | Value::Num(_) => {
            String::from_utf8_lossy(&value::to_str_bytes(&e.value).unwrap()).into_owned()
        }
        v => {
            let h = vm.metamethod(v, &Value::str("__tostring"));
            if !matches!(h, Value::Nil) {
                if let Ok(Value::Str(s)) = vm.tostring(v) {
                    // An object with __tostring is its own message, without traceback.
                    return String::from_utf8_lossy(&s.bytes).into_owned();
                }
            }
            format!("(error object is a {} value)", v.type_name())
        }
    };
    match &e.traceback {
        Some(tb) => format!("{msg}\n{tb}"),
        None => msg,
    }
}

/// Runs a chunk; `script` (the chunk name), `args` become `arg` and the chunk's `...`.
/// Returns the process exit status, printing errors to stderr as PUC Lua does.
pub fn run_chunk(
    src: &[u8],
    chunk: &str,
    script: Option<&str>,
    args: &[String],
    mode: Mode,
) -> i32 {
    let mut vm = Vm::new();
    vm.mode = mode;
    if let Some(n) = std::env::var("LUA_GC_THRESHOLD")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        meta_jit::gc::set_collection_threshold(n);
    }
    // The jitcode runner never collects (its registers are not roots): no collection there.
    // `LUA_NO_GC=1` turns collection off (for the memory test's check that it matters).
    if mode != Mode::Jitcode && std::env::var_os("LUA_NO_GC").is_none() {
        // SAFETY: from here until `disable_collection` below, every value this thread uses
        // again is reachable from `vm` (see `Vm::collect_garbage` for the plain loop's safe
        // points; the portal's safe points have `vm` as a red, and collect only in the
        // outermost portal call, which is `run_main`'s: natives that call Lua run nested
        // portals, and a call outside it that holds values pauses collection). This
        // function holds `f` and `argv` only to hand them to `run_main`, which copies them
        // to the VM's stack, and uses `vm` alone afterwards.
        unsafe { meta_jit::gc::enable_collection() };
        vm.gc_stress = std::env::var("LUA_GC_STRESS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
    }
    let status = run_vm(&mut vm, src, chunk, script, args);
    meta_jit::gc::disable_collection();
    if std::env::var_os("LUA_GC_STATS").is_some() {
        let s = meta_jit::gc::stats();
        eprintln!(
            "gc: collections={} in_compiled_code={} abandoned={} skipped_untraceable={} live_bytes={} chunk_bytes={} peak_rss_kb={}",
            s.collections,
            s.in_compiled_code,
            s.abandoned,
            s.skipped_untraceable,
            s.live_bytes,
            s.chunk_bytes,
            peak_rss_kb()
        );
    }
    status
}

/// The process's peak resident set (`VmHWM` of `/proc/self/status`), in KiB; 0 if unknown.
pub fn peak_rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn run_vm(vm: &mut Vm, src: &[u8], chunk: &str, script: Option<&str>, args: &[String]) -> i32 {
    use std::io::Write;
    if let Some(path) = script {
        let dir = std::path::Path::new(path)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = if dir.is_empty() { ".".to_string() } else { dir };
        vm.script_dir = dir.clone();
        if let Value::Tab(pkg) = vm.get_global("package") {
            let path = format!("{dir}/?.lua;{dir}/?/init.lua;./?.lua;./?/init.lua");
            pkg.set(Value::str("path"), Value::str(&path));
        }
        let argt = stdlib::new_table();
        argt.set(Value::Int(0), Value::str(path));
        for (i, a) in args.iter().enumerate() {
            argt.set(Value::Int(i as i64 + 1), Value::str(a));
        }
        vm.set_global("arg", Value::Tab(argt));
    }
    let f = match vm.load(src, chunk) {
        Ok(f) => f,
        Err(e) => {
            let _ = vm.out.flush();
            eprintln!("lua: {e}");
            return 1;
        }
    };
    let argv: Vec<Value> = args.iter().map(|a| Value::str(a)).collect();
    let r = vm.run_main(&f, argv);
    let _ = vm.out.flush();
    match r {
        Ok(_) => 0,
        Err(e) => {
            let msg = error_report(vm, &e);
            let _ = vm.out.flush();
            eprintln!("lua: {msg}");
            1
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_calls;
#[cfg(test)]
mod tests_natives;
#[cfg(test)]
mod tests_objects;
