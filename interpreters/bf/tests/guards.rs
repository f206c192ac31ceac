//! How often compiled code hands control back to the interpreter on the bench programs: every
//! guard failure without a bridge costs a deoptimization and a new entry into compiled code.
//! The figures are deterministic (the JIT's decisions depend only on the program and the
//! parameters), so the bounds are exact regressions tests, not timings.

fn run(name: &str) -> (meta_jit::warm::Stats, Vec<meta_jit::log::GuardCount>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let src = std::fs::read(dir.join(format!("{name}.bf"))).unwrap();
    let want = std::fs::read(dir.join(format!("{name}.out"))).unwrap();
    let program = bf::parse(&src).unwrap();
    bf::interpret::with_driver(|d| {
        d.reset();
        d.set_params("on").unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(&program, &mut tape, &mut io).unwrap();
    assert!(out == want, "{name}: wrong output");
    bf::interpret::with_driver(|d| (d.stats(), d.guard_counts()))
}

#[test]
fn a_bridge_stopped_by_an_inner_loop_is_traced_again_once_that_loop_has_code() {
    // On mandelbrot.bf, the bridge of one guard passes an inner loop `[-]` that goes round
    // twice at every entry: its own trace always leaves it on its last turn and ends in
    // another loop, so it is dropped until its `max_aborts`-th try compiles it. The bridge
    // stopped at it four times and then got no bridge at all: that guard failed 28,491 times
    // into the interpreter (72,631 failures in all). It now tries again after doubled waits:
    // 400 failures (45,025 in all). On primes.bf, the same: 30,705 of 45,528, now 800 of
    // 16,023.
    for (name, all) in [("mandelbrot", 50_000), ("primes", 20_000)] {
        let (stats, guards) = run(name);
        let worst = guards.iter().max_by_key(|g| g.failures).unwrap();
        assert!(
            worst.failures <= 1_000,
            "{name}: guard {} of trace {} failed {} times\n{}",
            worst.id,
            worst.trace,
            worst.failures,
            stats.summary()
        );
        assert!(stats.guard_failures < all, "{name}: {}", stats.summary());
    }
}

#[test]
fn guards_get_bridges_sooner_while_bridges_are_short() {
    // With a bridge after 200 failures of its guard whatever it costs, mandelbrot.bf failed
    // 44,960 guards into the interpreter (200 bridges), primes.bf 16,023 (67), nested.bf
    // 10,124 (43). Their bridges record about 40 to 60 ops on average, so guards now get
    // theirs after 20 failures: 7,119 (258 bridges), 4,841 (86) and 3,049 (63).
    for (name, most) in [("mandelbrot", 9_000), ("primes", 6_000), ("nested", 4_000)] {
        let (stats, _) = run(name);
        assert!(stats.guard_failures <= most, "{name}: {}", stats.summary());
    }
    // collatz.bf's bridges are long (about 1,400 recorded ops): 200 failures still.
    let (stats, guards) = run("collatz");
    let bridged = guards.iter().filter(|g| g.bridged).count();
    assert!(bridged > 0 && stats.bridges() > 50, "{}", stats.summary());
    assert!(
        guards
            .iter()
            .filter(|g| g.bridged)
            .all(|g| g.failures >= 200),
        "{}",
        stats.summary()
    );
}
