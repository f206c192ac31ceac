//! `Option` and `Result` of scalars stored in memory (a `Vec<Option<i64>>`, a field
//! `Result<u32, i64>`, a field `Option<f64>`): traced code reads and writes them out of line
//! (Rust defines no layout for them), matches on them in place and applies `?` to a loaded one.
//! The JIT must agree with the interpreter and with jitcode alone.

mod loopgen;

use loopgen::{agree, small, Pick, Program};
use meta_jit::hints as jit;
use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(C, u8)]
pub enum Ins {
    /// `cache[i % 4] = None` every `k`-th turn, else `Some(2 i)`.
    Stash(i64),
    /// Reads `cache[(i + 1) % 4]` by `match`.
    Peek,
    /// `res = Err(-i)` every `k`-th turn, else `Ok(i)`; reads it back through `?`.
    Try(i64),
    /// `half = Some(i / 2)` on even turns, else `None`; `if let` on it.
    Halve,
    /// `i += 1`; back to `t` while `i < n`.
    LoopLt(i64, u32),
    Halt,
}

#[derive(JitLayout)]
pub struct State {
    pub cache: Vec<Option<i64>>,
    pub res: Result<u32, i64>,
    pub half: Option<f64>,
}

#[derive(JitLayout)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// The `Ok` value of `st.res` plus one, or its error (`?` on a `Result` in memory).
#[look_inside]
pub fn ok_plus_one(st: &State) -> Result<i64, i64> {
    let v = st.res?;
    Ok(v as i64 + 1)
}

#[jit::interpreter(greens(pc, code), reds(st, i, acc))]
pub fn run(code: &Code, st: &mut State, mut i: i64, mut acc: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Stash(k) => {
                let n = st.cache.len();
                st.cache[(i as usize) % n] = if i % k == 0 { None } else { Some(2 * i) };
            }
            Ins::Peek => {
                let n = st.cache.len();
                match st.cache[(i as usize + 1) % n] {
                    Some(x) => acc = acc.wrapping_add(x),
                    None => acc -= 1,
                }
                // `is_some`/`is_none` on a place and on a value.
                if st.cache[(i as usize + 2) % n].is_none() {
                    acc -= 3;
                }
                let v = st.cache[i as usize % n];
                if v.is_some() {
                    acc ^= 1;
                }
            }
            Ins::Try(k) => {
                st.res = if i % k == 0 { Err(-i) } else { Ok(i as u32) };
                match ok_plus_one(st) {
                    Ok(v) => acc = acc.wrapping_add(v),
                    Err(e) => acc ^= e & 0x55,
                }
                if let Err(e) = st.res {
                    acc = acc.wrapping_sub(e);
                }
                if st.res.is_ok() {
                    acc = acc.wrapping_add(5);
                }
            }
            Ins::Halve => {
                st.half = if i % 2 == 0 {
                    Some(i as f64 * 0.5)
                } else {
                    None
                };
                if let Some(h) = st.half {
                    acc = acc.wrapping_add(h as i64);
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

/// The result and the state.
#[derive(Debug, PartialEq)]
struct End {
    acc: i64,
    cache: Vec<Option<i64>>,
    res: Result<u32, i64>,
    half: Option<u64>,
}

fn go(mode: &str, n: i64, k: i64, len: usize) -> End {
    let body = vec![Ins::Stash(k), Ins::Peek, Ins::Try(k + 1), Ins::Halve];
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
        cache: vec![None; len],
        res: Ok(0),
        half: None,
    };
    let acc = if mode == "jitcode" {
        run::run_jitcode(&code, &mut st, 0, 0)
    } else {
        run(&code, &mut st, 0, 0)
    };
    End {
        acc,
        cache: st.cache,
        res: st.res,
        half: st.half.map(f64::to_bits),
    }
}

#[test]
fn sums_in_memory_agree_jit_on_off_and_jitcode() {
    let off = go("off", 1000, 3, 4);
    assert!(off.cache.iter().any(Option::is_some), "{off:?}");
    assert_eq!(go("on", 1000, 3, 4), off);
    let s = run::with_driver(|d| d.stats());
    assert!(s.loops() >= 1, "{}", s.summary());
    // Out of line: the loop reads and writes them through the framework's helpers.
    let lp = s.traces[0].optimized().to_string();
    for helper in [
        "option_tag",
        "option_value",
        "option_store",
        "result_tag",
        "result_store",
    ] {
        assert!(lp.contains(helper), "{helper}: {lp}");
    }
    assert_eq!(go("jitcode", 1000, 3, 4), off);
}

#[test]
fn other_inputs_agree() {
    for (n, k, len) in [(300, 2, 1), (500, 4, 3), (400, 7, 5), (250, 1, 2)] {
        let off = go("off", n, k, len);
        assert_eq!(go("on", n, k, len), off, "n {n}, k {k}, len {len}");
        assert_eq!(go("jitcode", n, k, len), off, "n {n}, k {k}, len {len}");
    }
}

impl Pick for Ins {
    fn pick(g: &mut quickcheck::Gen) -> Ins {
        use quickcheck::Arbitrary;
        match u8::arbitrary(g) % 4 {
            0 => Ins::Stash(small(g)),
            1 => Ins::Peek,
            2 => Ins::Try(small(g)),
            _ => Ins::Halve,
        }
    }
}

/// Random loops agree with the JIT on, off, and on jitcode alone (200 programs; more with
/// `METAJIT_PROP_CASES`, another seed with `METAJIT_PROP_SEED`).
#[test]
fn random_loops_agree() {
    fn prop(p: Program<Ins>) -> quickcheck::TestResult {
        agree(&p, |mode| go_body(mode, &p.body, p.n, p.len))
    }
    meta_jit::testing::prop_runner(0x7375_6d73, 0, 200)
        .quickcheck(prop as fn(Program<Ins>) -> quickcheck::TestResult);
}
