//! The small heap a generated test case runs against: a few objects of one struct type
//! ([`Obj`]) and one int array, at addresses that stay fixed for the life of a [`Heap`], and the
//! descriptors that describe them to a trace ([`Descrs`]).
//!
//! The heap is built from a plain-data [`HeapSpec`] and can be put back into that initial state
//! at any time ([`Heap::reset`]), so the same trace can run on it several times (unoptimized,
//! optimized, compiled) from identical memory. Its memory comes from the global allocator
//! directly, not from [`crate::alloc::alloc_zeroed`], so an allocation [`crate::alloc::Tracker`]
//! never mistakes a heap object for an object a trace allocated.
//!
//! Invariant kept by everything that writes the heap (generated traces and the functions of
//! [`super::funcs`]): every `next` field of every [`Obj`] points to a live [`Obj`], and `imm` is
//! written only while an object is being initialized.

use crate::ir::{
    Access, ArrayDescr, CallDescr, DescrId, DescrKind, Effects, FieldDescr, SizeDescr, Trace, Type,
};
use std::alloc::Layout;
use std::mem::{offset_of, size_of};

/// The struct type of the heap's objects, laid out as C would (`#[repr(C)]`), with integer
/// fields of every size and signedness, a float, a reference and one immutable field.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Obj {
    /// Signed byte.
    pub a8: i8,
    /// Unsigned byte.
    pub b8: u8,
    /// Signed 16 bits.
    pub a16: i16,
    /// Unsigned 16 bits.
    pub b16: u16,
    /// Signed 32 bits.
    pub a32: i32,
    /// Unsigned 32 bits.
    pub b32: u32,
    /// Signed 64 bits.
    pub a64: i64,
    /// Unsigned 64 bits.
    pub b64: u64,
    /// A float.
    pub f: f64,
    /// Another object (never null).
    pub next: *mut Obj,
    /// An enum's payload: read and written as an `i64` (`pi`, `pu`) and as an `f64` (`pf`,
    /// `pv`), four descriptors of one payload whose precise alias classes alias each other.
    pub pay: u64,
    /// Immutable: written only when the object is initialized.
    pub imm: i64,
}

/// The number of items of the heap's int array (and the minimum length of any array that
/// [`super::funcs::mess_arr`] may be given).
pub const ARR_LEN: usize = 16;

/// One field of [`Obj`], as the descriptor table names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// Descriptor name in the text form.
    pub name: &'static str,
    /// Byte offset.
    pub offset: usize,
    /// Size in bytes.
    pub size: u8,
    /// Whether loads sign-extend.
    pub signed: bool,
    /// Kind of value.
    pub kind: Type,
    /// Whether the field is immutable.
    pub immutable: bool,
    /// Whether the field is declared virtualizable (its stores may be delayed to the trace's
    /// exits: random traces exercise `opt::vable` through these).
    pub vable: bool,
}

/// The fields of [`Obj`], in declaration order.
pub const FIELDS: [FieldInfo; 15] = {
    const fn f(name: &'static str, offset: usize, size: u8, signed: bool, kind: Type) -> FieldInfo {
        FieldInfo {
            name,
            offset,
            size,
            signed,
            kind,
            immutable: false,
            vable: false,
        }
    }
    const fn vable(mut f: FieldInfo) -> FieldInfo {
        f.vable = true;
        f
    }
    let mut imm = f("imm", offset_of!(Obj, imm), 8, true, Type::Int);
    imm.immutable = true;
    [
        f("a8", offset_of!(Obj, a8), 1, true, Type::Int),
        f("b8", offset_of!(Obj, b8), 1, false, Type::Int),
        f("a16", offset_of!(Obj, a16), 2, true, Type::Int),
        vable(f("b16", offset_of!(Obj, b16), 2, false, Type::Int)),
        f("a32", offset_of!(Obj, a32), 4, true, Type::Int),
        f("b32", offset_of!(Obj, b32), 4, false, Type::Int),
        vable(f("a64", offset_of!(Obj, a64), 8, true, Type::Int)),
        f("b64", offset_of!(Obj, b64), 8, false, Type::Int),
        vable(f("f", offset_of!(Obj, f), 8, false, Type::Float)),
        vable(f("next", offset_of!(Obj, next), 8, false, Type::Ref)),
        f("pi", offset_of!(Obj, pay), 8, true, Type::Int),
        f("pf", offset_of!(Obj, pay), 8, false, Type::Float),
        f("pu", offset_of!(Obj, pay), 8, true, Type::Int),
        f("pv", offset_of!(Obj, pay), 8, false, Type::Float),
        imm,
    ]
};

/// Index in [`FIELDS`] of `next`.
pub const NEXT: usize = 9;
/// Index in [`FIELDS`] of `imm` (the last: stores pick among the others).
pub const IMM: usize = 14;
/// Index in [`FIELDS`] of `a64`.
pub const A64: usize = 6;
/// Index in [`FIELDS`] of `f`.
pub const F: usize = 8;

/// The descriptors of the heap's types and of the test functions, as entries of one trace's
/// table. Every generated trace declares all of them, in the same order.
#[derive(Clone, Debug)]
pub struct Descrs {
    /// One per entry of [`FIELDS`].
    pub fields: [DescrId; 15],
    /// The size of [`Obj`] (for `new`).
    pub obj: DescrId,
    /// Arrays of `i64` (the heap's array, and `new_array` of ints), as the items of a `Vec`
    /// field (`w64:Heap.arr.items`).
    pub arr: DescrId,
    /// The same arrays as the items of a `Vec` of unseen owner (`w64:Vec.items`), which may be
    /// any `Vec`'s: accesses through it and through `arr` alias.
    pub any_items: DescrId,
    /// Arrays of unsigned bytes (`new_array` only).
    pub bytes: DescrId,
    /// A signed 64-bit word at offset 0 of a reference into the middle of an object or array:
    /// the wide alias class `w64`, whose precise classes are `w64:Obj.a64` (`a64`),
    /// `w64:Obj.b64` (`b64`) and those of the items (`arr`, `any_items`), so that an access
    /// through it may touch what `a64` or an item names, while `a64`, `b64` and the items never
    /// alias each other.
    pub w64: DescrId,
    /// One call descriptor per entry of [`super::funcs::FUNCS`].
    pub funcs: Vec<DescrId>,
}

impl Descrs {
    /// Declares every descriptor in `t` (idempotent: names are unique) and returns their ids.
    pub fn declare(t: &mut Trace) -> Descrs {
        let fields = FIELDS.map(|f| {
            t.descr(
                f.name,
                DescrKind::Field(FieldDescr {
                    offset: f.offset as u32,
                    size: f.size,
                    signed: f.signed,
                    kind: f.kind,
                    immutable: f.immutable,
                    quasi_immutable: false,
                    vable: f.vable,
                    length: false,
                    alias: match f.name {
                        "a64" => Some("w64:Obj.a64".to_string()),
                        // One enum payload's bytes read as an `i64` and as an `f64`, as the
                        // codewriter names them for the enums of one place (`pi`, `pf`), of
                        // an unseen `Vec`'s items (`pv`) and of an unseen place (`pu`): all
                        // alias each other (`ir::payloads_meet`).
                        "pi" => Some("i64:Obj.payload@Heap.objs.items".to_string()),
                        "pf" => Some("f64:Obj.payload@Heap.objs.items".to_string()),
                        "pu" => Some("i64:Obj.payload".to_string()),
                        "pv" => Some("f64:Obj.payload@Vec.items".to_string()),
                        "b64" => Some("w64:Obj.b64".to_string()),
                        _ => None,
                    },
                }),
            )
        });
        let obj = t.descr(
            "obj",
            DescrKind::Size(SizeDescr {
                size: size_of::<Obj>() as u32,
                align: 8,
            }),
        );
        let arr = t.descr(
            "arr",
            DescrKind::Array(ArrayDescr {
                base: 0,
                item_size: 8,
                signed: true,
                kind: Type::Int,
                vable: true,
                alias: Some("w64:Heap.arr.items".to_string()),
            }),
        );
        let any_items = t.descr(
            "any_items",
            DescrKind::Array(ArrayDescr {
                base: 0,
                item_size: 8,
                signed: true,
                kind: Type::Int,
                vable: false,
                alias: Some(format!("w64:{}", crate::ir::ANY_VEC_ITEMS)),
            }),
        );
        let bytes = t.descr(
            "bytes",
            DescrKind::Array(ArrayDescr {
                base: 0,
                item_size: 1,
                signed: false,
                kind: Type::Int,
                vable: false,
                alias: None,
            }),
        );
        let w64 = t.descr(
            "w64",
            DescrKind::Field(FieldDescr {
                offset: 0,
                size: 8,
                signed: true,
                kind: Type::Int,
                immutable: false,
                quasi_immutable: false,
                vable: false,
                length: false,
                alias: Some("w64".to_string()),
            }),
        );
        let mut d = Descrs {
            fields,
            obj,
            arr,
            any_items,
            bytes,
            w64,
            funcs: Vec::new(),
        };
        for f in super::funcs::FUNCS {
            let effects = (f.effects)(&d);
            let id = t.descr(
                &format!("{}_d", f.name),
                DescrKind::Call(CallDescr {
                    args: f.args.to_vec(),
                    ret: f.ret,
                    effects,
                }),
            );
            d.funcs.push(id);
        }
        d
    }

    /// The access set of some fields of [`FIELDS`], by index.
    pub fn access(&self, fields: &[usize]) -> Access {
        Access::Descrs(fields.iter().map(|&i| self.fields[i]).collect())
    }

    /// Effects of a function that reads and writes nothing and is not elidable.
    pub fn no_effects(&self) -> Effects {
        Effects {
            elidable: false,
            reads: Access::Nothing,
            writes: Access::Nothing,
            can_invalidate: false,
            loop_invariant: false,
        }
    }
}

/// The initial contents of one heap object.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjSpec {
    /// The integer fields `a8` .. `b64` (each truncated to its field's size when written).
    pub ints: [i64; 8],
    /// The float field.
    pub f: f64,
    /// Index of the object `next` points to (modulo the number of objects).
    pub next: usize,
    /// The immutable field.
    pub imm: i64,
}

/// The initial contents of a heap: at least one object, and the int array.
#[derive(Clone, Debug, PartialEq)]
pub struct HeapSpec {
    /// The objects (at least one).
    pub objs: Vec<ObjSpec>,
    /// The array's items.
    pub arr: [i64; ARR_LEN],
}

/// A heap built from a [`HeapSpec`]: objects and an array at fixed addresses, freed on drop.
#[derive(Debug)]
pub struct Heap {
    objs: Vec<usize>,
    arr: usize,
    spec: HeapSpec,
}

fn obj_layout() -> Layout {
    Layout::new::<Obj>()
}

fn arr_layout() -> Layout {
    Layout::new::<[i64; ARR_LEN]>()
}

impl Heap {
    /// Allocates the heap and fills it from `spec` (which needs at least one object).
    pub fn new(spec: &HeapSpec) -> Heap {
        assert!(!spec.objs.is_empty(), "a heap has at least one object");
        let alloc = |l: Layout| {
            // SAFETY: both layouts have a non-zero size.
            let p = unsafe { std::alloc::alloc_zeroed(l) };
            if p.is_null() {
                std::alloc::handle_alloc_error(l);
            }
            p as usize
        };
        let heap = Heap {
            objs: spec.objs.iter().map(|_| alloc(obj_layout())).collect(),
            arr: alloc(arr_layout()),
            spec: spec.clone(),
        };
        heap.reset();
        heap
    }

    /// Puts every object and the array back into the initial state of the spec.
    pub fn reset(&self) {
        let n = self.objs.len();
        for (s, &addr) in self.spec.objs.iter().zip(&self.objs) {
            let o = Obj {
                a8: s.ints[0] as i8,
                b8: s.ints[1] as u8,
                a16: s.ints[2] as i16,
                b16: s.ints[3] as u16,
                a32: s.ints[4] as i32,
                b32: s.ints[5] as u32,
                a64: s.ints[6],
                b64: s.ints[7] as u64,
                f: s.f,
                next: self.objs[s.next % n] as *mut Obj,
                pay: s.ints[7] as u64 ^ 0x5555,
                imm: s.imm,
            };
            // Write field by field through a zeroed image so the padding stays zero.
            // SAFETY: `addr` is a live allocation of `Obj`'s layout owned by this heap, and
            // no reference to it exists (traces and test functions use raw pointers).
            unsafe {
                std::ptr::write_bytes(addr as *mut u8, 0, size_of::<Obj>());
                let p = addr as *mut Obj;
                std::ptr::addr_of_mut!((*p).a8).write(o.a8);
                std::ptr::addr_of_mut!((*p).b8).write(o.b8);
                std::ptr::addr_of_mut!((*p).a16).write(o.a16);
                std::ptr::addr_of_mut!((*p).b16).write(o.b16);
                std::ptr::addr_of_mut!((*p).a32).write(o.a32);
                std::ptr::addr_of_mut!((*p).b32).write(o.b32);
                std::ptr::addr_of_mut!((*p).a64).write(o.a64);
                std::ptr::addr_of_mut!((*p).b64).write(o.b64);
                std::ptr::addr_of_mut!((*p).f).write(o.f);
                std::ptr::addr_of_mut!((*p).next).write(o.next);
                std::ptr::addr_of_mut!((*p).pay).write(o.pay);
                std::ptr::addr_of_mut!((*p).imm).write(o.imm);
            }
        }
        // SAFETY: `self.arr` is a live allocation of `ARR_LEN` `i64`s owned by this heap.
        unsafe { (self.arr as *mut [i64; ARR_LEN]).write(self.spec.arr) };
    }

    /// The address of object `i`.
    pub fn obj(&self, i: usize) -> usize {
        self.objs[i]
    }

    /// The number of objects.
    pub fn num_objs(&self) -> usize {
        self.objs.len()
    }

    /// The address of the int array.
    pub fn arr(&self) -> usize {
        self.arr
    }

    /// The spec the heap was built from.
    pub fn spec(&self) -> &HeapSpec {
        &self.spec
    }

    /// Which root (object `i`, or the array as index `num_objs()`) starts at `addr`, if any.
    pub fn root_index(&self, addr: usize) -> Option<usize> {
        if addr == self.arr {
            return Some(self.objs.len());
        }
        self.objs.iter().position(|&a| a == addr)
    }

    /// The memory of the heap's objects and array, as (start, length) ranges
    /// ([`crate::interp::Run::memory`]).
    pub fn ranges(&self) -> Vec<(usize, usize)> {
        let obj = std::mem::size_of::<Obj>();
        let mut r: Vec<(usize, usize)> = self.objs.iter().map(|&o| (o, obj)).collect();
        r.push((self.arr, ARR_LEN * 8));
        r
    }

    /// Whether `addr` lies inside a heap object or the array (interior references are made by
    /// `w64` accesses).
    pub fn inside(&self, addr: usize) -> bool {
        let within = |start: usize, len: usize| addr >= start && addr < start + len;
        within(self.arr, ARR_LEN * 8)
            || self
                .objs
                .iter()
                .any(|&o| within(o, std::mem::size_of::<Obj>()))
    }

    /// A name for an address: `obj2`, `arr`, or the address itself.
    pub fn name(&self, addr: usize) -> String {
        match self.root_index(addr) {
            Some(i) if i == self.objs.len() => "arr".to_string(),
            Some(i) => format!("obj{i}"),
            None => format!("{addr:#x}"),
        }
    }

    /// A copy of the current contents of every object and of the array.
    pub fn snapshot(&self) -> HeapSnapshot {
        let copy = |addr: usize, len: usize| {
            let mut v = vec![0u8; len];
            // SAFETY: `addr` is a live allocation of at least `len` bytes owned by this heap.
            unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, v.as_mut_ptr(), len) };
            v
        };
        let mut roots: Vec<(usize, Vec<u8>)> = self
            .objs
            .iter()
            .map(|&a| (a, copy(a, size_of::<Obj>())))
            .collect();
        roots.push((self.arr, copy(self.arr, ARR_LEN * 8)));
        HeapSnapshot { roots }
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        for &a in &self.objs {
            // SAFETY: allocated in `Heap::new` with this layout, freed once.
            unsafe { std::alloc::dealloc(a as *mut u8, obj_layout()) };
        }
        // SAFETY: as above.
        unsafe { std::alloc::dealloc(self.arr as *mut u8, arr_layout()) };
    }
}

/// The contents of a heap's roots (its objects, then its array) at one moment: what a run
/// left behind. Compared by [`super::compare()`], which pairs roots by position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapSnapshot {
    /// Each root's address and bytes.
    pub roots: Vec<(usize, Vec<u8>)>,
}

/// Objects the generator's simulation allocates (its stand-in for `new` and `new_array`):
/// zeroed, outside any [`crate::alloc::Tracker`], freed when the arena drops.
#[derive(Default)]
pub(crate) struct Arena {
    blocks: Vec<(usize, Layout)>,
}

impl Arena {
    /// `size` zeroed bytes aligned to 8.
    pub(crate) fn alloc(&mut self, size: usize) -> usize {
        let l = Layout::from_size_align(size.max(1), 8).expect("small layout");
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(l) };
        if p.is_null() {
            std::alloc::handle_alloc_error(l);
        }
        self.blocks.push((p as usize, l));
        p as usize
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for &(p, l) in &self.blocks {
            // SAFETY: allocated by `Arena::alloc` with this layout, freed once.
            unsafe { std::alloc::dealloc(p as *mut u8, l) };
        }
    }
}
