//! End-to-end tests and benchmark runners live here, and so does the book: every chapter is
//! included as documentation below, so `cargo test` compiles and runs its Rust code blocks.

macro_rules! chapters {
    ($($name:ident = $file:literal),* $(,)?) => {
        $(
            #[doc = include_str!(concat!("../../book/src/", $file))]
            pub mod $name {}
        )*
    };
}

chapters! {
    introduction = "introduction.md",
    tutorial_bf = "tutorial-bf.md",
    lua = "lua.md",
    hint_reference = "hint-reference.md",
    supported_subset = "supported-subset.md",
    checking_hints = "checking-hints.md",
    jit_log = "jit-log.md",
    performance = "performance.md",
    jitcode = "jitcode.md",
    trace_ir = "trace-ir.md",
    optimizer = "optimizer.md",
    backend = "backend.md",
    tracing = "tracing.md",
    deopt = "deopt.md",
    calls = "calls.md",
    objects = "objects.md",
}
