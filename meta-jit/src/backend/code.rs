//! Executable memory. Each compiled trace gets its own mapping, so its address never moves
//! (an assembler that grows would move code other traces jump into) and freeing a trace unmaps
//! exactly its code. A mapping is written while it is read-write and only then turned
//! read-execute: no page is ever writable and executable at once (W^X). Nothing writes to code
//! after that; what changes at run time (bridge addresses, the invalidation flag) lives in a
//! separate data block.
//!
//! It knows bytes and addresses, nothing of traces.

use dynasmrt::mmap::{ExecutableBuffer, MutableBuffer};
use dynasmrt::AssemblyOffset;

/// One trace's machine code, mapped read-execute.
pub(crate) struct CodeMemory {
    buf: ExecutableBuffer,
}

impl CodeMemory {
    /// Maps `code` read-execute (written while the mapping is read-write, then protected).
    pub fn new(code: &[u8]) -> std::io::Result<CodeMemory> {
        let page = 4096;
        let size = code.len().div_ceil(page).max(1) * page;
        let mut m = MutableBuffer::new(size)?;
        m.set_len(code.len());
        m.copy_from_slice(code);
        Ok(CodeMemory {
            buf: m.make_exec()?,
        })
    }

    /// The address of the first byte.
    pub fn addr(&self) -> usize {
        self.buf.ptr(AssemblyOffset(0)) as usize
    }

    /// The bytes mapped (whole pages).
    pub fn mapped_len(&self) -> usize {
        self.buf.len().div_ceil(4096).max(1) * 4096
    }

    /// The code bytes (readable for the disassembler).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
}
