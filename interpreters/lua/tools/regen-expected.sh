#!/bin/sh
# Regenerates tests/expected/ from PUC Lua 5.4 for every program of tests/conformance/.
#
# For NAME.lua (files named mod_*.lua are modules that programs require, not programs):
#   expected/NAME.out  the program's stdout, byte for byte;
#   expected/NAME.err  only when the program exits non-zero or writes to stderr, three lines:
#                        status N
#                        stderr FIRST-LINE-OF-STDERR   (the `lua5.4:` prefix written `lua:`)
#                        traceback yes|no              (whether stderr has `stack traceback:`)
# Programs run from tests/conformance/ as `lua5.4 NAME.lua`, so chunk names are `NAME.lua`
# and `require` finds the modules beside them; stdin is NAME.in when it exists, else empty.
#
# Usage: tools/regen-expected.sh [LUA]   (LUA defaults to lua5.4; `apt-get install lua5.4`)
# Tests never run this: they compare with the committed files.
set -eu
LUA=${1:-lua5.4}
here=$(cd "$(dirname "$0")/.." && pwd)
conf="$here/tests/conformance"
exp="$here/tests/expected"
command -v "$LUA" >/dev/null || { echo "regen-expected: $LUA not found" >&2; exit 2; }
"$LUA" -v 2>&1 | grep -q '^Lua 5\.4' || { echo "regen-expected: $LUA is not Lua 5.4" >&2; exit 2; }
mkdir -p "$exp"
rm -f "$exp"/*.out "$exp"/*.err
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0; failing=0
cd "$conf"
for f in *.lua; do
    case "$f" in mod_*) continue ;; esac
    name=${f%.lua}
    input=/dev/null
    [ -f "$name.in" ] && input="$name.in"
    set +e
    timeout 20 "$LUA" "$f" <"$input" >"$exp/$name.out" 2>"$tmp/stderr"
    status=$?
    set -e
    if [ "$status" = 124 ]; then echo "regen-expected: $f timed out" >&2; exit 1; fi
    if [ "$status" != 0 ] || [ -s "$tmp/stderr" ]; then
        first=$(head -n 1 "$tmp/stderr" | sed 's/^lua5\.4: /lua: /; s/^lua: /lua: /')
        tb=no
        grep -q '^stack traceback:' "$tmp/stderr" && tb=yes
        printf 'status %s\nstderr %s\ntraceback %s\n' "$status" "$first" "$tb" >"$exp/$name.err"
        failing=$((failing + 1))
    fi
    n=$((n + 1))
done
echo "regen-expected: $n programs, $failing with an .err file, written to $exp"
# The fuzz test's inputs include mutations of these programs: its expected verdicts follow them.
"$here/tools/regen-fuzz-expected.sh" "$LUA"
