//! Executable memory. Traces share it: an arena of chunks, each a mapping of 256 KiB (or more
//! for a larger trace) that gets traces one after another, 16-byte aligned. A trace's address
//! never moves (an assembler that grows would move code other traces jump into). A chunk is
//! unmapped when every trace in it is freed; the room of a freed trace is not reused before.
//!
//! W^X: the pages a new trace is written to are made read-write, written, and made read-execute
//! again; no page is ever writable and executable at once. The last page of the previous trace
//! may be one of them, so its code is not executable for that moment: the backend writes code
//! only while none of its code executes. Code may wait in a call meanwhile (the portal run
//! again from compiled code compiles a trace), but it is suspended on this thread and its page
//! is executable again before the call returns; a chunk is not unmapped while a run of the
//! backend waits (see `Backend::enter`). Pages of a chunk not written yet are not accessible
//! at all. Nothing writes to code
//! after that; what changes at run time (bridge addresses, the invalidation flag) lives in a
//! separate data block.
//!
//! It knows bytes and addresses, nothing of traces.

use std::io;

/// Bytes of a chunk (a trace larger than this gets a chunk of its own size).
const CHUNK: usize = 256 * 1024;
const PAGE: usize = 4096;

/// Where one trace's code is: a handle into the [`CodeArena`] it was placed in.
#[derive(Debug)]
pub(crate) struct CodeMemory {
    chunk: usize,
    addr: usize,
    len: usize,
}

impl CodeMemory {
    /// The address of the first byte.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// The number of code bytes.
    pub fn len(&self) -> usize {
        self.len
    }
}

struct Chunk {
    base: usize,
    size: usize,
    /// Bytes placed so far (freed traces included).
    used: usize,
    /// Traces placed here and not freed.
    live: u32,
}

/// The executable memory of one backend.
#[derive(Default)]
pub(crate) struct CodeArena {
    chunks: Vec<Option<Chunk>>,
    /// The chunk new code goes to.
    current: Option<usize>,
}

impl CodeArena {
    /// Places `code` in executable memory (as it is: see [`CodeArena::place_with`]).
    #[cfg(test)]
    pub fn place(&mut self, code: &[u8]) -> io::Result<CodeMemory> {
        self.place_with(&mut code.to_vec(), |_, _| {})
    }

    /// Places `code` in executable memory after `patch` has been given the address it goes to
    /// and the bytes, to fix what depends on the address (jumps relative to it).
    pub fn place_with(
        &mut self,
        code: &mut [u8],
        patch: impl FnOnce(usize, &mut [u8]),
    ) -> io::Result<CodeMemory> {
        let len = code.len().max(1);
        let fits = |c: &Chunk| c.used.next_multiple_of(16) + len <= c.size;
        let k = match self.current {
            Some(k) if self.chunks[k].as_ref().is_some_and(fits) => k,
            _ => {
                let size = len.next_multiple_of(PAGE).max(CHUNK);
                let base = map(size)?;
                self.retire_current();
                self.chunks.push(Some(Chunk {
                    base,
                    size,
                    used: 0,
                    live: 0,
                }));
                self.chunks.len() - 1
            }
        };
        self.current = Some(k);
        let c = self.chunks[k]
            .as_mut()
            .expect("the current chunk is mapped");
        let at = c.used.next_multiple_of(16);
        let first = (at / PAGE) * PAGE;
        let end = (at + len).next_multiple_of(PAGE);
        let pages = c.base + first;
        patch(c.base + at, code);
        protect(pages, end - first, libc::PROT_READ | libc::PROT_WRITE)?;
        // SAFETY: `[base + at, base + at + code.len())` lies in this chunk's mapping (checked
        // by `fits`), whose pages there were just made writable; no other reference to them
        // exists (the arena hands out addresses, not slices, and no code runs while it writes).
        unsafe {
            std::ptr::copy_nonoverlapping(code.as_ptr(), (c.base + at) as *mut u8, code.len());
        }
        if let Err(e) = protect(pages, end - first, libc::PROT_READ | libc::PROT_EXEC) {
            // The code of earlier traces on these pages cannot run any more: nothing sound is
            // left to do.
            eprintln!("meta-jit: cannot make code executable again: {e}");
            std::process::abort();
        }
        c.used = at + len;
        c.live += 1;
        Ok(CodeMemory {
            chunk: k,
            addr: c.base + at,
            len: code.len(),
        })
    }

    /// The code bytes of a placed trace (readable for the disassembler).
    pub fn bytes(&self, m: &CodeMemory) -> &[u8] {
        debug_assert!(self.chunks[m.chunk].is_some(), "the trace is freed");
        // SAFETY: the bytes were written by `place` into a mapping that stays mapped while a
        // trace placed in it is live (`m` is one), readable (read-execute) and never written
        // again.
        unsafe { std::slice::from_raw_parts(m.addr as *const u8, m.len) }
    }

    /// Frees a trace's code: its chunk is unmapped once all its traces are freed and no more
    /// go to it.
    pub fn free(&mut self, m: CodeMemory) {
        let c = self.chunks[m.chunk]
            .as_mut()
            .expect("a trace is freed once");
        c.live -= 1;
        if c.live == 0 && self.current != Some(m.chunk) {
            self.unmap(m.chunk);
        }
    }

    /// Bytes of the live chunks taken by code so far (freed traces in them included).
    pub fn used(&self) -> usize {
        self.chunks.iter().flatten().map(|c| c.used).sum()
    }

    /// Bytes mapped for the live chunks.
    #[cfg(test)]
    pub fn mapped(&self) -> usize {
        self.chunks.iter().flatten().map(|c| c.size).sum()
    }

    fn retire_current(&mut self) {
        if let Some(k) = self.current.take() {
            if self.chunks[k].as_ref().is_some_and(|c| c.live == 0) {
                self.unmap(k);
            }
        }
    }

    fn unmap(&mut self, k: usize) {
        let c = self.chunks[k].take().expect("mapped");
        // SAFETY: `base` and `size` are a mapping `map` made; no live trace is in it, so no
        // code there can run or be jumped to any more.
        unsafe { libc::munmap(c.base as *mut libc::c_void, c.size) };
    }
}

impl Drop for CodeArena {
    fn drop(&mut self) {
        for k in 0..self.chunks.len() {
            if self.chunks[k].is_some() {
                self.unmap(k);
            }
        }
    }
}

/// Maps `size` bytes, inaccessible until code is placed there.
fn map(size: usize) -> io::Result<usize> {
    // SAFETY: an anonymous private mapping at an address the kernel chooses touches no
    // existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as usize)
}

/// Sets the protection of whole pages of a chunk.
fn protect(addr: usize, len: usize, prot: libc::c_int) -> io::Result<()> {
    // SAFETY: the pages lie in a live chunk of this arena (callers pass page-aligned ranges
    // inside one); changing their protection touches no Rust reference (the arena never lends
    // slices of code while it writes).
    let r = unsafe { libc::mprotect(addr as *mut libc::c_void, len, prot) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Traces share pages: a hundred small ones fit in one chunk, each where it was put, and
    /// the chunk goes when the last of them is freed.
    #[test]
    fn small_traces_share_a_chunk() {
        let mut a = CodeArena::default();
        let placed: Vec<CodeMemory> = (0..100u8)
            .map(|k| a.place(&[0xc3, k, k, k, k]).unwrap())
            .collect();
        assert_eq!(a.mapped(), CHUNK);
        assert!(a.used() <= 100 * 16);
        for (k, m) in placed.iter().enumerate() {
            assert_eq!(m.addr() % 16, 0);
            assert_eq!(a.bytes(m), &[0xc3, k as u8, k as u8, k as u8, k as u8]);
        }
        // A large trace gets a chunk of its own; the first chunk stays while it has traces.
        let big = a.place(&vec![0x90; CHUNK + 1]).unwrap();
        assert_eq!(a.mapped(), CHUNK + (CHUNK + 1).next_multiple_of(PAGE));
        for m in placed {
            a.free(m);
        }
        assert_eq!(a.mapped(), (CHUNK + 1).next_multiple_of(PAGE));
        a.free(big);
        // The current chunk stays mapped (more code goes there) until another replaces it.
        assert_eq!(a.mapped(), (CHUNK + 1).next_multiple_of(PAGE));
        let m = a.place(&[0xc3]).unwrap();
        assert_eq!(a.bytes(&m), &[0xc3]);
    }

    /// Placed code runs: a function that returns its argument plus a constant, placed after
    /// others on the same page.
    #[test]
    fn placed_code_runs() {
        let mut a = CodeArena::default();
        let _before = a.place(&[0xcc; 100]).unwrap();
        // lea rax, [rdi + 7]; ret
        let m = a.place(&[0x48, 0x8d, 0x47, 0x07, 0xc3]).unwrap();
        // SAFETY: the bytes are a complete System V function of that signature.
        let f: extern "C" fn(u64) -> u64 = unsafe { std::mem::transmute(m.addr()) };
        assert_eq!(f(35), 42);
    }
}
