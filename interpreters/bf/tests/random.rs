//! Random programs that always end (`bf::gen`): the native interpreter and the jitcode-only
//! run of the same annotated loop give the same output and the same final tape.

use bf::gen::Generated;
use quickcheck::{Gen, QuickCheck, TestResult};

fn run(g: &Generated, jitcode: bool) -> (Vec<u8>, Vec<u8>) {
    let program = bf::parse(g.source().as_bytes()).expect("generated programs parse");
    let mut out = Vec::new();
    let mut input: &[u8] = &g.input;
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    let r = if jitcode {
        bf::run_jitcode(&program, &mut tape, &mut io)
    } else {
        bf::run(&program, &mut tape, &mut io)
    };
    r.expect("generated programs stay on the tape");
    tape.cells.truncate(bf::gen::CELLS as usize);
    (out, tape.cells)
}

#[test]
fn jitcode_runs_like_the_native_interpreter() {
    fn prop(g: Generated) -> TestResult {
        let native = run(&g, false);
        let jitcode = run(&g, true);
        if native == jitcode {
            TestResult::passed()
        } else {
            TestResult::error(format!(
                "program {:?} input {:?}: native {native:?}, jitcode {jitcode:?}",
                g.source(),
                g.input
            ))
        }
    }
    QuickCheck::new()
        .rng(Gen::from_size_and_seed(100, 0x6266))
        .tests(10_000)
        .max_tests(10_000)
        .quickcheck(prop as fn(Generated) -> TestResult);
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
