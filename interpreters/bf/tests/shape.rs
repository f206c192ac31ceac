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

#[test]
fn a_move_loop_checks_bounds_but_not_signs() {
    // `[->>>+<<<]` moves the pointer 3 right and back: each move had a sign check
    // (`int_lt(ptr, 0)`) besides its bounds check against the tape's length. The length of a
    // `Vec` lies in [0, 2^57] (the framework marks the descriptor `length`), so a pointer
    // below it and the pointer plus a small offset are not negative: no sign check is left
    // in the trace, and one bounds check per cell moved to remains.
    let stats = compile(b"++++++++++[>++++++++++<-]>>++[<[->>>+<<<]>>>[-<<<+>>>]<<-]");
    assert!(stats.loops() >= 1, "{}", stats.summary());
    let text = stats.traces[0].optimized().to_string();
    assert!(text.contains("length"), "{text}");
    assert_eq!(text.matches("= int_lt(").count(), 0, "{text}");
    assert_eq!(text.matches("uint_").count(), 2, "{text}");
}

/// Runs `src` with these JIT parameters (besides a low threshold and the optimized traces
/// kept).
fn compile_with(src: &[u8], params: &str) -> meta_jit::warm::Stats {
    let program = bf::parse(src).unwrap();
    bf::interpret::with_driver(|d| {
        d.reset();
        d.set_params(&format!("on,threshold=10,keep_optimized=1,{params}"))
            .unwrap();
    });
    let mut out = Vec::new();
    let mut input: &[u8] = b"";
    let mut tape = bf::Tape::new();
    let mut io = bf::Io::new(&mut input, &mut out);
    bf::run(&program, &mut tape, &mut io).unwrap();
    assert_eq!(out, b"!\n");
    bf::interpret::with_driver(|d| d.stats())
}

#[test]
fn nested_counting_loops_become_one_counted_loop_with_inlining() {
    // busy.bf: three nested loops counting down from 255, then `!` and a newline.
    let src = b"-[>-[>-[-]<-]<-]>>>+++++++++++[<+++>-]<.[-]++++++++++.";
    // Without inlining, the inner `[-]` is a counted loop of its own; the loop around it is
    // a bridge from its exit that jumps back into it, turn after turn.
    let plain = compile_with(src, "inline_loops=0");
    assert!(plain.bridges() >= 1, "{}", plain.summary());
    let jumps = |s: &meta_jit::warm::Stats| {
        s.traces
            .iter()
            .map(|t| t.optimized().to_string().matches("descr=loop").count())
            .sum::<usize>()
    };
    assert!(jumps(&plain) >= 1, "{}", plain.summary());
    // With inlining, the middle loop takes the inner one's code in and is counted in turn,
    // and so is the outer one: every trace is a counted loop (the fourth is the `[<+++>-]`
    // that makes the `!`), with no bridge and no jump from one trace to another.
    let inlined = compile_with(src, "inline_loops=1");
    if cfg!(debug_assertions) {
        // A debug build's traces check `+` and `-` for overflow (Rust's semantics there), and
        // the checks keep one loop from being counted. The figures below are the release
        // build's, which the README's test command also runs (`--release -p bf --test
        // shape`); here, inlining still removes jumps between traces.
        assert!(jumps(&inlined) < jumps(&plain), "{}", inlined.summary());
        return;
    }
    assert_eq!(inlined.bridges(), 0, "{}", inlined.summary());
    assert_eq!(inlined.loops(), 4, "{}", inlined.summary());
    assert_eq!(inlined.counted_loops, 4, "{}", inlined.summary());
    assert_eq!(jumps(&inlined), 0, "{}", inlined.summary());
    // The outermost loop's body after its label is straight-line code: no load of a cell
    // (the counted rewrite computes every cell's final value), a store of each of the three
    // cells and the exit.
    let outer = inlined.traces[2].optimized().to_string();
    let body = outer.split("label(").nth(1).expect("a peeled loop");
    assert_eq!(body.matches("getarrayitem").count(), 0, "{outer}");
    assert_eq!(body.matches("setarrayitem").count(), 3, "{outer}");
    assert_eq!(body.matches("guard_").count(), 1, "{outer}");
}

#[test]
fn a_walk_checks_each_next_cell_once() {
    // Cells 9, 18, ... hold 1; `[[-<*9+>*9]>*9]` walks them 9 at a time, moving each 1 nine
    // cells left (collatz's hot loop has this shape). Each turn checks the next position
    // against the tape's length before the `jump`; that check also covers the position at
    // the label on the next turn (the length is loop-invariant), so the body after the
    // label has one bounds check, not two.
    let mut src = b">>>>>>>>>+".repeat(60);
    src.extend(b"<".repeat(9 * 59));
    src.extend(b"[[-<<<<<<<<<+>>>>>>>>>]>>>>>>>>>]");
    let stats = compile(&src);
    assert!(stats.loops() >= 1, "{}", stats.summary());
    let text = stats.traces[0].optimized().to_string();
    let body = text.split("label(").nth(1).expect("a peeled loop");
    assert_eq!(body.matches("uint_").count(), 1, "{text}");
    assert_eq!(body.matches("int_lt(").count(), 0, "{text}");
    assert_eq!(body.matches("guard_").count(), 4, "{text}");
}

#[test]
fn a_move_left_checks_the_sign_but_not_the_length() {
    // `[-<<<+>>>]` moves cell 5 (200) to cell 2: the position 3 left of one checked against
    // the tape's length needs only its sign checked (it is below the length if the position
    // is). Only the first cell's bounds check is left, in the preamble.
    let mut src = b">>>>>".to_vec();
    src.extend(b"+".repeat(200));
    src.extend(b"[-<<<+>>>]");
    let stats = compile(&src);
    assert!(stats.loops() >= 1, "{}", stats.summary());
    let text = stats.traces[0].optimized().to_string();
    assert_eq!(text.matches("uint_").count(), 1, "{text}");
    assert_eq!(text.matches("= int_lt(").count(), 1, "{text}");
}
