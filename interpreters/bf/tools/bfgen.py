#!/usr/bin/env python3
"""Generates the heavy Brainfuck programs of `programs/` with the macro-assembler (bfasm.py).

Each program has a Python model of the same integer algorithm (`*_model`), so the generated
code can be checked against what it was meant to compute; the expected outputs (`.out`) come
from the oracle interpreter (bfi.py) running the generated code, not from the models.

Usage:
  bfgen.py [--outdir DIR] [--expect] [NAME...]   write NAME.bf (all when none given); with
                                                 --expect also run the oracle to write NAME.out
                                                 and compare it with the model
  bfgen.py --model NAME                          print the model's output
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bfasm import Asm, Dec, Word, print_byte, print_word  # noqa: E402

# ---- mandelbrot ---------------------------------------------------------------------------
#
# Fixed point with scale S (a value v stands for v/S), in 16-bit two's complement words.
# z = x + iy is kept biased: X = x + 128, Y = y + 128, so that a coordinate in [-128, 127]
# is a table index in [0, 255] (X's high byte is 0). Squares come from a table on the tape,
# sq[k] = (k-128)^2 / S rounded to the nearest, and 2xy from (x+y)^2 - x^2 - y^2:
#   x2 = sq[X], y2 = sq[Y]; escape when x2 + y2 > 4S (|z| > 2)
#   x' = x2 - y2 + cx,  y' = sq[X + Y - 128] - x2 - y2 + cy
# An index out of the table's range means |x| or |y| > 2 (or |x + y| > 2.83), so the point has
# escaped too.
#
# The table is an array of 256 elements of EW cells: A, B (the index split into 16 * A + B,
# carried along), L, H (the value carried back), M1, M2 (markers of the way out, followed
# back), DL, DH (the value). A lookup walks 16 elements at a time, then one at a time, copies
# the value and walks back along its markers: unbalanced loops all along.

MANDEL = dict(S=44, W=56, H=33, MAXIT=40, x0=-90, dx=2, y0=48, dy=3)
M_PALETTE = "  ..,,::;;==++**%%&&$$"  # by iterations done before escaping; inside: '@'


def mandel_chars(maxit):
    """The character for each remaining-iteration count r (0 = never escaped)."""
    chars = ["@"]
    for r in range(1, maxit):
        n = maxit - r  # iterations done
        chars.append(M_PALETTE[min(n, len(M_PALETTE) - 1)])
    return chars


def mandelbrot_model(S, W, H, MAXIT, x0, dx, y0, dy):
    sq = [((k - 128) ** 2 + S // 2) // S for k in range(256)]
    c = 255 - 4 * S
    chars = mandel_chars(MAXIT)
    out = []
    for row in range(H):
        cy = y0 - row * dy
        for col in range(W):
            cx = x0 + col * dx
            x, y, it = 128, 128, MAXIT
            while True:
                if x >> 8 or y >> 8:
                    break
                x2, y2 = sq[x], sq[y]
                if (x2 + y2 + c) >> 8:
                    break
                i = (x + y - 128) % 65536
                if i >> 8:
                    break
                x = (cx + 128 + x2 - y2) % 65536
                y = (cy + 128 + sq[i] - x2 - y2) % 65536
                it -= 1
                if it == 0:
                    break
            out.append(chars[it])
        out.append("\n")
    return "".join(out)


def mandelbrot(S, W, H, MAXIT, x0, dx, y0, dy):
    assert 255 - 4 * S >= 0 and W < 256 and H < 256 and MAXIT < 256
    a = Asm(200)
    EW = 8
    TB = 200  # the table's first element
    A, B, L, Hc, M1, M2, DL, DH = (TB + i for i in range(EW))
    BLOCK = 16 * EW
    C = 255 - 4 * S

    a.comment(f"mandelbrot: {W} x {H} characters; fixed point with scale {S}; at most {MAXIT}")
    a.comment("iterations; cells from 200: a table of squares; 256 elements of 8 cells")
    for k in range(256):
        v = ((k - 128) ** 2 + S // 2) // S
        a.set(DL + k * EW, v & 255, known_zero=True)
        a.set(DH + k * EW, v >> 8, known_zero=True)

    def lookup(idx, res):
        """res (zero) = sq[idx]; idx (0..255) is kept."""
        a.comment("square: look up the table")
        with a.temps() as n:
            a.copy(idx, n)
            a.divmod_const(n, 16, A, B)
        with a.walk(A, BLOCK):  # 16 elements at a time
            a.add(A, -1)
            a.move(A, A + BLOCK)
            a.move(B, B + BLOCK)
            a.add(M1 + BLOCK, 1)
        with a.walk(B, EW):  # then one at a time
            a.add(B, -1)
            a.move(B, B + EW)
            a.add(M2 + EW, 1)
        a.move(DL, L, A)
        a.move(A, DL)
        a.move(DH, Hc, A)
        a.move(A, DH)
        with a.walk(M2, -EW):  # back, one at a time
            a.add(M2, -1)
            a.move(L, L - EW)
            a.move(Hc, Hc - EW)
        with a.walk(M1, -BLOCK):  # back, 16 at a time
            a.add(M1, -1)
            a.move(L, L - BLOCK)
            a.move(Hc, Hc - BLOCK)
        a.move(L, res.lo)
        a.move(Hc, res.hi)

    CX, CY, X, Y, X2, Y2, T, I, SQ = (Word(a) for _ in range(9))
    rows, cols, run, e, ok = (a.alloc() for _ in range(5))
    it = a.alloc_testable()

    def escape_if_hi(w, flag):
        a.if_zero_else(w.hi, nonzero=lambda: a.clear(flag))

    def pixel():
        a.comment("pixel: z = 0; iterate")
        X.set(128, known_zero=True)
        Y.set(128, known_zero=True)
        a.set(it, MAXIT, known_zero=True)
        a.set(run, 1, known_zero=True)
        with a.loop(run):
            a.set(e, 1, known_zero=True)
            a.set(ok, 1, known_zero=True)
            escape_if_hi(X, ok)
            escape_if_hi(Y, ok)
            with a.if_nz(ok):
                lookup(X.lo, X2)
                lookup(Y.lo, Y2)
                a.comment("escaped if x2 + y2 > 4")
                X2.copy_to(T)
                T.add_word(Y2)
                T.add_const(C)
                a.set(ok, 1, known_zero=True)
                escape_if_hi(T, ok)
                with a.if_nz(ok):
                    X.copy_to(I)
                    I.add_word(Y)
                    I.sub_const(128)
                    a.set(ok, 1, known_zero=True)
                    escape_if_hi(I, ok)
                    with a.if_nz(ok):
                        lookup(I.lo, SQ)
                        a.comment("x = x2 - y2 + cx; y = (x + y)^2 - x2 - y2 + cy")
                        X.clear()
                        CX.copy_to(X)
                        X.add_word(X2, keep=False)
                        X.add_word(Y2, sign=-1, keep=False)
                        Y.clear()
                        CY.copy_to(Y)
                        Y.add_word(SQ, keep=False)
                        Y.add_word(T, sign=-1, keep=False)
                        a.clear(e)
                        a.add(it, -1)
                        a.if_zero_else(it, zero=lambda: a.clear(run))
                    I.clear()
                X2.clear()
                Y2.clear()
                T.clear()
            with a.if_nz(e):
                a.clear(run)
        X.clear()
        Y.clear()
        a.comment("print a character for the iterations")
        for ch in mandel_chars(MAXIT):
            a.if_zero_else(it, zero=lambda ch=ch: a.print_str(ch))
            a.add(it, -1)
        a.clear(it)

    CY.set(y0 + 128 + C, known_zero=True)
    a.set(rows, H, known_zero=True)
    with a.loop(rows):
        CX.set(x0 + 128, known_zero=True)
        a.set(cols, W, known_zero=True)
        with a.loop(cols):
            pixel()
            CX.add_const(dx)
            a.add(cols, -1)
        a.print_str("\n")
        CX.clear()
        CY.sub_const(dy)
        a.add(rows, -1)
    CY.clear()
    return a.source()


# ---- primes -------------------------------------------------------------------------------
#
# A sieve of Eratosthenes over an array of N elements (element k stands for the number k),
# PW cells each: V (1 for 1 <= k < N: the array's extent, 0 at element 0 and at the end),
# F (composite), MC, MP (the countdown and the prime, carried along a marking walk),
# PV, K (the candidate and the count left, carried by the walk over candidates), D (a decimal
# counter carried by the printing walk) and a few scratch cells. For each p up to sqrt(N)
# that is not marked, a walk carries p to the end of the array marking every p-th element,
# and a scan (`[<...<]` on V) brings it home; then a walk prints the unmarked numbers.

PRIMES = dict(N=30000)


def primes_model(N):
    sieve = [True] * N
    out = []
    for k in range(2, N):
        if sieve[k]:
            out.append(f"{k}\n")
            for j in range(2 * k, N, k):
                sieve[j] = False
    return "".join(out)


def primes(N):
    pmax = math.isqrt(N - 1)  # every p with p * p < N
    assert 4 <= pmax < 256 and N < 100_000
    ndig = 5
    a = Asm(40)
    PW = 36
    AB = 40  # element 0
    V, F, MC, MP, PV, K, D, POOL = 0, 1, 4, 7, 8, 9, 10, 25
    NPOOL = PW - POOL

    def el(k, off):
        return AB + k * PW + off

    def dec(k):
        cells = [el(k, D + 3 * i) for i in range(ndig)]
        for c in cells:
            a.mark_testable(c)
        return Dec(a, ndig, cells)

    for k in range(4):
        a.mark_testable(el(k, F))
        a.mark_testable(el(k, MC))

    a.comment(f"primes below {N}: a sieve over {N} elements of {PW} cells from cell {AB}")
    a.comment("mark elements 1 to N-1 as part of the array")
    block = max(64, -(-(N - 1) // 255))
    q, r = divmod(N - 1, block)
    assert q < 256
    a.set(el(1, K), q, known_zero=True)
    with a.walk(el(1, K), block * PW):
        a.add(el(1, K), -1)
        for j in range(block):
            a.add(el(1 + j, V), 1)
        a.move(el(1, K), el(1 + block, K))
    for j in range(r):
        a.add(el(1 + j, V), 1)
    a.at(el(0, V))
    a.scan(el(0, V), -PW)  # back to element 0

    a.comment("for p from 2 to sqrt(N): if p is not marked: mark its multiples")
    a.set(el(2, PV), 2, known_zero=True)
    a.set(el(2, K), pmax - 1, known_zero=True)

    def mark_multiples():
        # At element p (frame element 2): carry p and a countdown from p to the end.
        with a.pool(el(2, POOL), NPOOL):
            a.copy(el(2, PV), el(3, MP), el(3, MC))
        a.add(el(2, V), -1)  # home, for the scan back
        with a.walk(el(3, V), PW):
            a.add(el(3, MC), -1)

            def hit():
                a.set(el(3, F), 1)
                with a.pool(el(3, POOL), NPOOL):
                    a.copy(el(3, MP), el(3, MC))

            a.if_zero_else(el(3, MC), zero=hit)
            a.move(el(3, MP), el(4, MP))
            a.move(el(3, MC), el(4, MC))
        a.clear(el(3, MP))  # at the end of the array
        a.clear(el(3, MC))
        a.at(el(2, V))
        a.scan(el(2, V), -PW)  # home
        a.add(el(2, V), 1)

    with a.walk(el(2, K), PW):
        a.if_zero_else(el(2, F), zero=mark_multiples)
        a.move(el(2, PV), el(3, PV))
        a.add(el(3, PV), 1)
        a.add(el(2, K), -1)
        a.move(el(2, K), el(3, K))
    a.clear(el(2, PV))
    a.at(el(2, V))
    a.scan(el(2, V), -PW)
    a.assume(el(0, V))

    a.comment("print the numbers not marked, from 2")
    dec(2).set(2, known_zero=True)

    def print_number():
        with a.pool(el(2, POOL), NPOOL):
            with a.temps(2) as (st, u):
                with a.temps(testable=True) as t:
                    dec(2).print(st, t, u)
            a.print_str("\n")

    with a.walk(el(2, V), PW):
        a.if_zero_else(el(2, F), zero=print_number)
        for i in range(ndig):
            a.move(el(2, D + 3 * i), el(3, D + 3 * i))
        with a.pool(el(3, POOL), NPOOL):
            dec(3).inc()
    dec(2).clear()
    return a.source()


# ---- nested -------------------------------------------------------------------------------
#
# Deeply nested counting loops; the innermost body mixes two byte cells (a multiply loop and
# copies whose lengths depend on the data) and adds one of them to a 16-bit checksum; each
# level adds its counter to a. Prints a, b and the checksum.

NESTED = dict(counts=[5, 4, 5, 4, 5, 4, 5, 3])


def nested_model(counts):
    a, b, s = 1, 0, 0

    def level(k):
        nonlocal a, b, s
        if k == len(counts):
            b = (b + a) & 255
            a = (3 * a + b) & 255
            s = (s + b) & 65535
            return
        for ctr in range(counts[k], 0, -1):
            level(k + 1)
            a = (a + ctr + k + 1) & 255

    level(0)
    return f"a={a} b={b} checksum={s}\n"


def nested(counts):
    a = Asm(120)
    ca, cb = a.alloc(), a.alloc()
    s = Word(a)
    ctr = [a.alloc() for _ in counts]
    a.comment(f"nested: {len(counts)} nested counting loops ({' x '.join(map(str, counts))})")
    a.set(ca, 1, known_zero=True)

    def level(k):
        if k == len(counts):
            a.copy(ca, cb)  # b += a
            with a.temps() as t:  # a = 3a + b
                a.move(ca, (t, 3))
                a.move(t, ca)
            a.copy(cb, ca)
            with a.temps() as t:  # checksum += b
                a.copy(cb, t)
                with a.loop(t):
                    a.add(t, -1)
                    s.inc()
            return
        a.set(ctr[k], counts[k], known_zero=True)
        with a.loop(ctr[k]):
            level(k + 1)
            a.copy(ctr[k], ca)
            a.add(ca, k + 1)
            a.add(ctr[k], -1)

    level(0)
    a.print_str("a=")
    print_byte(a, ca)
    a.print_str(" b=")
    print_byte(a, cb)
    a.print_str(" checksum=")
    print_word(a, s)
    a.print_str("\n")
    return a.source()


# ---- collatz ------------------------------------------------------------------------------
#
# The longest Collatz chain (steps to reach 1) for starting values below N; prints each new
# record holder and its length, then the longest. The number lives in binary on the tape,
# one bit per position of CW cells, least significant first: B = 1 for a 0 bit, 2 for a 1
# bit, 0 past the end, so the number's extent is found by scans. Halving shifts the bits down
# one position (a walk to the end, then a scan home); 3n + 1 = n + 2n + 1 is one walk adding
# each bit, the bit below it and a carry, carried along, that stops when all three are zero.

COLLATZ = dict(N=12000)


def collatz_model(N):
    best, out = 0, []
    for m in range(1, N):
        n, steps = m, 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        if steps > best:
            best = steps
            out.append(f"{m} {steps}\n")
            best_m = m
    out.append(f"longest below {N}: {best_m} ({best} steps)\n")
    return "".join(out)


def collatz(N):
    a = Asm(200)
    CW = 9
    NB = 200 + CW  # position 0; position -1 is a zero sentinel
    B, S, G, P, C, T = 0, 3, 4, 6, 7, 8  # G is S's first scratch cell

    def pos(i, off):
        return NB + i * CW + off

    for i in range(-1, 3):
        a.mark_testable(pos(i, B))
        a.mark_testable(pos(i, S))

    kbits = N.bit_length()
    ndig = len(str(N))
    mbits = [a.alloc_testable() for _ in range(kbits)]
    mdec, bestdec = Dec(a, ndig), Dec(a, ndig)
    steps, best, cnt = Word(a), Word(a), Word(a)
    a.comment(f"collatz: the longest chain below {N}; the number in binary from cell {NB}")
    mdec.set(1, known_zero=True)
    bestdec.set(0, known_zero=True)
    a.add(mbits[0], 1)
    cnt.set(N - 1, known_zero=True)

    def halve():
        a.comment("n / 2: shift the bits down")
        a.add(pos(0, B), -1)
        with a.walk(pos(1, B), CW):
            a.move(pos(1, B), pos(0, B))
        a.at(pos(-1, B))
        a.scan(pos(-1, B), -CW)
        a.assume(pos(-1, B))

    def triple():
        a.comment("3n + 1: add n and 2n and 1 bit by bit")
        a.set(pos(0, C), 1, known_zero=True)
        a.set(pos(0, G), 1, known_zero=True)
        with a.walk(pos(0, G), CW):
            a.clear(pos(0, G))
            a.move(pos(0, P), pos(0, S))
            a.move(pos(0, C), pos(0, S))

            def bit():
                a.move(pos(0, B), pos(0, S), pos(1, P))
                a.add(pos(0, S), -1)
                a.add(pos(1, P), -1)

            a.if_zero_else(pos(0, B), nonzero=bit)
            # S = bit + bit below + carry, in 0..3: the new bit and the carry out.
            for v in range(4):

                def case(v=v):
                    a.add(pos(0, B), 1 + v % 2)
                    a.add(pos(1, C), v // 2)
                    a.add(pos(0, S), 4 - v)

                a.if_zero_else(pos(0, S), zero=case)
                a.add(pos(0, S), -1)
            # Go on while the next position has a bit, a bit below or a carry.
            with a.pool(pos(1, T), 1):
                a.copy(pos(1, P), pos(1, G))
                a.copy(pos(1, C), pos(1, G))
            a.if_zero_else(pos(1, B), nonzero=lambda: a.add(pos(1, G), 1))
        a.at(pos(-1, B))
        a.scan(pos(-1, B), -CW)
        a.assume(pos(-1, B))

    def chain():
        a.comment("the number from the bits of m")
        with a.temps(2) as (seen, f):
            for j in reversed(range(kbits)):
                a.if_zero_else(mbits[j], nonzero=lambda: a.set(seen, 1))
                a.copy(seen, f)
                with a.if_nz(f):
                    a.copy(mbits[j], pos(j, B))
                    a.add(pos(j, B), 1)
            a.clear(seen)
        with a.while_flag(lambda fl: a.if_zero_else(pos(1, B), nonzero=lambda: a.set(fl, 1))):
            with a.temps(2) as (odd, even):
                a.copy(pos(0, B), odd)
                a.add(odd, -1)
                a.set(even, 1, known_zero=True)
                with a.if_nz(odd):
                    a.add(even, -1)
                    triple()
                with a.if_nz(even):
                    halve()
            steps.inc()
        a.add(pos(0, B), -2)  # n = 1

    def longer():
        """A flag cell: 1 if steps > best."""
        gt = a.alloc()
        x, y = Word(a), Word(a)
        steps.copy_to(x)
        best.copy_to(y)

        def both(fl):
            with a.temps(2) as (u, v):
                x.nonzero(u)
                y.nonzero(v)
                with a.if_nz(u):
                    a.move(v, fl)
                a.clear(v)

        with a.while_flag(both):
            x.dec()
            y.dec()
        x.nonzero(gt)
        x.clear()
        y.clear()
        x.free()
        y.free()
        return gt

    def print_dec(d):
        with a.temps(2) as (st, u):
            with a.temps(testable=True) as t:
                d.print(st, t, u)

    def print_copy(w):
        v = Word(a)
        w.copy_to(v)
        print_word(a, v)
        v.free()

    with a.while_flag(cnt.nonzero):
        chain()
        gt = longer()
        with a.if_nz(gt):
            a.comment("a new record")
            best.clear()
            steps.copy_to(best)
            bestdec.clear()
            mdec.copy_to(bestdec)
            print_dec(mdec)
            a.print_str(" ")
            print_copy(steps)
            a.print_str("\n")
        a.free(gt)
        steps.clear()
        mdec.inc()
        def inc_bits(j=0):  # m += 1 in binary: the carry as nested tests
            if j == kbits:
                return
            a.if_zero_else(
                mbits[j],
                zero=lambda: a.add(mbits[j], 1),
                nonzero=lambda: (a.add(mbits[j], -1), inc_bits(j + 1)),
            )

        inc_bits()
        cnt.dec()
    a.print_str(f"longest below {N}: ")
    print_dec(bestdec)
    a.print_str(" (")
    print_word(a, best)
    a.print_str(" steps)\n")
    return a.source()


PROGRAMS = {
    "mandelbrot": (mandelbrot, mandelbrot_model, MANDEL),
    "primes": (primes, primes_model, PRIMES),
    "nested": (nested, nested_model, NESTED),
    "collatz": (collatz, collatz_model, COLLATZ),
}


def main(argv):
    outdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs")
    expect = False
    names = []
    it = iter(argv)
    for arg in it:
        if arg == "--outdir":
            outdir = next(it)
        elif arg == "--expect":
            expect = True
        elif arg == "--model":
            name = next(it)
            gen, model, params = PROGRAMS[name]
            sys.stdout.write(model(**params))
            return
        elif arg in PROGRAMS:
            names.append(arg)
        else:
            sys.exit(__doc__)
    for name in names or list(PROGRAMS):
        gen, model, params = PROGRAMS[name]
        src = gen(**params)
        path = os.path.join(outdir, name + ".bf")
        with open(path, "w") as f:
            f.write(src)
        print(f"{path}: {len(src)} bytes")
        if expect:
            import bfi

            out = bfi.run(src)
            want = model(**params).encode("latin-1")
            if out != want:
                sys.exit(f"{name}: the oracle's output differs from the model's")
            with open(os.path.join(outdir, name + ".out"), "wb") as f:
                f.write(out)
            print(f"{name}.out: {len(out)} bytes, same as the model")


if __name__ == "__main__":
    main(sys.argv[1:])
