//! The JIT's parameters (RPython's `set_param`): their defaults, and the `name=value,...`
//! text that `METAJIT_PARAMS`, `--jit-param` and [`super::JitDriver::set_params`] take. Knows
//! nothing of what the driver does with them.

use crate::opt::Options;

/// The JIT's parameters (RPython's `set_param`).
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Whether the JIT runs at all.
    pub enabled: bool,
    /// How many times a loop header is passed before it is traced.
    pub threshold: u32,
    /// How many times a guard fails before a bridge is traced from it: for the first
    /// `SCALE_AFTER` (4) bridges, and then when the bridges compiled so far recorded
    /// `bridge_ops` ops on average; scaled by their average length otherwise (see
    /// [`Params::eagerness`]).
    pub trace_eagerness: u32,
    /// The average bridge length, in recorded ops, at which a guard waits `trace_eagerness`
    /// failures; 0 turns the scaling off.
    pub bridge_ops: u32,
    /// The longest trace, in ops, before tracing aborts.
    pub trace_limit: usize,
    /// The longest bridge, in ops (at most `trace_limit`): a longer one is cut short at the
    /// last loop header it passed (see `cut_bridges`) or, without one, aborts, and its guard
    /// goes to the interpreter. A bridge duplicates the guest code after its guard up to the
    /// next compiled loop; past a few thousand ops, compiling that tail costs more than the
    /// interpreter running it for the failures that follow.
    pub bridge_limit: usize,
    /// After this many aborts at one location, it is never traced again; before that, each
    /// abort doubles the count needed to trace it again. A loop trace that ends in another
    /// loop is dropped like an abort, except the last time: then it is compiled.
    pub max_aborts: u32,
    /// The optimizer's stages (all by default).
    pub enable_opts: Options,
    /// The most bridges a loop gets, counting bridges of its bridges (LuaJIT's `maxside`):
    /// past it, its guards that fail go to the interpreter. It bounds the tail duplication
    /// of a loop whose body branches many ways.
    pub max_bridges: u32,
    /// The most memory, in KiB, that the live traces may take: their machine code (whole
    /// pages), the optimized traces kept for their guards' resume data, their fingerprints,
    /// their guards' entries and the backend's exit tables. Past it, nothing more is traced
    /// (LuaJIT's `maxmcode`, which counts machine code only).
    pub max_memory_kb: u32,
    /// Whether compiled code checks every `record_known_result!` and `record_exact_value!` it
    /// passes (calls the elidable function and compares), reporting a violation with the
    /// hint's location (off by default; `check_hints=1`).
    pub check_hints: bool,
    /// Whether [`super::Stats`] keeps each trace as recorded, besides as optimized (off by default:
    /// the recorded traces are only for tests and tools that inspect them, and they doubled
    /// the memory of a program with long traces).
    pub keep_recorded: bool,
    /// Whether [`super::Stats`] keeps each trace as optimized (off by default: the driver keeps
    /// only the resume data of a compiled trace (`resume::Exits`), about a third of
    /// the optimized trace's bytes; tests that count ops in compiled traces turn it on, as
    /// RPython's tests keep their loops and its translated JITs do not).
    pub keep_optimized: bool,
    /// Whether a portal call's first merge point counts, so that a function entered often
    /// gets a function-entry trace from there to the portal's return (off by default;
    /// `function_entry=1`).
    pub function_entry: bool,
    /// Whether a trace that reaches the merge point of a compiled loop that always leaves on
    /// its first pass (a counted loop) takes that loop's code in and goes on, instead of
    /// jumping to it (see the tracer's `inline`). Off by default (`inline_loops=1` turns it
    /// on): it makes nested counting loops one counted loop, but on programs whose inner
    /// loops mostly run one turn it makes longer bridges and loops compiled as one turn
    /// (the book's performance notes have the figures).
    pub inline_loops: bool,
    /// Whether a bridge that grows past `bridge_limit` ends at the last loop header of the
    /// portal it passed, with a `finish` that hands over to the interpreter there, instead of
    /// aborting (on by default; `cut_bridges=0` turns it off). A bridge from a guard of such
    /// a bridge is not cut again: it ends with a `finish` at the same loop header, the first
    /// time it passes it (and so do the bridges of its guards). The guard's failures then run
    /// the bridge's first part compiled instead of the whole way in the interpreter.
    pub cut_bridges: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            enabled: true,
            threshold: 1039,
            trace_eagerness: 200,
            bridge_ops: 400,
            trace_limit: 6000,
            bridge_limit: 2000,
            max_aborts: 4,
            max_bridges: 100,
            max_memory_kb: 16384,
            enable_opts: Options::all(),
            keep_recorded: false,
            keep_optimized: false,
            check_hints: false,
            function_entry: false,
            inline_loops: false,
            cut_bridges: true,
        }
    }
}

/// How many bridges are compiled before their average length scales the eagerness (see
/// [`Params::eagerness`]).
pub const SCALE_AFTER: usize = 4;

/// The fewest failures the scaling of [`Params::eagerness`] goes down to (unless
/// `trace_eagerness` is set lower: then that).
pub const MIN_EAGERNESS: u64 = 20;

impl Params {
    /// How many failures of a guard trace a bridge from it, when `bridges` bridges were
    /// compiled so far with `ops` recorded ops in all: `trace_eagerness` times the average
    /// bridge length over `bridge_ops`, from a tenth of `trace_eagerness` to 5 times it, and
    /// not below `MIN_EAGERNESS` (20) unless `trace_eagerness` itself is lower. A failure without a bridge costs about as much as a few recorded ops
    /// cost to compile: a guard whose bridge will be short gets it sooner, and one whose
    /// bridge will be long (a loop body that branches many ways duplicates its tail in every
    /// bridge) waits until its failures are worth it.
    pub fn eagerness(&self, bridges: usize, ops: usize) -> u32 {
        if bridges < SCALE_AFTER || self.bridge_ops == 0 {
            return self.trace_eagerness;
        }
        let e = u64::from(self.trace_eagerness);
        let scaled = e * ops as u64 / (bridges as u64 * u64::from(self.bridge_ops));
        let low = e.min((e / 10).max(MIN_EAGERNESS));
        scaled
            .clamp(low, e.saturating_mul(5))
            .min(u64::from(u32::MAX)) as u32
    }

    /// The names [`Params::set`] takes, as `name=value`.
    pub const NAMES: &'static [&'static str] = &[
        "threshold",
        "trace_eagerness",
        "bridge_ops",
        "trace_limit",
        "bridge_limit",
        "max_aborts",
        "max_bridges",
        "max_memory_kb",
        "enable_opts",
        "keep_recorded",
        "keep_optimized",
        "check_hints",
        "function_entry",
        "inline_loops",
        "cut_bridges",
    ];

    /// Applies settings written `name=value,...` (`threshold`, `trace_eagerness`,
    /// `bridge_ops`, `trace_limit`, `bridge_limit`, `max_aborts`, `max_bridges`, `max_memory_kb`, `enable_opts` as in
    /// `opt::Options::parse`, `keep_recorded`, `keep_optimized`, `check_hints`,
    /// `function_entry`, `inline_loops` and `cut_bridges` as 0 or 1), or `off`/`on`. A
    /// value out of its range is an error that gives the range; an unknown name is an error
    /// that lists the names.
    pub fn set(&mut self, s: &str) -> Result<(), String> {
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let num = |v: &str, lo: u64, hi: u64| match v.parse::<u64>() {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(format!(
                    "`{item}`: the value must be an integer from {lo} to {hi}"
                )),
            };
            let u32_max = u64::from(u32::MAX);
            match item.split_once('=') {
                None if item == "off" => self.enabled = false,
                None if item == "on" => self.enabled = true,
                Some(("threshold", v)) => self.threshold = num(v, 1, u32_max)? as u32,
                Some(("trace_eagerness", v)) => self.trace_eagerness = num(v, 1, u32_max)? as u32,
                Some(("bridge_ops", v)) => self.bridge_ops = num(v, 0, u32_max)? as u32,
                Some(("trace_limit", v)) => self.trace_limit = num(v, 1, u32_max)? as usize,
                Some(("bridge_limit", v)) => self.bridge_limit = num(v, 1, u32_max)? as usize,
                Some(("max_aborts", v)) => self.max_aborts = num(v, 0, u32_max)? as u32,
                Some(("max_bridges", v)) => self.max_bridges = num(v, 0, u32_max)? as u32,
                Some(("max_memory_kb", v)) => self.max_memory_kb = num(v, 0, u32_max)? as u32,
                Some(("enable_opts", v)) => self.enable_opts = Options::parse(v)?,
                Some(("keep_recorded", v)) => self.keep_recorded = num(v, 0, 1)? != 0,
                Some(("keep_optimized", v)) => self.keep_optimized = num(v, 0, 1)? != 0,
                Some(("check_hints", v)) => self.check_hints = num(v, 0, 1)? != 0,
                Some(("function_entry", v)) => self.function_entry = num(v, 0, 1)? != 0,
                Some(("inline_loops", v)) => self.inline_loops = num(v, 0, 1)? != 0,
                Some(("cut_bridges", v)) => self.cut_bridges = num(v, 0, 1)? != 0,
                _ => {
                    return Err(format!(
                        "unknown JIT parameter `{item}`: the parameters are `on`, `off` and {}",
                        Self::NAMES
                            .iter()
                            .map(|n| format!("`{n}=...`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            }
        }
        Ok(())
    }

    /// The defaults with `METAJIT_PARAMS` applied (an error is reported on standard error).
    pub fn from_env() -> Params {
        let mut p = Params::default();
        if let Ok(s) = std::env::var("METAJIT_PARAMS") {
            if let Err(e) = p.set(&s) {
                eprintln!("meta-jit: METAJIT_PARAMS: {e}");
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::Params;

    #[test]
    fn the_eagerness_follows_the_bridges_length() {
        let p = Params::default();
        // Too few bridges to tell: `trace_eagerness`.
        assert_eq!(p.eagerness(0, 0), 200);
        assert_eq!(p.eagerness(3, 30_000), 200);
        // 400 ops on average: `trace_eagerness`; in proportion around it.
        assert_eq!(p.eagerness(4, 1_600), 200);
        assert_eq!(p.eagerness(10, 1_000), 50);
        assert_eq!(p.eagerness(10, 14_000), 700);
        // From a tenth to 5 times.
        assert_eq!(p.eagerness(100, 100), 20);
        assert_eq!(p.eagerness(4, 1_000_000), 1_000);
        // A small eagerness is not made smaller, only larger for long bridges; scaling off
        // with `bridge_ops=0`.
        let mut q = p.clone();
        q.set("trace_eagerness=2").unwrap();
        assert_eq!(q.eagerness(100, 100), 2);
        assert_eq!(q.eagerness(4, 1_000_000), 10);
        q.set("trace_eagerness=1000").unwrap();
        assert_eq!(q.eagerness(100, 100), 100);
        q.set("trace_eagerness=200,bridge_ops=0").unwrap();
        assert_eq!(q.eagerness(100, 100), 200);
    }

    #[test]
    fn bridges_have_their_own_limit() {
        let mut p = Params::default();
        assert_eq!((p.trace_limit, p.bridge_limit), (6000, 2000));
        p.set("bridge_limit=50").unwrap();
        assert_eq!(p.bridge_limit, 50);
        assert!(p.set("bridge_limit=0").is_err());
    }

    #[test]
    fn values_are_set() {
        let mut p = Params::default();
        p.set("threshold=7, trace_eagerness=3,trace_limit=100,max_aborts=0,keep_recorded=1,keep_optimized=1")
            .unwrap();
        assert_eq!(
            (p.threshold, p.trace_eagerness, p.trace_limit, p.max_aborts),
            (7, 3, 100, 0)
        );
        assert!(p.keep_recorded && p.keep_optimized);
        p.set("off").unwrap();
        assert!(!p.enabled);
    }

    /// 2^32 used to wrap to 0 after `max(1)` and turn on the most eager mode.
    #[test]
    fn out_of_range_values_name_the_range() {
        let mut p = Params::default();
        for (item, range) in [
            ("threshold=4294967296", "from 1 to 4294967295"),
            ("trace_eagerness=4294967296", "from 1 to 4294967295"),
            ("threshold=0", "from 1 to 4294967295"),
            ("trace_limit=0", "from 1 to 4294967295"),
            ("max_aborts=-1", "from 0 to 4294967295"),
            ("keep_recorded=2", "from 0 to 1"),
            ("threshold=many", "from 1 to 4294967295"),
        ] {
            let e = p.set(item).unwrap_err();
            assert!(e.contains(range) && e.contains(item), "{item}: {e}");
        }
        assert_eq!(p, Params::default(), "a rejected value changes nothing");
    }

    #[test]
    fn unknown_names_list_the_names() {
        let e = Params::default().set("treshold=5").unwrap_err();
        assert!(e.contains("`treshold=5`"), "{e}");
        for name in Params::NAMES {
            assert!(e.contains(name), "{e}");
        }
    }
}
