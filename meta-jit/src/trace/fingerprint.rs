//! What a trace folded from the objects its greens reference, so that the driver can tell the
//! objects it was traced on from other objects that later live at the same addresses.
//!
//! Cells and compiled loops are keyed by the values of the greens, and a reference green is
//! keyed by its address. A trace folds the immutable contents of those objects (a constant
//! program's opcodes, their operands, the results of elidable calls on them) into constants.
//! RPython can rely on its GC: a constant in a trace keeps its object alive, so the address
//! cannot be reused while the machine code exists. Rust objects are freed whenever their owner
//! drops them, and the allocator hands the same address to the next object of that size. So
//! every folded value is also written down here, as a [`Fact`], and the driver checks that the
//! facts still hold before it runs the machine code (`crate::warm`).
//!
//! Which objects may be read when checking: only those reachable from the greens the driver is
//! entered with (the interpreter holds them, so they are alive) through values the check has
//! already found equal. The tracer keeps that set, *trusted* addresses: the trace's own
//! reference greens, then every reference a folded read of a trusted object returned, every
//! address computed from a trusted one (`RefAddr`), and every reference an elidable call on a
//! trusted object returned. Facts are recorded only for reads of trusted objects, in the order
//! the tracer made them, so a fact's address is computed only from greens and from values that
//! earlier facts vouch for. (Folded reads of other constant objects, e.g. reached by
//! `promote!`, are not checked: such an object must outlive the machine code, as the book's
//! deoptimization chapter says.)
//!
//! The values of quasi-immutable fields the trace folded are facts too (when their object is
//! trusted), and every such field is a dependency of the trace ([`Fingerprint::quasi_fields`]):
//! a write invalidates it.
//!
//! Each trusted address and each fact is also *lasting* or not. A root is lasting when the
//! portal declares its greens pinned (every reference green is a shared-reference parameter
//! the body never rebinds, so the object is borrowed for the whole portal call); what an
//! immutable read or an elidable call derives from lasting addresses only is lasting too. A
//! lasting fact that held once in a portal call holds until the call returns, so the driver
//! checks those once per call and the others (quasi-immutable values, and what hangs off
//! them or off greens that are not pinned) on every entry ([`Fingerprint::first_broken`]).
//!
//! Must not know: the driver's cells, machine code, or any guest language.

use hashbrown::HashMap;

use super::to_ir;
use crate::jitcode::{FieldDescr, Kind, Value};

/// One folded value.
#[derive(Clone, Debug)]
pub enum Fact {
    /// The `size` bytes at `addr` were `bits` (zero-extended).
    Load {
        /// The address read.
        addr: usize,
        /// How many bytes (1, 2, 4 or 8).
        size: u8,
        /// What they held.
        bits: u64,
    },
    /// An elidable function returned a result (boxed: most facts are loads, which then
    /// take 24 bytes each instead of 72).
    Call(Box<CallFact>),
}

/// The elidable function `call` returned `result` on `args`.
#[derive(Clone, Debug)]
pub struct CallFact {
    /// The function's name (for the JIT log).
    pub name: &'static str,
    /// Calls it (the descriptor's dynamic entry).
    pub call: fn(&[Value]) -> Option<Value>,
    /// The arguments.
    pub args: Vec<Value>,
    /// The result.
    pub result: Option<Value>,
}

/// The facts of one trace, in the order the tracer established them, and the addresses it
/// trusted.
#[derive(Clone, Debug, Default)]
pub struct Fingerprint(Box<Inner>);

#[derive(Clone, Debug, Default)]
struct Inner {
    facts: Vec<Fact>,
    /// The positions of the facts that are not lasting (see the module doc), in order: the
    /// only ones a [`Check::Volatile`] reads (an entry into a loop whose traces hold thousands
    /// of lasting facts checks none of them).
    volatile: Vec<u32>,
    loads: HashMap<(usize, u8), u64>,
    /// Trusted addresses, each with whether it is lasting.
    trusted: HashMap<usize, bool>,
    /// Addresses of the quasi-immutable fields folded, trusted objects or not.
    quasi: Vec<usize>,
    /// The greens' objects are never freed ([`Fingerprint::eternal`]).
    eternal: bool,
}

/// How long the objects a portal's reference greens point to stay where they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GreenLife {
    /// Any time: the interpreter may free one and allocate another at its address.
    Unpinned,
    /// For the whole portal call (see the module doc).
    Pinned,
    /// Forever: every reference green is `&'static`.
    Static,
}

/// Which facts [`Fingerprint::first_broken`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// All of them.
    All,
    /// Only those that are not lasting (the lasting ones were checked earlier in this portal
    /// call).
    Volatile,
}

fn bits_of(v: Value, size: u8) -> u64 {
    let b = to_ir(v).bits();
    if size >= 8 {
        b
    } else {
        b & ((1u64 << (8 * u32::from(size))) - 1)
    }
}

/// Equal results, floats compared by their bits (as the IR's values compare).
fn same(a: Option<Value>, b: Option<Value>) -> bool {
    a.map(to_ir) == b.map(to_ir)
}

impl Fingerprint {
    /// An empty fingerprint that trusts `roots`, each with whether it is lasting (the
    /// references among a loop's greens, lasting if the portal's greens are pinned; or the
    /// trusted set of the trace a bridge leaves).
    pub fn trusting(roots: impl IntoIterator<Item = (usize, bool)>) -> Fingerprint {
        let mut fp = Fingerprint::default();
        for (a, lasting) in roots {
            fp.derive_as(Value::Ref(a), lasting);
        }
        fp
    }

    /// The fingerprint of a trace whose greens reference objects that are never freed
    /// ([`GreenLife::Static`]): no address can be reused by another object, so it trusts no
    /// address, records no fact (what the trace folds through `#[jit(immutable)]` fields holds
    /// for ever, as the interpreter promised), and the tracer may jump to another loop from
    /// greens it computed. Bridges of its traces inherit it.
    pub fn eternal() -> Fingerprint {
        let mut fp = Fingerprint::default();
        fp.0.eternal = true;
        fp
    }

    /// Whether this is an [`eternal`](Fingerprint::eternal) fingerprint.
    pub fn is_eternal(&self) -> bool {
        self.0.eternal
    }

    /// The empty fingerprint a bridge of this trace starts with: trusting the same addresses
    /// (see [`Fingerprint::trusting`]), or eternal as this one.
    pub fn for_bridge(&self) -> Fingerprint {
        if self.is_eternal() {
            return Fingerprint::eternal();
        }
        Fingerprint::trusting(self.trusted())
    }

    /// Whether every fact is lasting (see the module doc).
    pub fn all_lasting(&self) -> bool {
        self.0.volatile.is_empty()
    }

    /// The fact just pushed is lasting or not.
    fn note_lasting(&mut self, lasting: bool) {
        if !lasting {
            self.0.volatile.push(self.0.facts.len() as u32 - 1);
        }
    }

    /// The trusted addresses with whether each is lasting (a bridge of this trace starts from
    /// them).
    pub fn trusted(&self) -> impl Iterator<Item = (usize, bool)> + '_ {
        self.0.trusted.iter().map(|(&a, &l)| (a, l))
    }

    /// Whether `v` is a trusted reference: `Some(lasting)`, or `None` if it is not trusted.
    fn trust(&self, v: Value) -> Option<bool> {
        match v {
            Value::Ref(a) => self.0.trusted.get(&a).copied(),
            _ => None,
        }
    }

    /// Whether `v` is a trusted reference.
    pub fn is_trusted(&self, v: Value) -> bool {
        self.trust(v).is_some()
    }

    /// Trusts `v` (a reference) if `from` is trusted (lasting if `from` is).
    pub fn derive(&mut self, from: Value, v: Value) {
        if let Some(lasting) = self.trust(from) {
            self.derive_as(v, lasting);
        }
    }

    fn derive_as(&mut self, v: Value, lasting: bool) {
        if let Value::Ref(a) = v {
            if a != 0 {
                // Lasting only if every way the tracer reached it is.
                *self.0.trusted.entry(a).or_insert(lasting) &= lasting;
            }
        }
    }

    /// The tracer folded the load of `descr` at `addr`, inside the object at `base`, to `v`.
    pub fn load(&mut self, base: Value, addr: usize, descr: &FieldDescr, v: Value) {
        self.load_as(base, addr, descr, v, true);
    }

    /// A folded load; `immutable`: the value cannot change while its object lives.
    fn load_as(&mut self, base: Value, addr: usize, descr: &FieldDescr, v: Value, immutable: bool) {
        let Some(base_lasting) = self.trust(base) else {
            return;
        };
        let lasting = base_lasting && immutable;
        let bits = bits_of(v, descr.size);
        let key = (addr, descr.size);
        if self.0.loads.insert(key, bits).is_none() {
            self.0.facts.push(Fact::Load {
                addr,
                size: descr.size,
                bits,
            });
            self.note_lasting(lasting);
        }
        if descr.kind == Kind::Ref {
            self.derive_as(v, lasting);
        }
    }

    /// The tracer folded the quasi-immutable field `descr` at `addr`, inside the object at
    /// `base`, to `v`: a dependency of the trace on that field, and a fact if `base` is
    /// trusted (never lasting: the interpreter may write the field at any time).
    pub fn quasi(&mut self, base: Value, addr: usize, descr: &FieldDescr, v: Value) {
        if !self.0.quasi.contains(&addr) {
            self.0.quasi.push(addr);
        }
        self.load_as(base, addr, descr, v, false);
    }

    /// Takes in, after its own, the facts, trusted addresses and quasi-immutable fields of
    /// `other`: the fingerprint of a loop whose code the trace took in (the tracer's
    /// `inline`), so that the driver checks what that code folded when it checks this trace.
    /// `other`'s facts start from its greens, which this trace trusts where it takes the code
    /// in. Returns `false`, changing nothing, when a fact of `other` contradicts one of this
    /// trace (the loop was traced on other objects at the same addresses).
    pub fn absorb(&mut self, other: &Fingerprint) -> bool {
        let o = &*other.0;
        let contradicts = o.facts.iter().any(|f| match f {
            Fact::Load { addr, size, bits } => self
                .0
                .loads
                .get(&(*addr, *size))
                .is_some_and(|b| b != bits),
            Fact::Call(_) => false,
        });
        if contradicts {
            return false;
        }
        for (k, f) in o.facts.iter().enumerate() {
            if let Fact::Load { addr, size, bits } = f {
                if self.0.loads.insert((*addr, *size), *bits).is_some() {
                    continue;
                }
            }
            self.0.facts.push(f.clone());
            self.note_lasting(!o.volatile.contains(&(k as u32)));
        }
        for (&a, &lasting) in &o.trusted {
            self.derive_as(Value::Ref(a), lasting);
        }
        for &q in &o.quasi {
            if !self.0.quasi.contains(&q) {
                self.0.quasi.push(q);
            }
        }
        true
    }

    /// Gives back the room its tables grew into while tracing: it is kept as long as its
    /// trace lives.
    ///
    /// The table that kept the tracer from writing a load twice goes: nothing is added to a
    /// kept fingerprint (a bridge starts its own from [`Fingerprint::trusted`]).
    pub fn shrink(&mut self) {
        let i = &mut *self.0;
        i.facts.shrink_to_fit();
        i.volatile.shrink_to_fit();
        i.loads = HashMap::new();
        i.trusted.shrink_to_fit();
        i.quasi.shrink_to_fit();
    }

    /// About how many bytes of heap the fingerprint takes (an estimate for the JIT's memory
    /// limit).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let i = &*self.0;
        let args: usize = i
            .facts
            .iter()
            .map(|f| match f {
                Fact::Call(c) => size_of::<CallFact>() + c.args.capacity() * size_of::<Value>(),
                Fact::Load { .. } => 0,
            })
            .sum();
        size_of::<Inner>()
            + i.facts.capacity() * size_of::<Fact>()
            + args
            + i.volatile.capacity() * 4
            + i.loads.capacity() * (size_of::<((usize, u8), u64)>() + 1)
            + i.trusted.capacity() * (size_of::<(usize, bool)>() + 1)
            + i.quasi.capacity() * size_of::<usize>()
    }

    /// The addresses of the quasi-immutable fields the trace folded.
    pub fn quasi_fields(&self) -> &[usize] {
        &self.0.quasi
    }

    /// The tracer folded an elidable call on constant arguments to `result`; it is a fact if
    /// an argument is a trusted reference and every other reference argument is too (on
    /// integers and floats alone the function cannot see a reused object; an untrusted
    /// reference cannot be handed to it later).
    pub fn call(
        &mut self,
        name: &'static str,
        call: fn(&[Value]) -> Option<Value>,
        args: &[Value],
        result: Option<Value>,
    ) {
        if !args.iter().any(|&a| self.is_trusted(a)) {
            return;
        }
        let mut lasting = true;
        for &a in args {
            match (a, self.trust(a)) {
                (Value::Ref(p), None) if p != 0 => return,
                (_, Some(l)) => lasting &= l,
                _ => {}
            }
        }
        self.0.facts.push(Fact::Call(Box::new(CallFact {
            name,
            call,
            args: args.to_vec(),
            result,
        })));
        self.note_lasting(lasting);
        if let Some(r) = result {
            self.derive_as(r, lasting);
        }
    }

    /// The index of the first fact checked (all, or the volatile ones) that does not hold any
    /// more, if one does not.
    ///
    /// # Safety
    /// The trusted roots this fingerprint started from are the addresses of live objects of
    /// the types the trace saw there (the driver checks the facts of a loop only when it is
    /// entered with the greens it was traced with, which the interpreter holds; a bridge's
    /// facts after its parent's, a jumped-to loop's after those of the trace that computed
    /// its greens), and the immutable fields of live objects reference live objects. With
    /// [`Check::Volatile`], the lasting facts held earlier in the same portal call (a volatile
    /// fact's address may be computed from values that lasting facts vouch for).
    pub unsafe fn first_broken(&self, which: Check) -> Option<usize> {
        let facts = &self.0.facts;
        let holds = |k: usize| -> bool {
            match &facts[k] {
                Fact::Load { addr, size, bits } => {
                    let p = *addr as *const u8;
                    // SAFETY: every earlier fact holds, so `addr` is computed from the same
                    // values as when the tracer read it: it lies in a field of a live object
                    // reached from the roots through fields equal to those the tracer saw
                    // (and, for items, behind a bounds check on a length that is equal too).
                    let now = unsafe {
                        match size {
                            1 => u64::from(p.read_unaligned()),
                            2 => u64::from(p.cast::<u16>().read_unaligned()),
                            4 => u64::from(p.cast::<u32>().read_unaligned()),
                            _ => p.cast::<u64>().read_unaligned(),
                        }
                    };
                    now == *bits
                }
                Fact::Call(c) => same((c.call)(&c.args), c.result),
            }
        };
        match which {
            Check::All => (0..facts.len()).find(|&k| !holds(k)),
            Check::Volatile => self
                .0
                .volatile
                .iter()
                .map(|&k| k as usize)
                .find(|&k| !holds(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Fact, Fingerprint};
    use crate::jitcode::{FieldDescr, Kind, Value};

    fn descr() -> FieldDescr {
        FieldDescr {
            name: "T.f".into(),
            offset: 0,
            size: 8,
            signed: true,
            kind: Kind::Int,
            immutable: true,
            quasi_immutable: false,
            vable: false,
            length: false,
            class: "i64|T.f".into(),
        }
    }

    #[test]
    fn an_eternal_fingerprint_records_nothing_and_bridges_inherit_it() {
        let x = 7u64;
        let a = &x as *const u64 as usize;
        // A trusting fingerprint records the fold of a field of its root.
        let mut fp = Fingerprint::trusting([(a, false)]);
        fp.load(Value::Ref(a), a, &descr(), Value::Int(7));
        assert!(fp.is_trusted(Value::Ref(a)) && !fp.all_lasting());
        // An eternal one (the greens are `&'static`) trusts nothing and records nothing.
        let mut e = Fingerprint::eternal();
        let empty = e.heap_bytes();
        e.load(Value::Ref(a), a, &descr(), Value::Int(7));
        assert!(e.is_eternal() && !e.is_trusted(Value::Ref(a)) && e.all_lasting());
        assert_eq!(e.heap_bytes(), empty);
        assert_eq!(e.trusted().count(), 0);
        assert!(e.for_bridge().is_eternal());
        assert!(!fp.for_bridge().is_eternal());
    }

    #[test]
    fn a_fact_is_small() {
        // Most facts are loads; a trace of a long program keeps thousands.
        assert!(std::mem::size_of::<Fact>() <= 24, "{}", std::mem::size_of::<Fact>());
    }
}
