//! The codewriter of meta-jit: proc macros that lower annotated interpreter functions into code
//! that builds jitcode, and the hint macros themselves. See the book's "Hint reference".
