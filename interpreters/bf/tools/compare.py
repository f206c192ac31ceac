#!/usr/bin/env python3
"""CPU time of two or more builds of `bf` on the bench programs, side by side in one run.

    python3 tools/compare.py [--runs N] [--gcc] BIN [BIN...] [-- NAME...]

Runs every program of `programs/` (or the NAMEs) with each BIN (a path, or a path with
arguments in quotes: `"target/release/bf --no-jit"`), the runs of the builds interleaved so
that a busy machine slows them alike, each a fresh process with empty stdin, its output
checked against the `.out` file. Prints the best user+system CPU time of each, in
milliseconds, and the ratios to the first build. With `--gcc`, the program translated to C
(runs of `+-<>` folded, as the interpreter's parser and the bench do) and compiled with
`gcc -O2` is one more column.

To compare before and after a change: copy `target/release/bf` aside before it, rebuild, and
give both.
"""

import os
import resource
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "programs")


def to_c(src):
    """The program as C, runs of `+-` and `<>` folded."""
    src = "".join(c for c in src if c in "+-<>[].,")
    out = ["#include <stdio.h>", "#include <stdlib.h>", "int main(void) {",
           "unsigned char *p = calloc(1 << 26, 1); if (!p) return 2;"]
    i = 0
    while i < len(src):
        c = src[i]
        if c in "+-<>":
            pair = "+-" if c in "+-" else "><"
            n = 0
            while i < len(src) and src[i] in pair:
                n += 1 if src[i] == pair[0] else -1
                i += 1
            out.append(("*p += %d;" if pair == "+-" else "p += %d;") % n)
            continue
        out.append({"[": "while (*p) {", "]": "}", ".": "putchar(*p);",
                    ",": "{ int c = getchar(); *p = c == EOF ? 0 : c; }"}[c])
        i += 1
    out.append("return 0; }")
    return "\n".join(out)


def cpu_ms(cmd):
    """Runs `cmd`; its CPU time in milliseconds and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return t * 1000, out


def main(argv):
    runs, gcc, bins, names = 5, False, [], []
    it = iter(argv)
    for a in it:
        if a == "--runs":
            runs = int(next(it))
        elif a == "--gcc":
            gcc = True
        elif a == "--":
            names = list(it)
        elif a in ("-h", "--help"):
            sys.exit(__doc__)
        else:
            bins.append(shlex.split(a))
    if not bins:
        sys.exit(__doc__)
    if not names:
        names = sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".bf"))
    cols = [" ".join(b) for b in bins] + (["gcc -O2"] if gcc else [])
    print("| program | " + " | ".join(cols) + " | " +
          " | ".join("%s / %s" % (c, cols[0]) for c in cols[1:]) + " |")
    print("|---" * (1 + 2 * len(cols) - 1) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(PROGRAMS, name + ".bf")
            want = open(os.path.join(PROGRAMS, name + ".out"), "rb").read()
            cmds = [b + [path] for b in bins]
            if gcc:
                c, exe = os.path.join(tmp, name + ".c"), os.path.join(tmp, name)
                with open(c, "w") as f:
                    f.write(to_c(open(path).read()))
                subprocess.run(["gcc", "-O2", "-o", exe, c], check=True)
                cmds.append([exe])
            best = [float("inf")] * len(cmds)
            for _ in range(runs):
                for k, cmd in enumerate(cmds):
                    t, out = cpu_ms(cmd)
                    if out != want:
                        sys.exit("%s: wrong output from %s" % (name, " ".join(cmd)))
                    best[k] = min(best[k], t)
            print("| %s | " % name + " | ".join("%.1f" % t for t in best) + " | " +
                  " | ".join("%.2f" % (t / best[0]) for t in best[1:]) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
