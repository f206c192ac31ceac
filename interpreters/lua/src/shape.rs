//! Shapes (hidden classes): which interned string key is at which position of a table's hash
//! part. Two tables whose hash parts got the same string keys in the same order share one
//! shape, so traced code that has guarded a table's shape (`promote!`) knows where a field's
//! value is: `Shape::slot` of a constant shape and a constant key is folded while tracing, and
//! the read is one load from the table's entries (`Table::hpart`).
//!
//! Shapes form a tree of transitions from the empty shape ([`Shape::root`]), one key per edge.
//! They live for the thread's life (leaked, `&'static`): a compiled trace compares a table's
//! shape with a constant address, which must never be reused. A hash part that gets any other
//! key (an integer, a float, a string that is not interned), more than [`MAX_KEYS`] keys, or
//! whose thread has made [`MAX_SHAPES`] shapes, has the dictionary shape ([`Shape::dict`]),
//! which knows no slot; it gets a shape again when `compact` drops its dead entries and the
//! keys left qualify.
//!
//! This module knows the table's keys only as values; it knows nothing about the VM or the JIT.

use crate::value::{LStr, Value};
use meta_jit::hints::*;
use std::cell::{Cell, RefCell};

/// The most keys a shape has; a hash part with more is a dictionary.
pub const MAX_KEYS: u32 = 128;

/// The most shapes a thread makes; tables get the dictionary shape after that.
pub const MAX_SHAPES: usize = 1 << 16;

/// [`Shape::has_event`]: `__newindex`.
pub const EV_NEWINDEX: u8 = 1;
/// [`Shape::has_event`]: `__len`.
pub const EV_LEN: u8 = 2;
/// [`Shape::has_event`]: `__eq`.
pub const EV_EQ: u8 = 4;

/// The keys of a hash part, as the last key and the shape of the keys before it.
pub struct Shape {
    /// The shape without the last key (None for the root and the dictionary).
    parent: Option<&'static Shape>,
    /// The address of the last key, an interned string (0 for the root and the dictionary).
    /// Interned strings live for the thread's life, so the address names the key for as long
    /// as the shape exists.
    key: usize,
    /// The number of keys.
    len: u32,
    /// True for the dictionary shape.
    dict: bool,
    /// The slot of `__index` (a metatable's), or -1.
    index_slot: i32,
    /// The metamethod names among the keys that traced code asks about ([`EV_NEWINDEX`],
    /// [`EV_LEN`], [`EV_EQ`] bits).
    events: u8,
    /// The shapes with one more key, by the key's address.
    next: RefCell<hashbrown::HashMap<usize, &'static Shape>>,
    /// The last transition taken (`next`'s entry), checked first: objects of one class get
    /// their fields in one order.
    last: Cell<(usize, Option<&'static Shape>)>,
}

// SAFETY: a shape holds no `Gc`: its key is an address only (see `Shape::key`).
unsafe impl meta_jit::gc::Trace for Shape {
    const NO_GC: bool = true;
    const INLINE: bool = true;
    fn trace(&self, _: &mut meta_jit::gc::Tracer) {}
}

thread_local! {
    /// The root and the dictionary shape of this thread (made on first use).
    static BASE: (&'static Shape, &'static Shape) = (Shape::leak(None, None), Shape::leak_dict());
    /// How many shapes this thread made.
    static MADE: Cell<usize> = const { Cell::new(0) };
}

impl Shape {
    fn leak(parent: Option<&'static Shape>, key: Option<Gc<LStr>>) -> &'static Shape {
        MADE.with(|m| m.set(m.get() + 1));
        let len = parent.map_or(0, |p| p.len + 1);
        let index_slot = match (parent, key) {
            (Some(p), _) if p.index_slot >= 0 => p.index_slot,
            (Some(p), Some(k)) if &*k.bytes == b"__index" => p.len as i32,
            _ => -1,
        };
        let event = match key.as_ref().map(|k| &*k.bytes) {
            Some(b"__newindex") => EV_NEWINDEX,
            Some(b"__len") => EV_LEN,
            Some(b"__eq") => EV_EQ,
            _ => 0,
        };
        let events = parent.map_or(0, |p| p.events) | event;
        let key = key.map_or(0, |k| k.as_ptr() as usize);
        Box::leak(Box::new(Shape {
            parent,
            key,
            len,
            dict: false,
            index_slot,
            events,
            next: RefCell::default(),
            last: Cell::new((0, None)),
        }))
    }

    fn leak_dict() -> &'static Shape {
        Box::leak(Box::new(Shape {
            parent: None,
            key: 0,
            len: 0,
            dict: true,
            index_slot: -1,
            events: 0,
            next: RefCell::default(),
            last: Cell::new((0, None)),
        }))
    }

    /// The shape of an empty hash part.
    pub fn root() -> &'static Shape {
        BASE.with(|b| b.0)
    }

    /// The shape of hash parts whose keys have no shape.
    pub fn dict() -> &'static Shape {
        BASE.with(|b| b.1)
    }

    /// True for the dictionary shape.
    pub fn is_dict(&self) -> bool {
        self.dict
    }

    /// The shape of these keys followed by `k`.
    #[inline]
    pub fn with(&'static self, k: &Value) -> &'static Shape {
        let s = match k {
            Value::Str(s) if s.interned && !self.dict && self.len < MAX_KEYS => *s,
            _ => return Shape::dict(),
        };
        let addr = s.as_ptr() as usize;
        if let (a, Some(n)) = self.last.get() {
            if a == addr {
                return n;
            }
        }
        if let Some(n) = self.next.borrow().get(&addr).copied() {
            self.last.set((addr, Some(n)));
            return n;
        }
        if MADE.with(|m| m.get()) >= MAX_SHAPES {
            return Shape::dict();
        }
        let n = Shape::leak(Some(self), Some(s));
        self.next.borrow_mut().insert(addr, n);
        self.last.set((addr, Some(n)));
        n
    }

    /// The shape of `keys` in this order.
    pub fn of_keys(keys: impl Iterator<Item = Value>) -> &'static Shape {
        keys.fold(Shape::root(), |s, k| s.with(&k))
    }

    /// The position of the interned string `k` among the keys, if it is one of them.
    pub fn slot(&self, k: Gc<LStr>) -> Option<usize> {
        let mut s = self;
        while let Some(p) = s.parent {
            if s.key == k.as_ptr() as usize {
                return Some(p.len as usize);
            }
            s = p;
        }
        None
    }

    /// The number of keys.
    pub fn key_count(&self) -> usize {
        self.len as usize
    }

    /// The last key (None for the root and the dictionary).
    pub fn last_key(&self) -> Option<Gc<LStr>> {
        // SAFETY: `key` is the address of an interned string, which lives for the thread's
        // life (see `Shape::key`), or 0.
        (self.key != 0).then(|| unsafe { Gc::from_addr(self.key) })
    }

    /// The position of `__index` among the keys, or -1.
    pub fn index_slot(&self) -> i32 {
        self.index_slot
    }

    /// True if the metamethod name `ev` ([`EV_NEWINDEX`], [`EV_LEN`] or [`EV_EQ`]) is one of
    /// the keys (false for the dictionary shape, which knows no keys: ask
    /// [`Shape::is_dict`] first).
    pub fn has_event(&self, ev: u8) -> bool {
        self.events & ev != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::intern;

    #[test]
    fn tables_with_the_same_keys_in_the_same_order_share_a_shape() {
        let (x, y) = (Value::Str(intern(b"x")), Value::Str(intern(b"y")));
        let a = Shape::root().with(&x).with(&y);
        let b = Shape::of_keys([x, y].into_iter());
        assert!(std::ptr::eq(a, b));
        assert!(!std::ptr::eq(a, Shape::of_keys([y, x].into_iter())));
        assert_eq!(a.slot(intern(b"x")), Some(0));
        assert_eq!(a.slot(intern(b"y")), Some(1));
        assert_eq!(a.slot(intern(b"z")), None);
        assert_eq!(a.index_slot(), -1);
        let m = Shape::of_keys([x, Value::Str(intern(b"__index"))].into_iter());
        assert_eq!(m.index_slot(), 1);
        assert_eq!(m.with(&y).index_slot(), 1);
        assert!(!m.has_event(EV_NEWINDEX));
        let ni = m.with(&Value::Str(intern(b"__newindex")));
        assert!(ni.has_event(EV_NEWINDEX) && ni.with(&y).has_event(EV_NEWINDEX));
        assert!(!ni.has_event(EV_LEN) && !ni.has_event(EV_EQ));
        let all = ni
            .with(&Value::Str(intern(b"__len")))
            .with(&Value::Str(intern(b"__eq")));
        assert!(all.has_event(EV_NEWINDEX) && all.has_event(EV_LEN) && all.has_event(EV_EQ));
    }

    #[test]
    fn other_keys_make_a_dictionary() {
        let x = Value::Str(intern(b"x"));
        assert!(Shape::root().with(&Value::Int(1)).is_dict());
        assert!(Shape::root()
            .with(&x)
            .with(&Value::Num(0.5))
            .with(&x)
            .is_dict());
        let plain = Value::Str(crate::value::LStr::new(b"not interned"));
        assert!(Shape::root().with(&plain).is_dict());
        assert_eq!(Shape::dict().slot(intern(b"x")), None);
        let mut s = Shape::root();
        for i in 0..=MAX_KEYS {
            s = s.with(&Value::Str(intern(format!("k{i}").as_bytes())));
        }
        assert!(s.is_dict());
    }
}
