//! Guest positions in traces: the merge points a trace passed (`trace::Mark`),
//! rendered as text by the interpreter's location hook, placed in the listings of a trace as
//! recorded and as optimized, and given to each guard.
//!
//! A trace as recorded knows exactly where each op comes from: the ops from one mark to the
//! next. The optimizer does not keep that, but it keeps every guard's number; so after
//! optimization each guard has the position it had when recorded, and the ops before a guard
//! (back to the previous guard) are shown under that guard's position: the values a guard
//! tests are computed just before it.
//!
//! Owns: placing rendered positions. Must not know: how greens are rendered (the hook) or
//! any guest language.

use hashbrown::HashMap;

use crate::ir::Trace;
use crate::jitcode::Value;

/// The interpreter's location hook: renders the portal's greens (one value per register, in
/// the order of `greens(...)`) as text, e.g. `op 17: [->+<]`. `#[jit::interpreter(...,
/// location = f)]` generates one from `f`, which takes the greens as the portal declares them.
///
/// # Safety
/// The values are the portal's greens at a merge point, and the objects they reference are
/// live (the driver calls it while the interpreter stands in the program).
pub type LocationFn = unsafe fn(&[Value]) -> String;

/// The rendered positions of one trace as recorded: `(op index, text)`, increasing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Located {
    /// `(at, text)`: the ops of the recorded trace from `at` on come from `text`.
    pub marks: Vec<(usize, String)>,
}

impl Located {
    /// The position of the recorded op `i` (the last mark at or before it).
    pub fn at(&self, i: usize) -> Option<&str> {
        let k = self.marks.partition_point(|m| m.0 <= i);
        k.checked_sub(1).map(|k| self.marks[k].1.as_str())
    }

    /// The position the trace starts at.
    pub fn start(&self) -> Option<&str> {
        self.marks.first().map(|m| m.1.as_str())
    }

    /// The position of every guard of the recorded trace, by guard number.
    pub fn guards(&self, recorded: &Trace) -> HashMap<u32, String> {
        let mut out = HashMap::new();
        for (i, op) in recorded.ops.iter().enumerate() {
            if let (Some(r), Some(at)) = (&op.resume, self.at(i)) {
                out.insert(r.id, at.to_string());
            }
        }
        out
    }

    /// The marks of the optimized trace `opt`: each run of ops that ends with a guard is
    /// shown under that guard's position when recorded (`guards`, from [`Located::guards`]); a
    /// new mark only where the position changes. The ops after the last guard are shown
    /// under the position where the recorded trace ended (its last mark), and ops before any
    /// guard with a known position under the position it started at.
    pub fn optimized(&self, guards: &HashMap<u32, String>, opt: &Trace) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        let first = opt.num_inputs();
        let mut run_start = first;
        for (i, op) in opt.ops.iter().enumerate() {
            let Some(r) = &op.resume else { continue };
            if let Some(text) = guards.get(&r.id) {
                if out.last().map(|m| &m.1) != Some(text) {
                    out.push((run_start, text.clone()));
                }
            }
            run_start = i + 1;
        }
        if let Some((_, end)) = self.marks.last() {
            if run_start < opt.ops.len() && out.last().map(|m| &m.1) != Some(end) {
                out.push((run_start, end.clone()));
            }
        }
        if let Some(start) = self.start() {
            if out.first().is_none_or(|m| m.0 > first) && opt.ops.len() > first {
                out.insert(0, (first, start.to_string()));
            }
        }
        out
    }
}

/// The hottest guards, one line each: `guard N (trace T) failed K times at TEXT`, most
/// failures first (ties by guard number), at most `n` lines, then how many more failed.
pub fn hottest(guards: &[GuardCount], n: usize) -> String {
    let mut g: Vec<&GuardCount> = guards.iter().filter(|g| g.failures > 0).collect();
    g.sort_by_key(|g| (std::cmp::Reverse(g.failures), g.id));
    let mut out = String::new();
    for g in g.iter().take(n) {
        out.push_str(&g.line());
        out.push('\n');
    }
    if g.len() > n {
        let rest: u64 = g[n..].iter().map(|g| g.failures).sum();
        out.push_str(&format!(
            "... and {} more guards ({rest} failures)\n",
            g.len() - n
        ));
    }
    out
}

/// One guard's failures, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct GuardCount {
    /// The guard's number (as in the IR listing's `id=N`).
    pub id: u32,
    /// The compiled trace it belongs to.
    pub trace: u32,
    /// How many times it failed.
    pub failures: u64,
    /// Whether a bridge is attached to it (or was tried).
    pub bridged: bool,
    /// Its guest position, when the log renders positions.
    pub location: Option<String>,
}

impl GuardCount {
    /// `guard 7 (trace 0) failed 123 times at op 17: [->+<]`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "guard {} (trace {}) failed {} times",
            self.id, self.trace, self.failures
        );
        if self.bridged {
            s.push_str(", bridged");
        }
        if let Some(l) = &self.location {
            s.push_str(" at ");
            s.push_str(l);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse::parse;

    #[test]
    fn positions_of_recorded_and_optimized_ops() {
        let recorded = parse(
            "[i0]
             i1 = int_add(i0, 1)
             i2 = int_lt(i1, 10)
             guard_true(i2) [i1]
             i3 = int_add(i1, 2)
             i4 = int_lt(i3, 20)
             guard_true(i4) [i3]
             jump(i3)",
        )
        .unwrap();
        let loc = Located {
            marks: vec![(1, "A".into()), (4, "B".into())],
        };
        assert_eq!(loc.at(0), None);
        assert_eq!(loc.at(3), Some("A"));
        assert_eq!(loc.at(7), Some("B"));
        let g = loc.guards(&recorded);
        assert_eq!(g[&0], "A");
        assert_eq!(g[&1], "B");
        // An optimized trace that dropped the first guard's comparison and kept its guard
        // second: both runs are placed by their guard.
        let opt = parse(
            "[i0]
             i1 = int_add(i0, 3)
             i2 = int_lt(i1, 20)
             guard_true(i2, id=1) [i1]
             i3 = int_lt(i0, 9)
             guard_true(i3, id=0) [i0]
             jump(i1)",
        )
        .unwrap();
        assert_eq!(
            loc.optimized(&g, &opt),
            vec![
                (1, "B".to_string()),
                (4, "A".to_string()),
                (6, "B".to_string())
            ]
        );
        // Without guards: the start and the end.
        let bare = parse("[i0]\n i1 = int_add(i0, 1)\n jump(i1)").unwrap();
        let ends = Located {
            marks: vec![(1, "A".into())],
        };
        assert_eq!(ends.optimized(&g, &bare), vec![(1, "A".to_string())]);
    }

    #[test]
    fn hottest_guards_first_and_the_rest_counted() {
        let g = |id, failures| GuardCount {
            id,
            trace: 0,
            failures,
            bridged: false,
            location: Some(format!("at{id}")),
        };
        let text = hottest(&[g(0, 5), g(1, 0), g(2, 9), g(3, 5), g(4, 1)], 2);
        assert_eq!(
            text,
            "guard 2 (trace 0) failed 9 times at at2\n\
             guard 0 (trace 0) failed 5 times at at0\n\
             ... and 2 more guards (6 failures)\n"
        );
    }
}
