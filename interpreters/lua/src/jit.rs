//! JIT wiring: the `--no-jit`, `--jitcode` and `--jit-param` modes. (See the book chapter
//! for what the dispatch loop still waits for before its portal can be traced.)

use crate::Mode;

/// Applies the command line's JIT mode and parameters.
pub fn configure(mode: Mode, params: &[String]) -> Result<(), String> {
    let _ = (mode, params);
    Ok(())
}
