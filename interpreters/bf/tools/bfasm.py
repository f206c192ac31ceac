"""A tiny macro-assembler for Brainfuck: named cells, and primitives built from them.

The assembler tracks where the pointer is, so code says "add 3 to cell x" and the moves are
emitted for it. Cells are absolute tape positions handed out by `alloc` (first fit); every
free cell is zero, so a temporary must be zero again when it is freed.

Unbalanced loops (`[>>>]` scans, walks along an array) move the pointer by a distance the
assembler cannot know. `walk(c, stride)` is a loop whose body ends `stride` cells further
on: the assembler then reasons in a frame that shifts with the pointer, so code inside and
after the loop is written as if the frame had not moved ("the current element" is always the
same cells). `assume(c)` says where the pointer really is once a scan has brought it back.

Conventions:
- A *testable* cell `x` owns `x+1` and `x+2` as zero scratch cells; `if_zero_else(x, ...)`
  tests it without destroying it, in O(1) steps (the body runs with x+1, x+2 off limits).
- A `Word` is 16 bits in two testable cells (lo, hi), two's complement where signed.
- A `Dec` is a decimal counter: one testable cell per digit holding 9 - digit, so that
  "this digit is 9" is a zero test.
"""

from contextlib import contextmanager

COMMANDS = set("+-<>[].,")


class Asm:
    """Emits Brainfuck while tracking the pointer and the allocated cells."""

    def __init__(self, var_cells=400):
        self.parts = []
        self.pos = 0
        self.var_cells = var_cells
        self.pools = [(0, [False] * var_cells)]
        self.testable = set()
        self.busy = set()  # the flag cells of tests whose non-zero branch is being emitted

    # ---- output -------------------------------------------------------------------------

    def emit(self, s):
        self.parts.append(s)

    def comment(self, text):
        """A comment on a line of its own (command characters in it are dropped)."""
        clean = "".join(ch for ch in text if ch not in COMMANDS)
        self.parts.append("\n" + clean + "\n")

    def source(self, width=80):
        """The program text: code wrapped at `width` columns, comments on their own lines."""
        lines = []
        for chunk in "".join(self.parts).split("\n"):
            if chunk and chunk[0] not in COMMANDS:
                lines.append(chunk)
                continue
            for i in range(0, len(chunk), width):
                lines.append(chunk[i : i + width])
        return "\n".join(line for line in lines if line) + "\n"

    # ---- cells --------------------------------------------------------------------------

    def alloc(self, n=1):
        """The first n consecutive free cells of the current pool."""
        start, used = self.pools[-1]
        run = 0
        for i in range(len(used)):
            run = run + 1 if not used[i] else 0
            if run == n:
                base = i - n + 1
                for j in range(base, base + n):
                    used[j] = True
                return start + base
        raise RuntimeError("out of cells in the pool")

    def free(self, base, n=1):
        start, used = self.pools[-1]
        for j in range(base - start, base - start + n):
            assert used[j], f"cell {start + j} freed twice"
            used[j] = False
        self.testable.discard(base)

    @contextmanager
    def pool(self, start, n):
        """Temporaries come from cells start..start+n (e.g. scratch cells of the current
        element inside a walk, where the variables are out of reach)."""
        self.pools.append((start, [False] * n))
        yield
        _, used = self.pools.pop()
        assert not any(used), "a pool cell is still allocated"

    def mark_testable(self, x):
        """Declares x testable (a cell outside the variables, e.g. in an array element)."""
        self.testable.add(x)

    def alloc_testable(self):
        x = self.alloc(3)
        self.testable.add(x)
        return x

    @contextmanager
    def temps(self, n=1, testable=False):
        """n temporary cells (zero on entry, to be left zero)."""
        cells = [self.alloc_testable() if testable else self.alloc() for _ in range(n)]
        yield cells[0] if n == 1 else cells
        for c in cells:
            self.free(c, 3 if testable else 1)

    # ---- moves and arithmetic -----------------------------------------------------------

    def at(self, c):
        d = c - self.pos
        self.emit(">" * d if d > 0 else "<" * -d)
        self.pos = c

    def assume(self, c):
        """The pointer is at c (after a scan brought it back to a known cell)."""
        self.pos = c

    def add(self, c, n):
        assert c not in self.busy, f"cell {c} is the flag of a test in progress"
        n %= 256
        if n:
            self.at(c)
            self.emit("+" * n if n <= 128 else "-" * (256 - n))

    def clear(self, c):
        assert c not in self.busy, f"cell {c} is the flag of a test in progress"
        self.at(c)
        self.emit("[-]")

    def set(self, c, n, known_zero=False):
        if not known_zero:
            self.clear(c)
        self.add(c, n)

    def out(self, c):
        self.at(c)
        self.emit(".")

    @contextmanager
    def loop(self, c):
        """`[ body ]` on cell c; the body must return to c."""
        self.at(c)
        self.emit("[")
        yield
        self.at(c)
        self.emit("]")

    @contextmanager
    def walk(self, c, stride):
        """A loop on cell c whose body ends `stride` cells on (an unbalanced loop)."""
        self.at(c)
        self.emit("[")
        yield
        self.at(c + stride)
        self.emit("]")
        self.pos = c

    def scan(self, c, stride):
        """Moves by `stride` until cell c (in the shifted frame) is zero: `[>>>]`-style."""
        with self.walk(c, stride):
            pass

    def move(self, src, *dsts):
        """Adds src to each destination (a cell, or (cell, factor)); src becomes 0."""
        with self.loop(src):
            self.add(src, -1)
            for d in dsts:
                cell, k = d if isinstance(d, tuple) else (d, 1)
                self.add(cell, k)

    def copy(self, src, *dsts):
        """Adds src to each destination; src is kept."""
        with self.temps() as t:
            self.move(src, *dsts, t)
            self.move(t, src)

    @contextmanager
    def if_nz(self, c):
        """Runs the body once if c is not zero; c becomes 0."""
        with self.loop(c):
            yield
            self.clear(c)

    def if_zero_else(self, x, zero=None, nonzero=None):
        """Runs `zero()` or `nonzero()` as x is zero or not; x is kept (may be changed by
        `nonzero`). x must be testable; the bodies must not touch x+1 and x+2."""
        assert x in self.testable, f"cell {x} is not testable"
        f, g = x + 1, x + 2
        assert not {x, f, g} & self.busy, f"cell {x} is tested in a test of it or a neighbour"
        self.add(f, 1)
        self.at(x)
        self.emit("[")
        if nonzero:
            self.busy.add(f)
            nonzero()
            self.busy.discard(f)
            self.at(x)
        self.emit(">-")
        self.pos = f
        self.emit("]>")  # x != 0: at g (0); x == 0: at f (1)
        self.pos = g
        self.emit("[")
        self.pos = f  # only the zero case gets here, at f
        self.emit("-")
        if zero:
            zero()
        self.at(f)
        self.emit(">")
        self.pos = g
        self.emit("]")

    def print_str(self, s):
        """Prints a string (through a temporary cell)."""
        with self.temps() as t:
            v = 0
            for ch in s.encode("latin-1"):
                self.add(t, ch - v)
                self.out(t)
                v = ch
            self.clear(t)

    def print_digit(self, c):
        """Prints cell c (0..9) as a digit; c becomes 0."""
        self.add(c, 48)
        self.out(c)
        self.clear(c)

    def divmod_const(self, n, d, q, r):
        """q += n // d and r = n % d (r must start at 0); n becomes 0."""
        with self.temps(testable=True) as c:
            self.set(c, d, known_zero=True)
            with self.loop(n):
                self.add(n, -1)
                self.add(r, 1)
                self.add(c, -1)

                def wrap():
                    self.add(c, d)
                    self.clear(r)
                    self.add(q, 1)

                self.if_zero_else(c, zero=wrap)
            self.clear(c)

    # ---- flags --------------------------------------------------------------------------

    def while_flag(self, compute):
        """`while compute(flag)`: compute(flag) must set the zero flag cell to 0 or 1."""

        @contextmanager
        def ctx():
            with self.temps() as fl:
                compute(fl)
                with self.loop(fl):
                    self.clear(fl)
                    yield
                    compute(fl)

        return ctx()


class Word:
    """16 bits in two testable cells."""

    def __init__(self, asm, lo=None, hi=None):
        self.a = asm
        self.lo = asm.alloc_testable() if lo is None else lo
        self.hi = asm.alloc_testable() if hi is None else hi

    def free(self):
        self.a.free(self.lo, 3)
        self.a.free(self.hi, 3)

    def set(self, v, known_zero=False):
        v %= 65536
        self.a.set(self.lo, v & 255, known_zero)
        self.a.set(self.hi, v >> 8, known_zero)

    def clear(self):
        self.a.clear(self.lo)
        self.a.clear(self.hi)

    def inc(self):
        a = self.a
        a.add(self.lo, 1)
        a.if_zero_else(self.lo, zero=lambda: a.add(self.hi, 1))

    def dec(self):
        a = self.a
        a.if_zero_else(self.lo, zero=lambda: a.add(self.hi, -1))
        a.add(self.lo, -1)

    def add_word(self, b, sign=1, keep=True):
        """self += b (or -= b with sign=-1); b is kept unless keep=False (then b = 0)."""
        a = self.a
        with a.temps() as t:
            with a.loop(b.lo):
                a.add(b.lo, -1)
                if keep:
                    a.add(t, 1)
                self.inc() if sign > 0 else self.dec()
            if keep:
                a.move(t, b.lo)
                a.move(b.hi, (self.hi, sign), t)
                a.move(t, b.hi)
            else:
                a.move(b.hi, (self.hi, sign))

    def add_const(self, k):
        """self += k (mod 65536), in O(k mod 256) steps."""
        a = self.a
        k %= 65536
        if k & 255:
            with a.temps() as t:
                a.set(t, k & 255, known_zero=True)
                with a.loop(t):
                    a.add(t, -1)
                    self.inc()
        a.add(self.hi, k >> 8)

    def sub_const(self, k):
        """self -= k (mod 65536), in O(k mod 256) steps."""
        a = self.a
        k %= 65536
        if k & 255:
            with a.temps() as t:
                a.set(t, k & 255, known_zero=True)
                with a.loop(t):
                    a.add(t, -1)
                    self.dec()
        a.add(self.hi, -(k >> 8))

    def copy_to(self, dst):
        """dst += self."""
        self.a.copy(self.lo, dst.lo)
        self.a.copy(self.hi, dst.hi)

    def nonzero(self, fl):
        """fl (zero) = 1 if self != 0."""
        a = self.a
        a.if_zero_else(self.lo, nonzero=lambda: a.set(fl, 1))
        a.if_zero_else(self.hi, nonzero=lambda: a.set(fl, 1))


class Dec:
    """A decimal counter of n digits, each cell holding 9 - digit."""

    def __init__(self, asm, n, cells=None):
        self.a = asm
        self.n = n
        self.e = cells if cells is not None else [asm.alloc_testable() for _ in range(n)]

    def free(self):
        for c in self.e:
            self.a.free(c, 3)

    def set(self, v, known_zero=False):
        for i in range(self.n):
            self.a.set(self.e[i], 9 - v % 10, known_zero)
            v //= 10

    def clear(self):
        for c in self.e:
            self.a.clear(c)

    def inc(self, i=0):
        a = self.a
        if i == self.n:
            return

        def carry():
            a.add(self.e[i], 9)
            self.inc(i + 1)

        a.if_zero_else(self.e[i], zero=carry, nonzero=lambda: a.add(self.e[i], -1))

    def copy_to(self, other):
        """other += self, cell by cell (other should be cleared first)."""
        for x, y in zip(self.e, other.e):
            self.a.copy(x, y)

    def print(self, st, t, u):
        """Prints the number without leading zeros. st, u: zero temps; t: a zero testable
        temp (in the same frame as the digits, for walks)."""
        a = self.a
        for i in reversed(range(self.n)):
            a.set(t, 9, known_zero=True)
            a.copy(self.e[i], (t, -1))
            if i == 0:
                a.print_digit(t)
                break
            a.copy(st, u)
            a.if_zero_else(t, nonzero=lambda: a.set(u, 1))
            with a.if_nz(u):
                a.add(t, 48)
                a.out(t)
                a.set(st, 1)
            a.clear(t)
        a.clear(st)


def print_word(a, w):
    """Prints a Word in decimal; w becomes 0."""
    d = Dec(a, 5)
    d.set(0, known_zero=True)
    with a.loop(w.hi):
        a.add(w.hi, -1)
        with a.temps(2) as (t, u):
            a.set(t, 16, known_zero=True)
            with a.loop(t):
                a.add(t, -1)
                a.set(u, 16, known_zero=True)
                with a.loop(u):
                    a.add(u, -1)
                    d.inc()
    with a.loop(w.lo):
        a.add(w.lo, -1)
        d.inc()
    with a.temps(2) as (st, u):
        with a.temps(testable=True) as t:
            d.print(st, t, u)
    d.clear()
    d.free()


def print_byte(a, c):
    """Prints cell c in decimal; c becomes 0."""
    d = Dec(a, 3)
    d.set(0, known_zero=True)
    with a.loop(c):
        a.add(c, -1)
        d.inc()
    with a.temps(2) as (st, u):
        with a.temps(testable=True) as t:
            d.print(st, t, u)
    d.clear()
    d.free()
