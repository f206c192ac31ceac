//! Tuples in traced code: built, returned from an inlined function, destructured by `let` and
//! by `match`, read and written by field, nested, and loaded from and stored to memory (a
//! `Vec<(i64, f64)>` and a struct field of tuple type). The JIT must agree with the interpreter
//! and with jitcode alone, and the compiled loop must do it all with no call.

mod loopgen;

use loopgen::{agree, small, Pick, Program};
use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `(q, r) = divmod(i, k)`; `acc += q * 3 + r`.
    Div(i64),
    /// Reads `pairs[i % len]`, writes a changed pair back one slot further.
    Rotate,
    /// `match divmod(i, k)` with tuple patterns.
    Sort3(i64),
    /// A mutable tuple changed by field, and a nested one.
    Fiddle,
    /// `st.last = (i, acc & 1 == 0)`, then read back by field.
    Stamp,
    /// `i += 1`; back to `t` while `i < n`.
    LoopLt(i64, u32),
    Halt,
}

/// The memory the loop changes: pairs, and a field of tuple type.
#[derive(JitLayout)]
pub struct State {
    pub pairs: Vec<(i64, f64)>,
    pub last: (i64, bool),
    pub sum: f64,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// Quotient and remainder, flooring (an inlined function returning a tuple).
#[look_inside]
pub fn divmod(a: i64, b: i64) -> (i64, i64) {
    let q = a / b;
    let r = a % b;
    if r < 0 {
        (q - 1, r + b)
    } else {
        (q, r)
    }
}

/// A pair swapped and scaled (a tuple argument and result).
#[look_inside]
pub fn twist(p: (i64, f64), by: i64) -> (i64, f64) {
    let (k, v) = p;
    (k + by, v * 0.5 + by as f64)
}

#[jit::interpreter(greens(pc, code), reds(st, i, acc))]
pub fn run(code: &Code, st: &mut State, mut i: i64, mut acc: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Div(k) => {
                let (q, r) = divmod(i, k);
                acc = acc.wrapping_add(q * 3 + r);
            }
            Ins::Rotate => {
                let n = st.pairs.len();
                let at = (i as usize) % n;
                let (k, v) = st.pairs[at];
                st.sum += v;
                st.pairs[(at + 1) % n] = twist((k, v), i & 7);
                acc = acc.wrapping_add(st.pairs[at].0);
            }
            Ins::Sort3(k) => match divmod(i, k) {
                (_, 0) => acc += 100,
                (q, 1) => acc = acc.wrapping_add(q),
                (q, r) => acc = acc.wrapping_sub(q + r),
            },
            Ins::Fiddle => {
                let mut t = (acc & 15, i);
                t.0 += 1;
                t.1 = t.0 * 2 - t.1;
                let nested = ((t.1, 3), t.0);
                let ((a, b), c) = nested;
                acc = acc.wrapping_add(a + b * c + nested.0 .1);
            }
            Ins::Stamp => {
                st.last = (i, acc & 1 == 0);
                if st.last.1 {
                    acc = acc.wrapping_add(st.last.0);
                }
                match st.last {
                    (x, true) => acc ^= x & 0xf,
                    (_, false) => acc -= 1,
                }
            }
            Ins::LoopLt(n, to) => {
                i += 1;
                if i < n {
                    pc = to as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return acc,
        }
        pc += 1;
    }
}

/// The result and the state's memory.
#[derive(Debug, PartialEq)]
struct End {
    acc: i64,
    pairs: Vec<(i64, u64)>,
    last: (i64, bool),
    sum: u64,
}

fn go(mode: &str, n: i64, k: i64, len: usize) -> End {
    let body = vec![
        Ins::Div(k),
        Ins::Rotate,
        Ins::Sort3(k + 1),
        Ins::Fiddle,
        Ins::Stamp,
    ];
    go_body(mode, &body, n, len)
}

/// Runs `body` in a loop of `n` turns (see `go`).
fn go_body(mode: &str, body: &[Ins], n: i64, len: usize) -> End {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2,keep_optimized=1")
            .unwrap();
        if mode != "jitcode" {
            d.set_params(mode).unwrap();
        }
    });
    let mut ops = body.to_vec();
    ops.extend([Ins::LoopLt(n, 0), Ins::Halt]);
    let code = Code { ops };
    let mut st = State {
        pairs: (0..len).map(|j| (j as i64 - 3, j as f64 * 1.5)).collect(),
        last: (0, false),
        sum: 0.0,
    };
    let acc = if mode == "jitcode" {
        run::run_jitcode(&code, &mut st, -5, 0)
    } else {
        run(&code, &mut st, -5, 0)
    };
    End {
        acc,
        pairs: st.pairs.iter().map(|&(k, v)| (k, v.to_bits())).collect(),
        last: st.last,
        sum: st.sum.to_bits(),
    }
}

#[test]
fn tuples_agree_jit_on_off_and_jitcode() {
    let off = go("off", 1000, 7, 5);
    assert_ne!(off.acc, 0);
    assert_eq!(go("on", 1000, 7, 5), off);
    let s = run::with_driver(|d| d.stats());
    assert!(s.loops() >= 1, "{}", s.summary());
    // The loop's tuples live in registers and memory: no call is left.
    let lp = s.traces[0].optimized().to_string();
    assert!(!lp.contains("call"), "{lp}");
    // Both elements of a pair and of `last` are stored by the loop itself.
    for descr in ["0_0", "1_8", "0_24", "1_32"] {
        assert!(lp.contains(&format!("descr={descr})")), "{descr}: {lp}");
        let store = lp
            .lines()
            .any(|l| l.starts_with("setfield(") && l.ends_with(&format!("descr={descr})")));
        assert!(store, "no store with {descr}: {lp}");
    }
    assert_eq!(go("jitcode", 1000, 7, 5), off);
}

#[test]
fn other_inputs_agree() {
    for (n, k, len) in [
        (300, 2, 1),
        (500, 3, 2),
        (400, 5, 7),
        (250, 11, 3),
        (600, 1, 4),
    ] {
        let off = go("off", n, k, len);
        assert_eq!(go("on", n, k, len), off, "n {n}, k {k}, len {len}");
        assert_eq!(go("jitcode", n, k, len), off, "n {n}, k {k}, len {len}");
    }
}

impl Pick for Ins {
    fn pick(g: &mut quickcheck::Gen) -> Ins {
        use quickcheck::Arbitrary;
        match u8::arbitrary(g) % 5 {
            0 => Ins::Div(small(g)),
            1 => Ins::Rotate,
            2 => Ins::Sort3(small(g)),
            3 => Ins::Fiddle,
            _ => Ins::Stamp,
        }
    }
}

/// Random loops agree with the JIT on, off, and on jitcode alone (200 programs; more with
/// `METAJIT_PROP_CASES`, another seed with `METAJIT_PROP_SEED`).
#[test]
fn random_tuple_loops_agree() {
    fn prop(p: Program<Ins>) -> quickcheck::TestResult {
        agree(&p, |mode| go_body(mode, &p.body, p.n, p.len))
    }
    meta_jit::testing::prop_runner(0x7475_706c, 0, 200)
        .quickcheck(prop as fn(Program<Ins>) -> quickcheck::TestResult);
}
