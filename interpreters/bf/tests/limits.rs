//! The JIT's bounds on what it compiles (issue: bridge explosion): a loop gets at most
//! `max_bridges` bridges, counting bridges of bridges, and nothing is traced past
//! `max_memory_kb`; whatever the bounds, the output stays right. collatz.bf branches many
//! ways in its loops: with a bridge at every guard's first failure it used to build 12,165
//! bridges from 97 loops.

use std::path::Path;

fn run(params: &str) -> (Vec<u8>, meta_jit::warm::Stats) {
    run_program(&collatz(), params)
}

fn collatz() -> bf::Program {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    bf::parse(&std::fs::read(dir.join("collatz.bf")).unwrap()).unwrap()
}

fn run_program(program: &bf::Program, params: &str) -> (Vec<u8>, meta_jit::warm::Stats) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    bf::interpret::with_driver(|d| {
        d.reset();
        // Parameters stay set across runs: start from the defaults of the limits.
        d.set_params(&format!("max_bridges=100,max_memory_kb=16384,{params}"))
            .unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(program, &mut bf::Tape::new(), &mut io).unwrap();
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

#[test]
fn where_the_program_lies_changes_no_decision_of_the_jit() {
    // The program is a green, so its address is part of every location's hash: the driver
    // used to merge the counters of locations whose hashes collided in a 4,096-entry table,
    // and which pairs collided changed with the address. Two runs of collatz.bf made 76 or
    // 77 loops, and once no cut bridge at all (this file's test of cut bridges failed in CI).
    // The counters now keep each location's tag; copies of the program at eight addresses
    // (all alive, so none reuses another's memory) must give the same decisions.
    let params = "on,threshold=50,bridge_limit=300,cut_bridges=1";
    let programs: Vec<bf::Program> = (0..8).map(|_| collatz()).collect();
    let decisions = |p: &bf::Program| {
        let (_, s) = run_program(p, params);
        let kinds: Vec<_> = s.traces.iter().map(|t| (t.kind, t.tree)).collect();
        (
            s.loops(),
            s.cut,
            s.aborts.len(),
            s.guard_failures,
            s.entries,
            kinds,
        )
    };
    let first = decisions(&programs[0]);
    assert!(first.0 > 0 && first.1 > 0, "{first:?}");
    for p in &programs[1..] {
        assert_eq!(decisions(p), first);
    }
}

#[test]
fn a_bridge_too_long_is_cut_at_the_last_loop_header_it_passed() {
    // collatz.bf's loop body branches at every bit of a number, and a bridge duplicates the
    // rest of the body after its guard: with a low `bridge_limit`, bridges grow past it.
    // Cut short, such a bridge ends with a `finish` at the last loop header it passed (the
    // interpreter takes over there), and its guard's failures run that part compiled instead
    // of deoptimizing into the interpreter every time.
    let limit = 300;
    let common = format!("on,threshold=50,bridge_limit={limit},keep_recorded=1");
    let (_, cut) = run(&format!("{common},cut_bridges=1"));
    let (_, whole) = run(&format!("{common},cut_bridges=0"));
    assert_eq!(whole.cut, 0, "{}", whole.summary());
    assert!(cut.cut >= 1, "{}", cut.summary());
    let ends_in_finish = |t: &&meta_jit::warm::TraceRecord| {
        let text = t.recorded.as_ref().expect("kept").to_string();
        let last = text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        last.trim_start().starts_with("finish(")
    };
    let cut_bridges: Vec<_> = cut
        .traces
        .iter()
        .filter(|t| t.kind == meta_jit::warm::TraceKind::Bridge)
        .filter(ends_in_finish)
        .collect();
    // collatz.bf's bridges end by jumping into a loop, never at the program's end: the
    // bridges that finish are the cut ones and the bridges of their guards that end where
    // they do, and each is at most the limit long (the limit counts the inputs; then the
    // `finish`).
    assert_eq!(
        cut_bridges.len(),
        cut.cut + cut.cut_ends,
        "{}",
        cut.summary()
    );
    for t in &cut_bridges {
        let ops = &t.recorded.as_ref().unwrap().ops;
        assert!(ops.len() <= limit + 1, "{} ops", ops.len());
    }
    assert!(
        whole.traces.iter().filter(ends_in_finish).count() == 0,
        "{}",
        whole.summary()
    );
    // Whether cutting pays is not this test's business: at this low limit it did in a debug
    // build (fewer guard failures than without cutting) and did not in a release build
    // (4,595,657 guard failures against 3,804,242, and 2.35 s against 1.80 s; without
    // cutting it compiled 24 bridges, with cutting 21), where an assertion that it did failed.
}

#[test]
fn a_bridge_of_a_cut_bridge_ends_where_its_parent_ends() {
    // With the default parameters, one bridge of collatz.bf grows past `bridge_limit` and is
    // cut at a loop header; two of its guards fail often. Their bridges are not cut again,
    // and used to run on past that header, grow past the limit and abort: those two guards
    // then went to the interpreter on every failure, 4,713 and 1,180 times of the run's
    // 11,763 failures. Each such bridge now ends with a `finish` at its parent's header the
    // first time it passes it (and so do the bridges of its guards): every guard gets a
    // bridge after at most a few hundred failures, and the run fails 7,194 times.
    let (_, s) = run("on");
    assert!(s.cut >= 1, "{}", s.summary());
    assert!(s.cut_ends >= 1, "{}", s.summary());
    let guards = bf::interpret::with_driver(|d| d.guard_counts());
    let most = guards.iter().map(|g| g.failures).max().unwrap_or(0);
    assert!(
        most <= 1_000,
        "a guard failed {most} times: {}",
        s.summary()
    );
    assert!(s.guard_failures < 9_000, "{}", s.summary());
    // Without the cut bridges, no bridge ends where another ends.
    let (_, whole) = run("on,cut_bridges=0");
    assert_eq!((whole.cut, whole.cut_ends), (0, 0), "{}", whole.summary());
}

/// The program of `bf::gen::long_loops`.
fn long_loops(loops: usize, pairs: usize) -> bf::Program {
    bf::parse(bf::gen::long_loops(loops, pairs).as_bytes()).unwrap()
}

#[test]
fn a_compiled_trace_keeps_its_resume_data_not_its_ops() {
    // A compiled trace used to keep its whole optimized trace for its guards' resume data, an
    // entry for each guard and the backend's op table at 16 bytes an op: 20 loops of 600
    // pairs peaked at 27 MB of RSS (9.4 times the JIT-off run), and `max_memory_kb`'s 16 MiB
    // had room for 13 of them. The driver now keeps each guard's resume data encoded in one
    // array, an entry only for guards that failed, and 4 bytes an op for the disassembly.
    // Measured here: 401 bytes a guard in a debug build (2,641 guards; its traces are longer),
    // 510 in a release build (1,203 guards), machine code included. The optimized traces
    // alone, which the driver used to keep on top of that, take 346 and 537 bytes a guard.
    // Since the bounds stage knows a `Vec`'s length is not negative, the sign checks of the
    // tape pointer are gone: 604 guards in release and debug builds, 650 bytes a guard (392 KB
    // in all, 613 KB before: the code that is not guards is shared by fewer of them).
    let program = long_loops(1, 600);
    bf::interpret::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=1039,trace_eagerness=200,trace_limit=20000,max_memory_kb=16384,keep_optimized=1")
            .unwrap();
    });
    let (mut input, mut out) = (std::io::empty(), std::io::sink());
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(&program, &mut bf::Tape::new(), &mut io).unwrap();
    let (stats, memory) = bf::interpret::with_driver(|d| (d.stats(), d.memory()));
    let guards: usize = stats
        .traces
        .iter()
        .map(|t| {
            t.optimized()
                .ops
                .iter()
                .filter(|op| op.resume.is_some())
                .count()
        })
        .sum();
    assert!(guards >= 500, "{guards} guards: {}", stats.summary());
    let per_guard = memory / guards;
    assert!(per_guard <= 700, "{memory} bytes for {guards} guards");
}

#[test]
fn a_loop_whose_traces_abort_calls_the_driver_once_per_threshold_passes() {
    // 200 outer turns of an inner loop of 250 turns whose trace is longer than the trace
    // limit, so every try aborts. After `k` aborts a location waits `threshold << k` passes;
    // the counter used to call the driver at every pass from `threshold` on while it waited
    // (1,588 calls here, each checking the facts of the aborted trace: 5% to 8% of
    // collatz.bf's time), and now calls it once per `threshold` passes (499).
    let src = format!("{}[>{}[->+>+>+>+<<<<]<-]", "+".repeat(200), "+".repeat(250));
    let program = bf::parse(src.as_bytes()).unwrap();
    bf::interpret::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=100,trace_limit=20,max_aborts=4")
            .unwrap();
    });
    let (mut input, mut out) = (std::io::empty(), std::io::sink());
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(&program, &mut bf::Tape::new(), &mut io).unwrap();
    let stats = bf::interpret::with_driver(|d| d.stats());
    assert_eq!(stats.loops(), 0, "{}", stats.summary());
    assert!(stats.aborts.len() >= 4, "{}", stats.summary());
    // 50,200 passes of the two loop headers.
    assert!(
        stats.hot_calls <= 50_200 / 100 + 10,
        "{} calls",
        stats.hot_calls
    );
}
