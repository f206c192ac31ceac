//! Objects an interpreter allocates in traced code: the [`Gc`] pointer and the heap it points
//! into.
//!
//! `Gc::new(Obj { .. })` is the allocation the codewriter can see: in an annotated function
//! it lowers to a jitcode `new` with `Obj`'s size descriptor followed by one store per field,
//! the tracer records it as the trace IR's `new`, and the optimizer removes it when the object
//! does not escape the trace (see the book's chapter "Objects, allocation removal and
//! memory").
//!
//! Memory: every object of this heap comes from the thread's bump-pointer nursery or the
//! global allocator through one allocation function (the native `Gc::new`, the jitcode runner,
//! the tracer, compiled code, whose fast path is inline, and resume when it rebuilds a virtual
//! object), and is never freed: a `Gc<T>` is valid for the rest of the program, so no safe
//! code can use one after it is freed. A collector that frees unreachable objects is the next step (the book's
//! chapter says what is decided and what is not); until then a guest program that allocates
//! without bound grows without bound.
//!
//! Owns: the `Gc` type and the one allocation function of interpreter objects. Must not know:
//! jitcode, traces or any guest language.

use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// Allocates a zeroed object of `size` bytes aligned to `align` (a power of two) in the heap
/// of interpreter objects and returns its address. Every allocator of the pipeline calls this.
pub fn alloc_object(size: usize, align: usize) -> usize {
    crate::alloc::alloc_zeroed(size, align)
}

/// A pointer to an interpreter object of type `T` in the framework's heap: `Copy`, one word,
/// never null, valid for the rest of the program. Read the object through `Deref`; mutate it
/// only through cells inside it (traced code reads its fields; build a new object to change
/// one).
///
/// In traced code, `Gc::new(T { f: e, .. })` with a struct literal is an allocation the JIT
/// sees (`T` needs `#[derive(JitLayout)]`); `g.f` reads a field like through a reference.
pub struct Gc<T: 'static> {
    ptr: NonNull<T>,
    _owns: PhantomData<&'static T>,
}

impl<T: 'static> Gc<T> {
    /// Moves `value` into a new object of the heap.
    pub fn new(value: T) -> Gc<T> {
        let layout = std::alloc::Layout::new::<T>();
        // Never recorded by an allocation tracker (which frees what it records).
        let addr = crate::alloc::alloc_untracked(layout.size(), layout.align());
        let ptr = NonNull::new(addr as *mut T).expect("the allocator never returns null");
        // SAFETY: `addr` is a fresh allocation with `T`'s size and alignment, owned by nobody
        // else; writing moves `value` in.
        unsafe { ptr.as_ptr().write(value) };
        Gc {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Whether `a` and `b` point to the same object.
    pub fn ptr_eq(a: Gc<T>, b: Gc<T>) -> bool {
        a.ptr == b.ptr
    }

    /// The object's address.
    pub fn as_ptr(self) -> *const T {
        self.ptr.as_ptr()
    }

    /// A `Gc` from the address of an object of this heap.
    ///
    /// # Safety
    /// `addr` is the address of a live `T` allocated by [`alloc_object`] and initialized (by
    /// [`Gc::new`], by traced code or by the JIT).
    pub unsafe fn from_addr(addr: usize) -> Gc<T> {
        Gc {
            ptr: NonNull::new(addr as *mut T).expect("a Gc is never null"),
            _owns: PhantomData,
        }
    }
}

impl<T: 'static> Clone for Gc<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: 'static> Copy for Gc<T> {}

impl<T: 'static> std::ops::Deref for Gc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: objects of this heap are initialized when a `Gc` to them exists and are
        // never freed; only shared references are handed out.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: fmt::Debug + 'static> fmt::Debug for Gc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
