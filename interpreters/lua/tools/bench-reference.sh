#!/bin/sh
# Times every benchmark of bench/ at its default size with the reference implementations
# (lua5.4 and luajit, when installed): best of RUNS runs (default 3), wall-clock seconds, as a
# Markdown table, with the first line of each program's output (its checksum) and whether the
# two implementations printed the same output.
# Usage: tools/bench-reference.sh [RUNS [PROGRAM...]]   (PROGRAM: a name without .lua)
set -eu
RUNS=${1:-3}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here/bench"
best() { # best wall time of $RUNS runs of "$@", or n/a when it fails
    b=
    i=0
    while [ $i -lt "$RUNS" ]; do
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo n/a; return; }
        t=$(echo "$(date +%s.%N) - $s" | bc)
        if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
        i=$((i + 1))
    done
    printf '%.2f\n' "$b"
}
echo "| program | lua5.4 (s) | luajit (s) | same output | checksum (first line) |"
echo "|---|---:|---:|:---:|---|"
progs=$(ls *.lua)
[ $# -gt 0 ] && progs=$(for p in "$@"; do echo "$p.lua"; done)
for f in $progs; do
    l=$(best lua5.4 "$f")
    j=n/a
    same=-
    if command -v luajit >/dev/null; then
        j=$(best luajit "$f")
        if [ "$j" != n/a ]; then
            [ "$(lua5.4 "$f")" = "$(luajit "$f")" ] && same=yes || same=no
        fi
    fi
    echo "| ${f%.lua} | $l | $j | $same | \`$(lua5.4 "$f" | head -n 1)\` |"
done
