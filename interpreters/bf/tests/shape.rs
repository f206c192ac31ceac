//! What the JIT compiles for a simple Brainfuck loop: no interpreter dispatch is left (no load
//! of the program's ops, the position folded into constants), and the peeled loop body is only
//! the guest's own work. The figures are deterministic: they are ops in the optimized trace.

fn compile(src: &[u8]) -> meta_jit::warm::Stats {
    let program = bf::parse(src).unwrap();
    bf::interpret::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=10,keep_optimized=1").unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(&program, &mut tape, &mut io).unwrap();
    bf::interpret::with_driver(|d| d.stats())
}

#[test]
fn a_copy_loop_compiles_to_its_own_work_only() {
    // 200 * [move cell 0 into cell 1]: the inner loop `[->+<]` is compiled.
    let stats = compile(b"++++++++++[>++++++++++<-]>>++[<[->>+<<]>>[-<<+>>]<-]");
    assert!(stats.loops() >= 1, "{}", stats.summary());
    let lp = &stats.traces[0];
    let text = lp.optimized().to_string();
    // No dispatch: the program's ops are constants, never loaded, never guarded.
    assert!(!text.contains("Op_"), "{text}");
    assert_eq!(lp.count("guard_value"), 0, "{text}");
    // The loop body after the label: two cells updated in registers and stored, the loop
    // test; the tape's buffer and length and the bounds checks stay in the preamble.
    let body = text.split("label(").nth(1).expect("a peeled loop");
    for absent in ["getfield", "getarrayitem", "uint_lt", "uint_ge", "int_lt("] {
        assert!(!body.contains(absent), "{absent} in the loop body:\n{text}");
    }
    assert_eq!(body.matches("setarrayitem").count(), 2, "{text}");
    assert_eq!(body.matches("guard_").count(), 1, "{text}");
    // A counted loop: the body first computes the turn at which the counter reaches 0 and
    // moves the other cell (step 1) there by the turn; the counter itself is 1 at its last
    // turn whatever the turn is, so the body's store of it writes the constant 0 (it used to
    // be moved by a second `int_mul`, of the turn and its step, then decremented). The
    // counter's step, -1, is its own inverse: the turn is `counter - 1 mod 256`, an
    // `int_add`, with no `int_mul` by the inverse (there was one). Then the body runs once
    // and exits.
    assert_eq!(body.matches("int_mul").count(), 0, "{text}");
    assert!(body.contains(", 0, descr=u8_items1)"), "{text}");
}
