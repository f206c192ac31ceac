#!/usr/bin/env python3
"""The oracle: a small Brainfuck interpreter in Python, independent of the Rust one.

It gives the expected outputs (`programs/*.out`). Semantics, the same as `bf`'s: cells are
bytes that wrap; the tape starts with 30,000 cells and grows to the right; moving left of
cell 0 is an error; `,` at the end of input stores 0; bytes other than the eight commands are
comments.

Two engines:
- `plain`: one command at a time with precomputed jumps. Slow, obviously right.
- `fast` (the default): runs of `+-<>` folded, and three loop idioms run as one step each:
  clear `[-]`/`[+]`, multiply loops (a body of `+-<>` only, with net pointer move 0 and the
  loop cell changed by -1 or +1 per pass), and scans (`[>]`, `[<<]`, ...). `--check` runs a
  program on both engines and compares output and final tape.

Usage: bfi.py [--plain | --check] FILE < input > output
"""

import sys

INITIAL_CELLS = 30_000


class BfError(Exception):
    """The program stopped with an error (pointer left of cell 0, bad brackets)."""


def match_brackets(code):
    """Maps each bracket's index to its partner's; raises BfError when unbalanced."""
    jumps, stack = {}, []
    for i, c in enumerate(code):
        if c == "[":
            stack.append(i)
        elif c == "]":
            if not stack:
                raise BfError(f"unmatched ] at command {i}")
            j = stack.pop()
            jumps[i], jumps[j] = j, i
    if stack:
        raise BfError(f"unmatched [ at command {stack[-1]}")
    return jumps


def commands(src):
    """The eight commands of a source (bytes or str), as a str."""
    if isinstance(src, bytes):
        src = src.decode("latin-1")
    return "".join(c for c in src if c in "+-<>[].,")


def run_plain(src, inp=b""):
    """Runs one command at a time. Returns (output bytes, tape)."""
    code = commands(src)
    jumps = match_brackets(code)
    tape = bytearray(INITIAL_CELLS)
    out = bytearray()
    p = pc = k = 0
    n = len(code)
    while pc < n:
        c = code[pc]
        if c == "+":
            tape[p] = (tape[p] + 1) & 255
        elif c == "-":
            tape[p] = (tape[p] - 1) & 255
        elif c == ">":
            p += 1
            if p >= len(tape):
                tape.extend(bytearray(len(tape)))
        elif c == "<":
            p -= 1
            if p < 0:
                raise BfError(f"pointer left of cell 0 at command {pc}")
        elif c == ".":
            out.append(tape[p])
        elif c == ",":
            if k < len(inp):
                tape[p] = inp[k]
                k += 1
            else:
                tape[p] = 0
        elif c == "[":
            if tape[p] == 0:
                pc = jumps[pc]
        elif c == "]":
            if tape[p] != 0:
                pc = jumps[pc]
        pc += 1
    return bytes(out), tape


# Op codes of the fast engine.
ADD, SEEK, OUT, IN, OPEN, CLOSE, CLEAR, MUL, SCAN = range(9)


def compile_fast(src):
    """Source to a list of ops [code, arg, ...] with folded runs and loop idioms."""
    code = commands(src)
    match_brackets(code)  # reports unbalanced brackets with a command index
    ops, stack = [], []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c in "+-":
            d = 0
            while i < n and code[i] in "+-":
                d += 1 if code[i] == "+" else -1
                i += 1
            if d % 256:
                ops.append([ADD, d % 256])
            continue
        if c in "<>":
            d = 0
            while i < n and code[i] in "<>":
                d += 1 if code[i] == ">" else -1
                i += 1
            if d:
                ops.append([SEEK, d])
            continue
        if c == ".":
            ops.append([OUT])
        elif c == ",":
            ops.append([IN])
        elif c == "[":
            stack.append(len(ops))
            ops.append([OPEN, None])
        elif c == "]":
            start = stack.pop()
            idiom = loop_idiom(ops[start + 1 :])
            if idiom is not None:
                del ops[start:]
                ops.append(idiom)
            else:
                ops[start][1] = len(ops)
                ops.append([CLOSE, start])
        i += 1
    return ops


def loop_idiom(body):
    """The single op a loop with this (already compiled) body amounts to, or None."""
    if len(body) == 1 and body[0][0] == SEEK:
        return [SCAN, body[0][1]]
    if not all(op[0] in (ADD, SEEK) for op in body):
        return None
    deltas, off = {}, 0
    for op in body:
        if op[0] == ADD:
            deltas[off] = (deltas.get(off, 0) + op[1]) % 256
        else:
            off += op[1]
    if off != 0 or deltas.get(0) not in (1, 255):
        return None
    step = deltas.pop(0)
    if not deltas:
        return [CLEAR]
    # Every cell the body passes over, for the left-of-cell-0 check.
    lowest, o = 0, 0
    for op in body:
        if op[0] == SEEK:
            o += op[1]
            lowest = min(lowest, o)
    highest = max([0] + [o for o in deltas])
    o = 0
    for op in body:
        if op[0] == SEEK:
            o += op[1]
            highest = max(highest, o)
    return [MUL, step, sorted((o, f) for o, f in deltas.items() if f), lowest, highest]


def run_fast(src, inp=b""):
    """Runs the compiled ops. Returns (output bytes, tape)."""
    ops = compile_fast(src)
    tape = bytearray(INITIAL_CELLS)
    out = bytearray()
    p = pc = k = 0
    n = len(ops)

    def grow(at):
        while at >= len(tape):
            tape.extend(bytearray(len(tape)))

    while pc < n:
        op = ops[pc]
        code = op[0]
        if code == ADD:
            tape[p] = (tape[p] + op[1]) & 255
        elif code == SEEK:
            p += op[1]
            if p < 0:
                raise BfError(f"pointer left of cell 0 at op {pc}")
            if p >= len(tape):
                grow(p)
        elif code == OPEN:
            if tape[p] == 0:
                pc = op[1]
        elif code == CLOSE:
            if tape[p] != 0:
                pc = op[1]
        elif code == CLEAR:
            tape[p] = 0
        elif code == MUL:
            v = tape[p]
            if v:
                count = v if op[1] == 255 else 256 - v
                if p + op[3] < 0:
                    raise BfError(f"pointer left of cell 0 at op {pc}")
                grow(p + op[4])
                for o, f in op[2]:
                    tape[p + o] = (tape[p + o] + count * f) & 255
                tape[p] = 0
        elif code == SCAN:
            d = op[1]
            if d == 1:
                while True:
                    j = tape.find(0, p)
                    if j >= 0:
                        p = j
                        break
                    p = len(tape)
                    grow(p)
            else:
                while tape[p]:
                    p += d
                    if p < 0:
                        raise BfError(f"pointer left of cell 0 at op {pc}")
                    if p >= len(tape):
                        grow(p)
        elif code == OUT:
            out.append(tape[p])
        elif code == IN:
            if k < len(inp):
                tape[p] = inp[k]
                k += 1
            else:
                tape[p] = 0
        pc += 1
    return bytes(out), tape


def run(src, inp=b"", engine="fast"):
    """Output of a program on this input."""
    return (run_fast if engine == "fast" else run_plain)(src, inp)[0]


def check(src, inp=b""):
    """Runs on both engines; raises AssertionError when output or tape differ."""
    a_out, a_tape = run_plain(src, inp)
    b_out, b_tape = run_fast(src, inp)
    assert a_out == b_out, "outputs differ between the plain and the fast engine"
    m = max(len(a_tape), len(b_tape))
    assert a_tape.ljust(m, b"\0") == b_tape.ljust(m, b"\0"), "tapes differ"
    return a_out


def main(argv):
    engine = "fast"
    args = [a for a in argv if not a.startswith("--")]
    for a in argv:
        if a == "--plain":
            engine = "plain"
        elif a == "--check":
            engine = "check"
        elif a.startswith("--"):
            sys.exit(f"bfi: unknown option {a}\n{__doc__.splitlines()[-1]}")
    if len(args) != 1:
        sys.exit(__doc__.splitlines()[-1])
    with open(args[0], "rb") as f:
        src = f.read()
    inp = sys.stdin.buffer.read()
    try:
        out = check(src, inp) if engine == "check" else run(src, inp, engine)
    except BfError as e:
        sys.exit(f"bfi: {args[0]}: {e}")
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main(sys.argv[1:])
