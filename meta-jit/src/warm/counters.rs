//! The counters of the driver's locations: how often the native interpreter passed each loop
//! header (`can_enter_jit!`) or function entry since the location last reached the threshold.
//!
//! A location is the hash of its greens' bits ([`hash`]); a function entry hashes apart from
//! the loop at the same greens ([`entry`]). The table is set-associative: the hash's low bits
//! choose a set of [`WAYS`] entries and its high bits are the tag kept in the entry, so two
//! locations count apart unless more than [`WAYS`] live ones share a set (then the one with the
//! fewest passes starts over). The counts do not depend on where the greens' objects happen to
//! lie (an address among the greens changes from run to run): with a table that merged every
//! colliding pair, whether a loop got hot before another, and so which traces were made, varied
//! between two runs of one program.
//!
//! Owns: the table. Must not know: cells, traces, or what the greens mean.

use crate::jitcode::Value;
use crate::trace::to_ir;

/// Entries per set.
pub(super) const WAYS: usize = 4;
/// Sets in the table (a power of two).
const SETS: usize = 1024;

/// The hash of a location's greens.
pub(super) fn hash(greens: &[Value]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in greens {
        h = (h ^ to_ir(*v).bits()).wrapping_mul(0x0100_0000_01b3);
        h ^= h >> 29;
    }
    h
}

/// The hash of the function entry at the location of hash `h` (counted apart from the loop).
pub(super) fn entry(h: u64) -> u64 {
    h ^ 0x9e37_79b9_7f4a_7c15
}

#[derive(Clone, Copy, Default)]
struct Entry {
    /// The location's tag (see [`tag`]); 0: the entry is free.
    tag: u32,
    count: u32,
}

/// The tag of hash `h`: its high half, never 0.
fn tag(h: u64) -> u32 {
    ((h >> 32) as u32) | 1
}

/// The counters of one driver.
pub(super) struct Counters {
    sets: Vec<[Entry; WAYS]>,
}

impl Counters {
    pub(super) fn new() -> Counters {
        Counters {
            sets: vec![[Entry::default(); WAYS]; SETS],
        }
    }

    /// The entry of the location of hash `h`, claimed if it has none: a free entry of its set,
    /// else the one with the fewest passes, which starts over at 0.
    #[inline]
    fn entry(&mut self, h: u64) -> &mut Entry {
        let t = tag(h);
        let set = &mut self.sets[(h as usize) & (SETS - 1)];
        let way = match set.iter().position(|e| e.tag == t) {
            Some(w) => w,
            None => {
                let w = (0..WAYS).min_by_key(|&w| set[w].count).unwrap_or(0);
                set[w] = Entry { tag: t, count: 0 };
                w
            }
        };
        &mut set[way]
    }

    /// Counts one pass of the location of hash `h`; its passes so far.
    #[inline]
    pub(super) fn bump(&mut self, h: u64) -> u32 {
        let e = self.entry(h);
        e.count = e.count.saturating_add(1);
        e.count
    }

    /// The passes counted for the location of hash `h`.
    pub(super) fn get(&self, h: u64) -> u32 {
        let t = tag(h);
        let set = &self.sets[(h as usize) & (SETS - 1)];
        set.iter().find(|e| e.tag == t).map_or(0, |e| e.count)
    }

    /// Sets the passes of the location of hash `h` to `n`.
    pub(super) fn set(&mut self, h: u64, n: u32) {
        self.entry(h).count = n;
    }

    /// Forgets every count.
    pub(super) fn clear(&mut self) {
        self.sets.fill([Entry::default(); WAYS]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hashes whose set is the same (low bits) and whose tags differ.
    fn same_set(n: u64) -> Vec<u64> {
        (0..n).map(|k| ((k + 1) << 40) | 7).collect()
    }

    #[test]
    fn locations_of_one_set_count_apart() {
        let mut c = Counters::new();
        let hs = same_set(WAYS as u64);
        for (k, &h) in hs.iter().enumerate() {
            for _ in 0..=k {
                c.bump(h);
            }
        }
        for (k, &h) in hs.iter().enumerate() {
            assert_eq!(c.get(h), k as u32 + 1);
        }
        c.set(hs[2], 0);
        assert_eq!(c.get(hs[2]), 0);
        assert_eq!(c.get(hs[3]), 4);
    }

    #[test]
    fn a_full_set_gives_the_least_counted_entry_away() {
        let mut c = Counters::new();
        let hs = same_set(WAYS as u64 + 1);
        for (k, &h) in hs[..WAYS].iter().enumerate() {
            for _ in 0..k + 2 {
                c.bump(h);
            }
        }
        assert_eq!(c.bump(hs[WAYS]), 1);
        assert_eq!(c.get(hs[0]), 0, "the least counted location started over");
        for (k, &h) in hs[1..WAYS].iter().enumerate() {
            assert_eq!(c.get(h), k as u32 + 3);
        }
        c.clear();
        assert!(hs.iter().all(|&h| c.get(h) == 0));
    }

    #[test]
    fn an_entry_counts_apart_from_its_loop() {
        let h = hash(&[Value::Int(5), Value::Int(9)]);
        let mut c = Counters::new();
        c.bump(h);
        c.bump(h);
        c.bump(entry(h));
        assert_eq!((c.get(h), c.get(entry(h))), (2, 1));
    }
}
