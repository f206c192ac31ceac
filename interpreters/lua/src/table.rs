//! Lua tables: an array part for the keys `1..=n` and a hash part in insertion order (so that
//! `next` can walk it while fields are set to nil), plus the metatable.
//!
//! Float keys with an integral value are normalized to integers. This module knows nothing
//! about metamethods; the VM applies them.

use crate::value::{float_to_int, TRef, Value};
use hashbrown::HashTable;
use std::cell::Cell;
use std::rc::Rc;

/// A table.
#[derive(Default)]
pub struct Table {
    /// Values of the keys `1..=arr.len()`; the last one is never nil.
    pub arr: Vec<Value>,
    /// Hash part entries in insertion order; a removed entry keeps its key with a nil value.
    entries: Vec<(Value, Value)>,
    /// Indexes into `entries`, hashed by [`key_hash`] of their key.
    index: HashTable<u32>,
    /// Entries whose value is nil.
    dead: u32,
    /// Entries whose key is a string that is not interned (an upper bound: entries whose
    /// value became nil still count until `compact`). While it is 0, an interned key is found
    /// by comparing pointers only.
    plain_keys: u32,
    /// The metatable.
    pub meta: Option<TRef>,
}

/// Spreads the bits of `x` (the low bits choose the bucket, the high bits tag it).
#[inline]
fn mix(x: u64) -> u64 {
    let x = (x ^ (x >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 29)
}

/// The hash of a (normalized) key: a string's own hash, or the mixed bits of the value.
#[inline]
fn key_hash(k: &Value) -> u64 {
    match k {
        Value::Str(s) => s.hash,
        Value::Int(i) => mix(*i as u64),
        Value::Num(f) => match float_to_int(*f) {
            Some(i) => mix(i as u64),
            None => mix(f.to_bits()),
        },
        Value::Boolean(b) => mix(*b as u64 + 1),
        Value::Nil => 0,
        _ => mix(k.ptr() as u64),
    }
}

fn norm(k: &Value) -> Option<Value> {
    if let Value::Num(f) = k {
        if let Some(i) = float_to_int(*f) {
            return Some(Value::Int(i));
        }
    }
    None
}

impl Table {
    /// An empty table with room for `narr` array items.
    pub fn with_capacity(narr: usize, nhash: usize) -> Table {
        Table {
            arr: Vec::with_capacity(narr),
            entries: Vec::with_capacity(nhash),
            index: HashTable::with_capacity(nhash),
            ..Default::default()
        }
    }

    /// `t[i]` for an integer key.
    #[inline]
    pub fn get_int(&self, i: i64) -> Value {
        if i >= 1 && (i as u64) <= self.arr.len() as u64 {
            return self.arr[(i - 1) as usize].clone();
        }
        if self.entries.is_empty() {
            return Value::Nil;
        }
        match self.find_int(i) {
            Some(j) => self.entries[j].1.clone(),
            None => Value::Nil,
        }
    }

    /// The position of key `k` in `entries`. An interned string key in a small table whose
    /// string keys are all interned (the fields and methods of objects) is found inline by
    /// comparing pointers along the entries; the rest goes through the index (`find_hashed`).
    #[inline(always)]
    fn find(&self, k: &Value) -> Option<usize> {
        if let Value::Str(ks) = k {
            if ks.interned && self.plain_keys == 0 && self.entries.len() <= 8 {
                // Every string key here is interned, and so is `ks`: the entry of an equal
                // key holds this very object.
                let p = Rc::as_ptr(ks);
                return (self.entries.iter())
                    .position(|e| matches!(&e.0, Value::Str(s) if std::ptr::eq(Rc::as_ptr(s), p)));
            }
        }
        self.find_hashed(k)
    }

    /// `find` through the index.
    #[inline(never)]
    fn find_hashed(&self, k: &Value) -> Option<usize> {
        let entries = &self.entries;
        if let Value::Str(ks) = k {
            if ks.interned && self.plain_keys == 0 {
                // As in `find`: compare pointers only.
                let p = Rc::as_ptr(ks);
                let is_k = |e: &Value| matches!(e, Value::Str(s) if std::ptr::eq(Rc::as_ptr(s), p));
                return self
                    .index
                    .find(ks.hash, |&i| is_k(&entries[i as usize].0))
                    .map(|&i| i as usize);
            }
            // Strings: a pointer comparison first (constants are interned), then the bytes.
            return self
                .index
                .find(ks.hash, |&i| match &entries[i as usize].0 {
                    Value::Str(s) => {
                        Rc::ptr_eq(s, ks) || (s.hash == ks.hash && s.bytes == ks.bytes)
                    }
                    _ => false,
                })
                .map(|&i| i as usize);
        }
        if let Value::Int(ki) = *k {
            return self.find_int(ki);
        }
        self.index
            .find(key_hash(k), |&i| entries[i as usize].0.raw_eq(k))
            .map(|&i| i as usize)
    }

    /// The position of the integer key `ki` in `entries`.
    #[inline]
    fn find_int(&self, ki: i64) -> Option<usize> {
        let entries = &self.entries;
        self.index
            .find(
                mix(ki as u64),
                |&i| matches!(entries[i as usize].0, Value::Int(j) if j == ki),
            )
            .map(|&i| i as usize)
    }

    #[inline]
    fn get_hash(&self, k: &Value) -> Value {
        match self.find(k) {
            Some(i) => self.entries[i].1.clone(),
            None => Value::Nil,
        }
    }

    /// `t[k]` without metamethods.
    pub fn get(&self, k: &Value) -> Value {
        match k {
            Value::Int(i) => self.get_int(*i),
            Value::Num(_) => match norm(k) {
                Some(Value::Int(i)) => self.get_int(i),
                _ => self.get_hash(k),
            },
            Value::Nil => Value::Nil,
            _ => {
                if self.entries.is_empty() {
                    Value::Nil
                } else {
                    self.get_hash(k)
                }
            }
        }
    }

    /// `t[k]` for a string key.
    #[inline]
    pub fn get_str(&self, k: &Value) -> Value {
        if self.entries.is_empty() {
            return Value::Nil;
        }
        self.get_hash(k)
    }

    /// The position of the string key `k` in `entries` when it is the one `ic` names (one
    /// pointer comparison). Keys are unique in `entries`, so the entry that holds this very
    /// key object is the key's entry, whatever happened to the table since `ic` was set; an
    /// equal key held by another string object is a miss, and `find` decides.
    #[inline(always)]
    fn ic_hit(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        let j = ic.get() as usize;
        match (self.entries.get(j), k) {
            (Some((Value::Str(s), _)), Value::Str(ks)) if Rc::ptr_eq(s, ks) => Some(j),
            _ => None,
        }
    }

    /// `find` for a string key, first at the position `ic` remembers, which it updates.
    #[inline(always)]
    fn find_ic(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        if let Some(j) = self.ic_hit(k, ic) {
            return Some(j);
        }
        self.find_and_remember(k, ic)
    }

    #[inline(never)]
    fn find_and_remember(&self, k: &Value, ic: &Cell<u32>) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let j = self.find(k)?;
        ic.set(j as u32);
        Some(j)
    }

    /// `t[k]` for a string key, with the inline cache `ic` of the instruction that reads it
    /// (`Proto::ic`).
    #[inline(always)]
    pub fn get_str_ic(&self, k: &Value, ic: &Cell<u32>) -> Value {
        match self.find_ic(k, ic) {
            Some(j) => self.entries[j].1.clone(),
            None => Value::Nil,
        }
    }

    /// [`Table::set_str_fast`] with the inline cache `ic` of the instruction that writes.
    #[inline(always)]
    pub fn set_str_fast_ic(&mut self, k: &Value, v: Value, ic: &Cell<u32>) -> Result<(), Value> {
        if let Some(j) = self.find_ic(k, ic) {
            if !matches!(self.entries[j].1, Value::Nil) {
                if matches!(v, Value::Nil) {
                    self.dead += 1;
                }
                self.entries[j].1 = v;
                return Ok(());
            }
        }
        if self.meta.is_some() {
            return Err(v);
        }
        self.set_hash(k.clone(), v);
        Ok(())
    }

    /// `t[k] = v` for a string key `k` when no metamethod can apply: the key holds a value,
    /// or the table has no metatable. Gives `v` back otherwise (the caller tries
    /// `__newindex`).
    #[inline]
    pub fn set_str_fast(&mut self, k: &Value, v: Value) -> Result<(), Value> {
        if let Some(j) = self.find(k) {
            if !matches!(self.entries[j].1, Value::Nil) {
                if matches!(v, Value::Nil) {
                    self.dead += 1;
                }
                self.entries[j].1 = v;
                return Ok(());
            }
        }
        if self.meta.is_some() {
            return Err(v);
        }
        self.set_hash(k.clone(), v);
        Ok(())
    }

    /// `t[i] = v` for an integer key and a value other than nil when no metamethod can apply:
    /// the key holds a value (array or hash part), or the table has no metatable. Gives `v`
    /// back otherwise.
    #[inline]
    pub fn set_int_fast(&mut self, i: i64, v: Value) -> Result<(), Value> {
        if matches!(v, Value::Nil) {
            return Err(v);
        }
        let n = self.arr.len();
        if i >= 1 && (i as u64) <= n as u64 {
            let slot = &mut self.arr[(i - 1) as usize];
            if self.meta.is_none() || !matches!(slot, Value::Nil) {
                // The old value's drop runs (out of line) only when it holds a count.
                if slot.is_counted() {
                    *slot = v;
                } else {
                    std::mem::forget(std::mem::replace(slot, v));
                }
                return Ok(());
            }
        } else if i as u64 == n as u64 + 1 && self.meta.is_none() && self.entries.is_empty() {
            self.arr.push(v);
            return Ok(());
        } else if !self.entries.is_empty() {
            // A key of the hash part that holds a value.
            if let Some(j) = self.find_int(i) {
                let slot = &mut self.entries[j].1;
                if !matches!(slot, Value::Nil) {
                    *slot = v;
                    return Ok(());
                }
            }
        }
        if self.meta.is_none() {
            self.set_int(i, v);
            return Ok(());
        }
        Err(v)
    }

    /// `t[i] = v` for an integer key.
    pub fn set_int(&mut self, i: i64, v: Value) {
        let n = self.arr.len();
        if i >= 1 && (i as u64) <= n as u64 {
            let idx = (i - 1) as usize;
            if v.truthy() || matches!(v, Value::Boolean(false)) || idx + 1 < n {
                self.arr[idx] = v;
            } else {
                // The last item becomes nil: shrink to keep the border at the end.
                self.arr.pop();
                while matches!(self.arr.last(), Some(Value::Nil)) {
                    self.arr.pop();
                }
            }
            return;
        }
        if i as u64 == n as u64 + 1 {
            if matches!(v, Value::Nil) {
                self.set_hash(Value::Int(i), v);
                return;
            }
            self.arr.push(v);
            if !self.entries.is_empty() {
                self.remove_hash(&Value::Int(i));
                self.migrate();
            }
            return;
        }
        self.set_hash(Value::Int(i), v);
    }

    fn remove_hash(&mut self, k: &Value) {
        if let Some(j) = self.find(k) {
            if !matches!(self.entries[j].1, Value::Nil) {
                self.entries[j].1 = Value::Nil;
                self.dead += 1;
            }
        }
    }

    /// Moves keys `n+1, n+2, ...` from the hash part to the array part.
    fn migrate(&mut self) {
        loop {
            let k = Value::Int(self.arr.len() as i64 + 1);
            match self.find(&k) {
                Some(j) if !matches!(self.entries[j].1, Value::Nil) => {
                    let v = std::mem::take(&mut self.entries[j].1);
                    self.dead += 1;
                    self.arr.push(v);
                }
                _ => break,
            }
        }
    }

    fn set_hash(&mut self, k: Value, v: Value) {
        if let Some(j) = self.find(&k) {
            let was_nil = matches!(self.entries[j].1, Value::Nil);
            let is_nil = matches!(v, Value::Nil);
            self.entries[j].1 = v;
            if was_nil && !is_nil {
                self.dead -= 1;
            } else if !was_nil && is_nil {
                self.dead += 1;
            }
            return;
        }
        if matches!(v, Value::Nil) {
            return;
        }
        if self.dead > 8 && self.dead as usize * 2 > self.entries.len() {
            self.compact();
        }
        if matches!(&k, Value::Str(s) if !s.interned) {
            self.plain_keys += 1;
        }
        let entries = &self.entries;
        self.index
            .insert_unique(key_hash(&k), entries.len() as u32, |&i| {
                key_hash(&entries[i as usize].0)
            });
        self.entries.push((k, v));
    }

    fn compact(&mut self) {
        self.entries.retain(|e| !matches!(e.1, Value::Nil));
        self.plain_keys = (self.entries.iter())
            .filter(|e| matches!(&e.0, Value::Str(s) if !s.interned))
            .count() as u32;
        self.index.clear();
        let entries = &self.entries;
        for (j, e) in entries.iter().enumerate() {
            self.index.insert_unique(key_hash(&e.0), j as u32, |&i| {
                key_hash(&entries[i as usize].0)
            });
        }
        self.dead = 0;
    }

    /// `t[k] = v` without metamethods; the caller has rejected nil and NaN keys.
    pub fn set(&mut self, k: Value, v: Value) {
        match k {
            Value::Int(i) => self.set_int(i, v),
            Value::Num(_) => match norm(&k) {
                Some(Value::Int(i)) => self.set_int(i, v),
                _ => self.set_hash(k, v),
            },
            _ => self.set_hash(k, v),
        }
    }

    /// `table.insert(t, pos, v)` for `1 <= pos <= #t` on a table whose items are all in the
    /// array part: shifts them up in one move. False (nothing done) for other tables.
    pub fn insert_at(&mut self, pos: i64, v: Value) -> bool {
        if self.meta.is_some() || !self.entries.is_empty() {
            return false;
        }
        if pos < 1 || pos as u64 > self.arr.len() as u64 {
            return false;
        }
        self.arr.insert(pos as usize - 1, v);
        true
    }

    /// `table.remove(t, pos)` for `1 <= pos <= #t == arr.len()` without a metatable: shifts
    /// the items down in one move and returns the removed one; None (nothing done) otherwise.
    pub fn remove_at(&mut self, pos: i64) -> Option<Value> {
        if self.meta.is_some() || self.arr.is_empty() {
            return None;
        }
        if pos < 1 || pos as u64 > self.arr.len() as u64 {
            return None;
        }
        let r = self.arr.remove(pos as usize - 1);
        // Keep the border at the end, as setting the last item to nil does.
        while matches!(self.arr.last(), Some(Value::Nil)) {
            self.arr.pop();
        }
        Some(r)
    }

    /// `#t`: a border.
    pub fn len(&self) -> i64 {
        let n = self.arr.len();
        if n > 0 || self.entries.is_empty() {
            return n as i64;
        }
        // Only a hash part: probe upwards, as Lua's unbound search does.
        let mut i: i64 = 0;
        while !matches!(self.get_hash(&Value::Int(i + 1)), Value::Nil) {
            i += 1;
        }
        i
    }

    /// True if the table has no array items.
    pub fn is_empty(&self) -> bool {
        self.arr.is_empty() && self.entries.len() == self.dead as usize
    }

    /// The key after `k` in traversal order (`next`): `Ok(None)` at the end, `Err` if `k` is
    /// not a key of the table.
    #[allow(clippy::result_unit_err)]
    pub fn next(&self, k: &Value) -> Result<Option<(Value, Value)>, ()> {
        let mut start_hash = 0;
        match k {
            Value::Nil => {
                if let Some(v) = self.arr.first() {
                    return Ok(Some((Value::Int(1), v.clone())));
                }
            }
            _ => {
                let key = norm(k).unwrap_or_else(|| k.clone());
                let mut in_arr = false;
                if let Value::Int(i) = key {
                    if i >= 1 && (i as u64) <= self.arr.len() as u64 {
                        in_arr = true;
                        let mut j = i as usize;
                        while j < self.arr.len() {
                            if !matches!(self.arr[j], Value::Nil) {
                                return Ok(Some((Value::Int(j as i64 + 1), self.arr[j].clone())));
                            }
                            j += 1;
                        }
                    }
                }
                if !in_arr {
                    match self.find(&key) {
                        Some(j) => start_hash = j + 1,
                        None => return Err(()),
                    }
                }
            }
        }
        if let Value::Nil = k {
            // skip nils at the start of the array
            for (j, v) in self.arr.iter().enumerate() {
                if !matches!(v, Value::Nil) {
                    return Ok(Some((Value::Int(j as i64 + 1), v.clone())));
                }
            }
        }
        for e in &self.entries[start_hash.min(self.entries.len())..] {
            if !matches!(e.1, Value::Nil) {
                return Ok(Some((e.0.clone(), e.1.clone())));
            }
        }
        Ok(None)
    }
}
