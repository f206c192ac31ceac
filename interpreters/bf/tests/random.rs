//! Random programs that always end (`bf::gen`): the native interpreter with the JIT off, with
//! the JIT on (a low threshold, so loops compile and guards fail), and the jitcode-only run of
//! the same annotated loop give the same output and the same final tape. The JIT runs twice:
//! with the default `max_aborts`, which drops loop traces that end in another loop, and with
//! `max_aborts=1`, which compiles them; a third time with `inline_loops=1`, where traces
//! take in the counted loops they reach; and a fourth time with `bridge_limit=24`, where
//! bridges longer than that are cut short at a loop header and hand over to the interpreter
//! there.

use bf::gen::Generated;
use quickcheck::{Gen, TestResult};

#[derive(Clone, Copy, Debug)]
enum Mode {
    NoJit,
    Jit {
        max_aborts: u32,
        inline: bool,
        bridge_limit: usize,
    },
    Jitcode,
}

fn run(g: &Generated, mode: Mode) -> (Vec<u8>, Vec<u8>) {
    let program = bf::parse(g.source().as_bytes()).expect("generated programs parse");
    // Each program is new, maybe at the address of a freed one: no reset, the driver must
    // notice that code compiled for the old program does not fit (its entry check).
    bf::interpret::with_driver(|d| {
        let params = match mode {
            Mode::Jit {
                max_aborts,
                inline,
                bridge_limit,
            } => format!(
                "on,threshold=3,trace_eagerness=2,max_aborts={max_aborts},inline_loops={},\
                 bridge_limit={bridge_limit}",
                u8::from(inline)
            ),
            _ => "off".to_string(),
        };
        d.set_params(&params).unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = &g.input;
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    let r = match mode {
        Mode::Jitcode => bf::run_jitcode(&program, &mut tape, &mut io),
        _ => bf::run(&program, &mut tape, &mut io),
    };
    r.expect("generated programs stay on the tape");
    tape.cells.truncate(bf::gen::CELLS as usize);
    (out, tape.cells)
}

#[test]
fn jit_and_jitcode_run_like_the_native_interpreter() {
    fn prop(g: Generated) -> TestResult {
        let native = run(&g, Mode::NoJit);
        // The default number of tries (a trace that ends in another loop is dropped and
        // retried), and one try (it is compiled at once).
        let default = meta_jit::warm::Params::default();
        let (tries, limit) = (default.max_aborts, default.bridge_limit);
        let jit = [
            (tries, false, limit),
            (1, false, limit),
            (tries, true, limit),
            (tries, false, 24),
        ]
        .map(|(max_aborts, inline, bridge_limit)| Mode::Jit {
            max_aborts,
            inline,
            bridge_limit,
        });
        for mode in [jit[0], jit[1], jit[2], jit[3], Mode::Jitcode] {
            let other = run(&g, mode);
            if other != native {
                return TestResult::error(format!(
                    "program {:?} input {:?}: no JIT {native:?}, {mode:?} {other:?}",
                    g.source(),
                    g.input
                ));
            }
        }
        TestResult::passed()
    }
    // 10,000 programs from a fixed seed.
    meta_jit::testing::prop_runner(0x6266, 0, 10_000)
        .quickcheck(prop as fn(Generated) -> TestResult);
    // The programs' move and clear loops compile as counted loops (the optimizer's rewrite
    // that skips to the last turn), so the property covers that rewrite in machine code too.
    let stats = bf::interpret::with_driver(|d| d.stats());
    assert!(stats.counted_loops > 100, "{}", stats.summary());
    // And bridges are cut short.
    assert!(stats.cut > 10, "{}", stats.summary());
}

#[test]
fn generated_programs_have_nested_loops_and_io() {
    use quickcheck::Arbitrary;
    let mut g = Gen::from_size_and_seed(100, 7);
    let (mut nested, mut io, mut total_len) = (0, 0, 0);
    for _ in 0..1000 {
        let p = Generated::arbitrary(&mut g);
        let s = p.source();
        // Some `[` opens before the `]` of the loop around it.
        let mut depth = 0;
        let mut deepest = 0;
        for c in s.chars() {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            deepest = deepest.max(depth);
        }
        nested += (deepest >= 2) as u32;
        io += (s.contains(',') && s.contains('.')) as u32;
        total_len += s.len();
    }
    assert!(nested > 100, "{nested} of 1000 programs have a nested loop");
    assert!(io > 300, "{io} of 1000 programs read and write");
    assert!(
        total_len > 20_000,
        "programs average {} characters",
        total_len / 1000
    );
}

/// Found by the property above: a new loop trace that ends by jumping into an older compiled
/// loop must hand over to that loop, not start itself again with the older loop's state.
/// (`max_aborts=1`: such a trace is compiled, not dropped.)
#[test]
fn a_trace_that_jumps_into_another_loop_continues_there() {
    let g = Generated {
        items: vec![
            bf::gen::Item::Add(142),
            bf::gen::Item::Seek(1),
            bf::gen::Item::Add(144),
            bf::gen::Item::Bracket(vec![
                bf::gen::Item::Seek(-2),
                bf::gen::Item::Add(1),
                bf::gen::Item::Bracket(vec![]),
            ]),
        ],
        input: vec![],
    };
    let native = run(&g, Mode::NoJit);
    assert_eq!(
        run(
            &g,
            Mode::Jit {
                max_aborts: 1,
                inline: false,
                bridge_limit: meta_jit::warm::Params::default().bridge_limit,
            }
        ),
        native
    );
    let stats = bf::interpret::with_driver(|d| d.stats());
    assert_eq!(
        stats.loops(),
        2,
        "the inner loop, then the outer one jumping into it"
    );
}
