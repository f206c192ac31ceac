//! `Option<Gc<T>>` in traced code: an optional link between objects of the JIT's heap, read
//! and written in memory, held in a red, matched, built with `Some`/`None` and taken apart
//! with `?`. A small VM keeps a linked stack of nodes (`next: Option<Gc<Node>>`) and walks it
//! in a loop; the JIT must agree with the interpreter and with jitcode alone, and the walk's
//! trace tests the link against null without calling anything.

use meta_jit::hints as jit;
use meta_jit::hints::*;

/// A node of the stack.
#[derive(Debug, JitLayout, Trace)]
pub struct Node {
    pub v: i64,
    pub next: Option<Gc<Node>>,
}

/// The stack: its top and its length.
#[derive(Debug, JitLayout, Trace)]
pub struct Stack {
    pub top: Option<Gc<Node>>,
    pub len: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, JitLayout, Trace)]
#[repr(C, u8)]
pub enum Ins {
    /// Pushes a node holding `i`.
    Push,
    /// Pops the top node when `i % k == 0` (and the stack is not empty).
    PopEvery(i64),
    /// `cur = top`
    Walk,
    /// While `cur` is a node: `acc += f(node)`, `cur = node.next`, back to this instruction.
    Follow,
    /// Empties the stack when `i % k == 0`.
    ClearEvery(i64),
    /// `i += 1`; back to `t` while `i < n`.
    LoopLt(i64, u32),
    Halt,
}

#[derive(JitLayout, Trace)]
pub struct Code {
    #[jit(immutable, immutable_items)]
    pub ops: Vec<Ins>,
}

/// The second node's value, if the stack has two nodes (`?` on links).
#[look_inside]
fn second(s: &Stack) -> Option<i64> {
    let top = s.top?;
    let next = top.next?;
    Some(next.v)
}

/// The link after `n`, through a function the tracer does not enter (an `Option<Gc<T>>`
/// argument and result of a residual call).
#[dont_look_inside]
fn after(n: Option<Gc<Node>>) -> Option<Gc<Node>> {
    n.and_then(|n| n.next)
}

#[look_inside]
fn weight(n: Gc<Node>, second: Option<i64>) -> i64 {
    let w = match second {
        Some(x) => x & 7,
        None => 1,
    };
    n.v * w + 1
}

#[jit::interpreter(greens(pc, code), reds(s, cur, i, acc))]
pub fn run(code: &Code, s: &mut Stack, mut cur: Option<Gc<Node>>, mut i: i64, mut acc: i64) -> i64 {
    let mut pc: usize = 0;
    loop {
        jit_merge_point!();
        match code.ops[pc] {
            Ins::Push => {
                s.top = Some(Gc::new(Node { v: i, next: s.top }));
                s.len += 1;
            }
            Ins::PopEvery(k) => {
                if i % k == 0 {
                    if let Some(t) = s.top {
                        s.top = t.next;
                        s.len -= 1;
                    }
                }
            }
            Ins::Walk => cur = s.top,
            Ins::Follow => match cur {
                Some(n) => {
                    acc = acc.wrapping_add(weight(n, second(s)));
                    // Every other step goes through the residual call.
                    cur = if n.v % 2 == 0 { n.next } else { after(cur) };
                    can_enter_jit!();
                    continue;
                }
                // The end of the walk: the stack's length counts too.
                None => acc = acc.wrapping_add(s.len),
            },
            Ins::ClearEvery(k) => {
                if i % k == 0 {
                    s.top = None;
                    s.len = 0;
                }
            }
            Ins::LoopLt(n, t) => {
                i += 1;
                if i < n {
                    pc = t as usize;
                    can_enter_jit!();
                    continue;
                }
            }
            Ins::Halt => return acc,
        }
        pc += 1;
    }
}

fn program(n: i64, pop: i64, clear: i64) -> Vec<Ins> {
    vec![
        Ins::Push,
        Ins::PopEvery(pop),
        Ins::Walk,
        Ins::Follow,
        Ins::ClearEvery(clear),
        Ins::LoopLt(n, 0),
        Ins::Halt,
    ]
}

/// The result, the stack's length and its values from the top (`params` "jitcode": the
/// portal's jitcode run alone).
fn go(params: &str, n: i64, pop: i64, clear: i64) -> (i64, i64, Vec<i64>) {
    run::with_driver(|d| {
        d.reset();
        d.set_params("on,threshold=3,trace_eagerness=2,keep_optimized=1")
            .unwrap();
        if params != "jitcode" {
            d.set_params(params).unwrap();
        }
    });
    let code = Code {
        ops: program(n, pop, clear),
    };
    let mut s = Stack { top: None, len: 0 };
    let acc = if params == "jitcode" {
        run::run_jitcode(&code, &mut s, None, 0, 0)
    } else {
        run(&code, &mut s, None, 0, 0)
    };
    let mut vals = Vec::new();
    let mut at = s.top;
    while let Some(node) = at {
        vals.push(node.v);
        at = node.next;
    }
    (acc, s.len, vals)
}

#[test]
fn a_linked_stack_agrees_jit_on_off_and_jitcode() {
    let off = go("off", 1000, 3, 97);
    let on = go("on", 1000, 3, 97);
    assert_eq!(on, off);
    assert_eq!(off.1 as usize, off.2.len());
    assert!(!off.2.is_empty(), "the program ends with a non-empty stack");
    let s = run::with_driver(|d| d.stats());
    assert!(s.loops() >= 1, "{}", s.summary());
    // The walk was compiled: its loop tests the link against null, and calls nothing on the
    // path it took (even values: `n.next` read in the trace).
    let opt: Vec<String> = s
        .traces
        .iter()
        .filter_map(|t| t.optimized.as_deref())
        .map(|t| t.to_string())
        .collect();
    let walk = opt
        .iter()
        .find(|t| t.contains("label(") && t.contains("descr=next_8"))
        .unwrap_or_else(|| panic!("no compiled walk: {}", s.summary()));
    let body = &walk[walk.find("label(").unwrap()..];
    assert!(
        body.contains("ptr_ne(") && body.contains("ConstPtr(0x0))"),
        "{walk}"
    );
    assert!(!body.contains("call"), "{walk}");
    // The odd values' path calls `after` with the link and gets one back, in a bridge.
    assert!(
        opt.iter()
            .any(|t| !t.contains("label(") && t.contains("call_r(")),
        "no bridge calls `after`: {opt:#?}"
    );
    let jc = go("jitcode", 1000, 3, 97);
    assert_eq!(jc, off);
}

/// Other shapes of the stack (popped more or less often, emptied more or less often), so that
/// guards on links fail at other places: JIT on, off and jitcode agree.
#[test]
fn other_stack_shapes_agree() {
    for (pop, clear) in [(2, 5), (5, 13), (7, 1000), (1, 3), (4, 2)] {
        let off = go("off", 700, pop, clear);
        assert_eq!(go("on", 700, pop, clear), off, "pop {pop}, clear {clear}");
        assert_eq!(
            go("jitcode", 700, pop, clear),
            off,
            "pop {pop}, clear {clear}"
        );
    }
}

#[test]
fn question_mark_on_links() {
    let n2 = Gc::new(Node { v: 5, next: None });
    let n1 = Gc::new(Node {
        v: 9,
        next: Some(n2),
    });
    let two = Stack {
        top: Some(n1),
        len: 2,
    };
    let one = Stack {
        top: Some(n2),
        len: 1,
    };
    let none = Stack { top: None, len: 0 };
    assert_eq!(second::run_jitcode(&two), Some(5));
    assert_eq!(second::run_jitcode(&one), None);
    assert_eq!(second::run_jitcode(&none), None);
    assert_eq!(second(&two), Some(5));
}

/// Whether the top node is `n` (object identity in traced code: `Gc::ptr_eq`, one address
/// comparison).
#[look_inside]
fn top_is(s: &Stack, n: Gc<Node>) -> bool {
    match s.top {
        Some(t) => Gc::ptr_eq(t, n),
        None => false,
    }
}

#[test]
fn identity_of_objects_in_traced_code() {
    let n2 = Gc::new(Node { v: 5, next: None });
    let n1 = Gc::new(Node {
        v: 5,
        next: Some(n2),
    });
    let s = Stack {
        top: Some(n1),
        len: 2,
    };
    // Two nodes with equal fields are still two objects.
    assert!(top_is::run_jitcode(&s, n1));
    assert!(!top_is::run_jitcode(&s, n2));
    let empty = Stack { top: None, len: 0 };
    assert!(!top_is::run_jitcode(&empty, n1));
    assert_eq!(top_is(&s, n1), top_is::run_jitcode(&s, n1));
}
