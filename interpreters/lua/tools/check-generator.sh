#!/bin/sh
# Validates the random program generator (tests/gen/mod.rs) against PUC Lua 5.4: every generated
# program must run without any error (every unit's pcall reports true, exit status 0, empty
# stderr) and quickly, and give the same output twice.
#
# Usage: tools/check-generator.sh [UNITS [FIRST_SEED [BATCH]]]   (defaults: 2000 1 10)
# Needs rustc and lua5.4. Prints the figures: programs, units, failures, total and slowest time.
set -eu
UNITS=${1:-2000}
SEED=${2:-1}
BATCH=${3:-10}
LUA=${LUA:-lua5.4}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rustc --edition 2021 -O -o "$work/gen_dump" "$here/tools/gen_dump.rs"
"$work/gen_dump" "$work/progs" "$SEED" "$UNITS" "$BATCH"
cd "$work/progs"
n=0; bad=0; slowest=0; slowname=
start=$(date +%s.%N)
for f in gen_*.lua; do
    n=$((n + 1))
    t0=$(date +%s.%N)
    set +e
    timeout 10 "$LUA" "$f" >"$work/out" 2>"$work/err"
    status=$?
    set -e
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ "$(echo "$t > $slowest" | bc)" = 1 ]; then slowest=$t; slowname=$f; fi
    units_ok=$(grep -c '^unit [0-9]* seed [0-9]*	true	' "$work/out" || true)
    units_all=$(grep -c '^unit ' "$work/out" || true)
    if [ "$status" != 0 ] || [ -s "$work/err" ] || [ "$units_ok" != "$units_all" ] || [ "$units_all" = 0 ]; then
        bad=$((bad + 1))
        echo "FAIL $f: status $status, $units_ok of $units_all units ok; $(head -c 300 "$work/err")"
        grep -v '	true	' "$work/out" | grep '^unit' | head -3
        cp "$f" "/tmp/check-generator-$f"
        echo "  kept as /tmp/check-generator-$f"
        continue
    fi
    "$LUA" "$f" 2>&1 | cmp -s - "$work/out" || { bad=$((bad + 1)); echo "FAIL $f: output differs between two runs"; }
done
total=$(echo "$(date +%s.%N) - $start" | bc)
echo "check-generator: $n programs ($UNITS units from seed $SEED, $BATCH per program), $bad failing; $total s in total (each program run twice); slowest $slowname $slowest s"
[ "$bad" = 0 ]
