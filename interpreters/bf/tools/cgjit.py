#!/usr/bin/env python3
"""Where a run's compiled code spends its instructions, by trace, by IR op and by instruction.

callgrind counts the instructions of compiled code but cannot name them; the JIT's perf map
(`METAJIT_LOG=perfmap`, `/tmp/perf-PID.map`) says which trace each address range is, and the
`asm` log lists each trace's code under its IR lines. This joins the three:

    METAJIT_LOG=asm,perfmap valgrind --tool=callgrind --smc-check=all --dump-instr=yes \\
        --callgrind-out-file=cg.out target/release/bf programs/primes.bf >/dev/null 2>asm.log
    python3 tools/cgjit.py cg.out /tmp/perf-PID.map asm.log            # the tables
    python3 tools/cgjit.py cg.out /tmp/perf-PID.map asm.log --trace 3  # trace 3's listing

(PID is the one valgrind prints in asm.log as `==PID==`.) The tables: instructions per trace,
per IR opcode (`exits` is the out-of-line guard stubs, `entry` the code before the first op)
and per mnemonic; the listing puts each instruction's count in front of it.
"""

import bisect
import collections
import re
import sys


def read_map(path):
    """(start, size, name) of every trace in a perf map, sorted by address."""
    ranges = []
    with open(path) as f:
        for line in f:
            addr, size, name = line.split(" ", 2)
            ranges.append((int(addr, 16), int(size, 16), name.split()[0]))
    ranges.sort()
    return ranges


def read_counts(path, ranges):
    """Self instruction counts per address inside the traces' ranges."""
    starts = [r[0] for r in ranges]
    counts = collections.Counter()
    pos, skip = 0, False
    with open(path) as f:
        for line in f:
            if line.startswith("calls="):
                skip = True  # the next cost line is a call's inclusive cost
                continue
            if not (line[0].isdigit() or line[0] in "+-*"):
                continue
            parts = line.split()
            p = parts[0]
            if p.startswith("0x"):
                pos = int(p, 16)
            elif p[0] in "+-":
                d = int(p[1:], 16) if p[1:].startswith("0x") else int(p[1:])
                pos += d if p[0] == "+" else -d
            elif p != "*":
                pos = int(p)
            if skip:
                skip = False
                continue
            if len(parts) < 3:
                continue
            i = bisect.bisect_right(starts, pos) - 1
            if i >= 0 and pos < ranges[i][0] + ranges[i][1]:
                counts[pos] += int(parts[2])
    return counts


def walk(log_path, bases):
    """Yields (trace key, IR op or section, line, address or None) for every listing line."""
    key = base = None
    section = "?"
    with open(log_path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"\{jit-asm trace (\d+): (\w+)", line)
            if m:
                kind = "bridge" if m.group(2) == "bridge" else "loop"
                key = kind + m.group(1)
                base = bases.get(key)
                section = "entry"
                yield key, section, line, None
                continue
            if line.startswith("jit-asm}"):
                key = base = None
                continue
            if base is None:
                continue
            if line.startswith("; exit") or line.startswith("; epilogue"):
                section = "exits"
            elif line.startswith("; ") and not line.startswith("; trace"):
                m = re.match(r"; (?:\w+ = )?(\w+)\(", line)
                section = m.group(1) if m else line[2:]
            m = re.match(r"\s+([0-9a-f]+)\s\s(\S+)", line)
            yield key, section, line, (base + int(m.group(1), 16)) if m else None


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    ranges = read_map(argv[1])
    counts = read_counts(argv[0], ranges)
    bases = {name: start for start, _, name in ranges}
    if len(argv) == 5 and argv[3] == "--trace":
        want = argv[4]
        for key, _, line, addr in walk(argv[2], bases):
            if key and key[len(key.rstrip("0123456789")):] == want:
                print("%12s %s" % (counts.get(addr, "") if addr else "", line))
        return
    total = sum(counts.values())
    by_trace = collections.Counter()
    for start, size, name in ranges:
        by_trace[name] = sum(v for a, v in counts.items() if start <= a < start + size)
    print("compiled code: %d instructions" % total)
    for name, v in by_trace.most_common(12):
        print("%14d %5.1f%%  %s" % (v, 100 * v / max(total, 1), name))
    if len(argv) < 3:
        return
    by_op, by_mnemonic = collections.Counter(), collections.Counter()
    for _, section, line, addr in walk(argv[2], bases):
        if addr is not None:
            c = counts.get(addr, 0)
            by_op[section] += c
            by_mnemonic[line.split()[1]] += c
    for title, table in (("by IR op", by_op), ("by instruction", by_mnemonic)):
        print(title)
        for k, v in table.most_common(15):
            print("%14d %5.1f%%  %s" % (v, 100 * v / max(total, 1), k))


if __name__ == "__main__":
    main(sys.argv[1:])
