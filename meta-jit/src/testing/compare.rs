//! Comparing two runs of (versions of) the same trace on the same inputs: the reference
//! interpreter on the unoptimized and the optimized trace, or the interpreter and compiled
//! code. Nothing here assumes who produced a result.
//!
//! Two runs agree when they end the same way with equal values, and leave the heap with equal
//! contents. References compare *deeply*, as a bisimulation: heap objects (the roots of the
//! [`HeapSnapshot`]s, paired by position) compare by identity; objects the runs allocated
//! (known to the [`Tracker`]) compare by content, recursively, under one consistent
//! one-to-one pairing of the objects of run A with those of run B, so an object allocated in
//! one run equals its counterpart in the other, and aliasing must agree too. Inside an
//! allocated object, a pointer is recognized as an aligned 8-byte word holding a root or an
//! allocated object's address; other words compare by bits, and so do two equal words. A failed guard's values are
//! first rebuilt with [`interp::materialize`], so a guard whose resume data describes a
//! virtual object compares with one that holds the real object.

use super::heap::HeapSnapshot;
use crate::alloc::Tracker;
use crate::interp::{self, Outcome};
use crate::ir::{Resume, Trace, Value};
use hashbrown::HashMap;

/// One run's observable result: the trace that ran, how it ended, and the heap after it.
#[derive(Copy, Clone, Debug)]
pub struct RunResult<'a> {
    /// The trace that ran (needed to rebuild a failed guard's values).
    pub trace: &'a Trace,
    /// How it ended.
    pub outcome: &'a Outcome,
    /// The heap's roots after the run.
    pub heap: &'a HeapSnapshot,
}

/// Compares two runs; `Err` says where they differ. `tracker` must have been alive during
/// both runs (it knows which addresses they allocated) and must still be.
pub fn compare(a: RunResult, b: RunResult, tracker: &Tracker) -> Result<(), String> {
    let mut m = Matcher::new(a.heap, b.heap, tracker)?;
    match (a.outcome, b.outcome) {
        (Outcome::Finish(x), Outcome::Finish(y)) => m.values(x, y, "finish")?,
        (Outcome::Iterations(x), Outcome::Iterations(y)) => {
            m.values(x, y, "jump after the last iteration")?
        }
        (
            Outcome::Jump {
                target: ta,
                args: x,
            },
            Outcome::Jump {
                target: tb,
                args: y,
            },
        ) => {
            if ta != tb {
                return Err(format!("jump to target {ta} vs {tb}"));
            }
            m.values(x, y, "jump")?;
        }
        (
            Outcome::GuardFailed {
                id: ia,
                op: oa,
                saved: sa,
            },
            Outcome::GuardFailed {
                id: ib,
                op: ob,
                saved: sb,
            },
        ) => {
            if ia != ib {
                return Err(format!("guard {ia} failed vs guard {ib}"));
            }
            let ra = guard_resume(a.trace, *oa, *ia, sa)?;
            let rb = guard_resume(b.trace, *ob, *ib, sb)?;
            if ra.frames != rb.frames {
                return Err(format!(
                    "guard {ia}: frames {:?} vs {:?}",
                    ra.frames, rb.frames
                ));
            }
            let va = interp::materialize(a.trace, ra, sa);
            let vb = interp::materialize(b.trace, rb, sb);
            m.values(&va, &vb, &format!("guard {ia}'s resume values"))?;
        }
        (x, y) => return Err(format!("runs end differently: {x:?} vs {y:?}")),
    }
    m.roots()?;
    m.drain()
}

fn guard_resume<'t>(
    t: &'t Trace,
    op: usize,
    id: u32,
    saved: &[Value],
) -> Result<&'t Resume, String> {
    let r = t
        .ops
        .get(op)
        .and_then(|o| o.resume.as_deref())
        .ok_or(format!("op {op} is not a guard"))?;
    if r.id != id {
        return Err(format!("op {op} is guard {}, not {id}", r.id));
    }
    let live = r.live_ops().len();
    if live != saved.len() {
        return Err(format!(
            "guard {id} saved {} values for {live} live ops",
            saved.len()
        ));
    }
    Ok(r)
}

#[derive(Copy, Clone, Debug, PartialEq)]
enum Kind {
    Root(usize),
    Allocated(usize),
    Plain,
}

struct Matcher<'a> {
    tracker: &'a Tracker,
    a: &'a HeapSnapshot,
    b: &'a HeapSnapshot,
    roots_a: HashMap<usize, usize>,
    roots_b: HashMap<usize, usize>,
    a2b: HashMap<usize, usize>,
    b2a: HashMap<usize, usize>,
    /// Paired allocated objects whose contents are still to compare: (a, b, size, path).
    work: Vec<(usize, usize, usize, String)>,
}

impl<'a> Matcher<'a> {
    fn new(
        a: &'a HeapSnapshot,
        b: &'a HeapSnapshot,
        tracker: &'a Tracker,
    ) -> Result<Matcher<'a>, String> {
        if a.roots.len() != b.roots.len() {
            return Err(format!(
                "heaps of {} and {} roots",
                a.roots.len(),
                b.roots.len()
            ));
        }
        let index = |h: &HeapSnapshot| {
            h.roots
                .iter()
                .enumerate()
                .map(|(i, r)| (r.0, i))
                .collect::<HashMap<_, _>>()
        };
        Ok(Matcher {
            tracker,
            a,
            b,
            roots_a: index(a),
            roots_b: index(b),
            a2b: HashMap::new(),
            b2a: HashMap::new(),
            work: Vec::new(),
        })
    }

    fn kind(&self, roots: &HashMap<usize, usize>, addr: usize) -> Kind {
        if let Some(&i) = roots.get(&addr) {
            Kind::Root(i)
        } else if let Some(size) = self.tracker.size_of(addr) {
            Kind::Allocated(size)
        } else {
            Kind::Plain
        }
    }

    /// Two words that are pointers if either is a root's or an allocated object's address.
    /// The same bits in both runs are equal whatever they are: an integer that a trace
    /// computed from a root's address (`cast_ptr_to_int`, then arithmetic) may happen to be
    /// the address of an object one of the runs allocated, and must not be paired as a
    /// pointer (a 100,000-case run of `backend_random` failed so, on a case whose two runs
    /// stored one such integer; neither run can reach the other's objects otherwise).
    fn words(&mut self, x: u64, y: u64, path: &str) -> Result<(), String> {
        if x == y {
            return Ok(());
        }
        let ka = self.kind(&self.roots_a, x as usize);
        let kb = self.kind(&self.roots_b, y as usize);
        let err = || Err(format!("{path}: {x:#x} ({ka:?}) vs {y:#x} ({kb:?})"));
        match (ka, kb) {
            (Kind::Plain, Kind::Plain) => {
                if x == y {
                    Ok(())
                } else {
                    err()
                }
            }
            (Kind::Root(i), Kind::Root(j)) => {
                if i == j {
                    Ok(())
                } else {
                    err()
                }
            }
            (Kind::Allocated(sa), Kind::Allocated(sb)) => {
                let (x, y) = (x as usize, y as usize);
                match (self.a2b.get(&x), self.b2a.get(&y)) {
                    (Some(&y2), _) if y2 != y => err(),
                    (_, Some(&x2)) if x2 != x => err(),
                    (Some(_), Some(_)) => Ok(()),
                    _ => {
                        if sa != sb {
                            return Err(format!("{path}: objects of {sa} and {sb} bytes"));
                        }
                        self.a2b.insert(x, y);
                        self.b2a.insert(y, x);
                        self.work.push((x, y, sa, path.to_string()));
                        Ok(())
                    }
                }
            }
            _ => err(),
        }
    }

    fn values(&mut self, xs: &[Value], ys: &[Value], what: &str) -> Result<(), String> {
        if xs.len() != ys.len() {
            return Err(format!("{what}: {} values vs {}", xs.len(), ys.len()));
        }
        for (k, (&x, &y)) in xs.iter().zip(ys).enumerate() {
            let path = format!("{what}, value {k}");
            match (x, y) {
                (Value::Ref(p), Value::Ref(q)) => self.words(p as u64, q as u64, &path)?,
                _ if x == y => {}
                _ => return Err(format!("{path}: {x:?} vs {y:?}")),
            }
        }
        Ok(())
    }

    /// Compares two byte images word by word (pointers deeply), the tail bytewise.
    fn bytes(&mut self, x: &[u8], y: &[u8], path: &str) -> Result<(), String> {
        let words = x.len() / 8;
        for w in 0..words {
            let at = w * 8;
            let word = |s: &[u8]| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
            self.words(word(x), word(y), &format!("{path} +{at}"))?;
        }
        if x[words * 8..] != y[words * 8..] {
            return Err(format!(
                "{path} +{}: bytes {:?} vs {:?}",
                words * 8,
                &x[words * 8..],
                &y[words * 8..]
            ));
        }
        Ok(())
    }

    fn roots(&mut self) -> Result<(), String> {
        let (a, b) = (self.a, self.b);
        for (i, (ra, rb)) in a.roots.iter().zip(&b.roots).enumerate() {
            if ra.1.len() != rb.1.len() {
                return Err(format!("heap root {i}: sizes differ"));
            }
            self.bytes(&ra.1, &rb.1, &format!("heap root {i}"))?;
        }
        Ok(())
    }

    fn drain(&mut self) -> Result<(), String> {
        while let Some((x, y, size, path)) = self.work.pop() {
            // SAFETY: both addresses start objects of `size` bytes that the tracker recorded,
            // and it is alive, so they are not freed yet.
            let (bx, by) = unsafe {
                (
                    std::slice::from_raw_parts(x as *const u8, size).to_vec(),
                    std::slice::from_raw_parts(y as *const u8, size).to_vec(),
                )
            };
            self.bytes(&bx, &by, &format!("{path} -> object"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::alloc_zeroed;

    /// Two heaps of one root each, whose first word is `x` and `y`.
    fn heaps(x: usize, y: usize) -> (HeapSnapshot, HeapSnapshot) {
        let root = |w: usize| HeapSnapshot {
            roots: vec![(0x1000, w.to_le_bytes().to_vec())],
        };
        (root(x), root(y))
    }

    #[test]
    fn an_integer_equal_in_both_runs_is_no_pointer_even_at_an_objects_address() {
        let tracker = Tracker::new();
        let (a, b) = (alloc_zeroed(64, 8), alloc_zeroed(64, 8));
        // Run A's object `a` pairs with run B's `b` (a value each run returned)...
        let empty = HeapSnapshot { roots: vec![] };
        let mut m = Matcher::new(&empty, &empty, &tracker).unwrap();
        m.words(a as u64, b as u64, "finish").unwrap();
        // ...and both runs also stored the integer `a` (computed alike from a root's address):
        // equal bits, not a pointer of run B to run A's object.
        m.words(a as u64, a as u64, "root").unwrap();
        // A pointer that breaks the pairing is still an error.
        let c = alloc_zeroed(64, 8);
        assert!(m.words(a as u64, c as u64, "other").is_err());
        m.drain().unwrap();
        let (ha, hb) = heaps(a, a);
        let mut m = Matcher::new(&ha, &hb, &tracker).unwrap();
        m.roots().unwrap();
    }
}
