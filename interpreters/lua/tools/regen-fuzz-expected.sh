#!/bin/sh
# Records PUC Lua 5.4's verdicts on the inputs of the lexer and parser fuzz test
# (tests/no_panic.rs, default seed and count): tests/expected/fuzz/batch_B.out holds, for each
# input of batch B, whether `load` compiles it and its error message, as lua5.4 prints them.
# Regenerate after changing tests/fuzz/mod.rs or the conformance corpus (mutations start from it).
# Usage: tools/regen-fuzz-expected.sh [LUA]   (needs rustc and lua5.4)
set -eu
LUA=${1:-lua5.4}
SEED=7
CASES=3000
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rustc --edition 2021 -O -o "$work/fuzz_dump" "$here/tools/fuzz_dump.rs"
"$work/fuzz_dump" "$here/tests/conformance" "$work/in" "$SEED" "$CASES"
out="$here/tests/expected/fuzz"
mkdir -p "$out"
rm -f "$out"/batch_*.out
n=0
for f in "$work"/in/batch_*.in; do
    b=$(basename "$f" .in)
    "$LUA" "$work/in/driver.lua" <"$f" >"$out/$b.out"
    n=$((n + 1))
done
echo "regen-fuzz-expected: $n batches ($CASES inputs, seed $SEED) written to $out"
