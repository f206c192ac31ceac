//! The JIT's bounds on what it compiles (issue: bridge explosion): a loop gets at most
//! `max_bridges` bridges, counting bridges of bridges, and nothing is traced past
//! `max_memory_kb`; whatever the bounds, the output stays right. collatz.bf branches many
//! ways in its loops: with a bridge at every guard's first failure it used to build 12,165
//! bridges from 97 loops.

use std::path::Path;

fn run(params: &str) -> (Vec<u8>, meta_jit::warm::Stats) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let program = bf::parse(&std::fs::read(dir.join("collatz.bf")).unwrap()).unwrap();
    bf::interpret::with_driver(|d| {
        d.reset();
        // Parameters stay set across runs: start from the defaults of the limits.
        d.set_params(&format!("max_bridges=100,max_memory_kb=16384,{params}"))
            .unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(&program, &mut bf::Tape::new(), &mut io).unwrap();
    let stats = bf::interpret::with_driver(|d| d.stats());
    let want = std::fs::read(dir.join("collatz.out")).unwrap();
    assert_eq!(out, want, "{params}");
    (out, stats)
}

#[test]
fn a_loop_gets_at_most_max_bridges_bridges() {
    for limit in [0u32, 3] {
        let params = format!("on,threshold=50,trace_eagerness=1,max_bridges={limit}");
        let (_, stats) = run(&params);
        assert!(stats.loops() > 0, "{}", stats.summary());
        let mut per_loop = std::collections::HashMap::<u32, u32>::new();
        for t in &stats.traces {
            if t.kind == meta_jit::warm::TraceKind::Bridge {
                assert_ne!(t.tree, t.id, "a bridge hangs from a loop");
                *per_loop.entry(t.tree).or_default() += 1;
            }
        }
        let most = per_loop.values().copied().max().unwrap_or(0);
        assert!(most <= limit, "{params}: a loop got {most} bridges");
        if limit > 0 {
            assert_eq!(
                most, limit,
                "{params}: collatz fills the bridges it may have"
            );
        }
    }
}

#[test]
fn nothing_is_traced_past_max_memory_kb() {
    let (_, stats) = run("on,threshold=50,trace_eagerness=1,max_memory_kb=0");
    assert_eq!(stats.traces.len(), 0, "{}", stats.summary());
    // With room for some traces, some are compiled, then no more.
    let (_, stats) = run("on,threshold=50,trace_eagerness=1,max_bridges=3,max_memory_kb=12");
    let (_, unbounded) = run("on,threshold=50,trace_eagerness=1,max_bridges=3");
    assert!(
        !stats.traces.is_empty() && stats.traces.len() < unbounded.traces.len(),
        "{} vs {}",
        stats.summary(),
        unbounded.summary()
    );
}
