#!/usr/bin/env python3
"""Tests of the macro-assembler's primitives, run on the oracle (both of its engines).

Each test builds a small program, runs it, and checks its output and that every cell the
program does not own on purpose is zero again (temporaries are returned clean).

Run: python3 tools/test_bfasm.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bfgen  # noqa: E402
import bfi  # noqa: E402
from bfasm import Asm, Dec, Word, print_byte, print_word  # noqa: E402


def run(a, keep=()):
    """Runs the program on both engines; returns (output str, tape). Cells outside `keep`
    must end zero."""
    src = a.source()
    out = bfi.check(src)
    _, tape = bfi.run_fast(src)
    dirty = [i for i, v in enumerate(tape[: a.var_cells]) if v and i not in keep]
    assert not dirty, f"cells left non-zero: {dirty}"
    return out.decode("latin-1"), tape


class Primitives(unittest.TestCase):
    def test_if_zero_else_keeps_the_cell(self):
        for v in [0, 1, 2, 128, 255]:
            a = Asm(40)
            x = a.alloc_testable()
            a.set(x, v)
            a.if_zero_else(x, zero=lambda: a.print_str("Z"), nonzero=lambda: a.print_str("N"))
            a.if_zero_else(x, zero=lambda: a.print_str("z"))
            a.if_zero_else(x, nonzero=lambda: a.print_str("n"))
            out, tape = run(a, keep={x})
            self.assertEqual(out, "Zz" if v == 0 else "Nn", v)
            self.assertEqual(tape[x], v)

    def test_nested_tests(self):
        for u, v in [(0, 0), (0, 3), (5, 0), (5, 3)]:
            a = Asm(40)
            x, y = a.alloc_testable(), a.alloc_testable()
            a.set(x, u)
            a.set(y, v)

            def inner(tag):
                a.if_zero_else(y, zero=lambda: a.print_str(tag + "0"),
                               nonzero=lambda: a.print_str(tag + "1"))

            a.if_zero_else(x, zero=lambda: inner("a"), nonzero=lambda: inner("b"))
            a.clear(x)
            a.clear(y)
            out, _ = run(a)
            self.assertEqual(out, ("a" if u == 0 else "b") + ("0" if v == 0 else "1"))

    def test_word_arithmetic(self):
        cases = [(0, 0), (1, 255), (255, 1), (300, 700), (65535, 1), (0, 65535), (1234, 4321)]
        for x, y in cases:
            a = Asm(80)
            w, v = Word(a), Word(a)
            w.set(x)
            v.set(y)
            w.add_word(v)
            s = Word(a)
            w.copy_to(s)
            print_word(a, s)
            a.print_str(" ")
            w.add_word(v, sign=-1)
            w.add_word(v, sign=-1)
            print_word(a, w)
            a.print_str(" ")
            print_word(a, v)
            out, _ = run(a)
            self.assertEqual(out, f"{(x + y) % 65536} {(x - y) % 65536} {y}", (x, y))

    def test_word_inc_dec_and_constants(self):
        for x in [0, 255, 256, 65535, 1000]:
            a = Asm(60)
            w = Word(a)
            w.set(x)
            w.inc()
            w.inc()
            w.dec()
            w.add_const(300)
            w.sub_const(1)
            w.sub_const(600)
            fl = a.alloc()
            w.nonzero(fl)
            a.add(fl, 48)
            a.out(fl)
            a.clear(fl)
            a.print_str(" ")
            print_word(a, w)
            out, _ = run(a)
            r = (x + 1 + 300 - 601) % 65536
            self.assertEqual(out, f"{int(r != 0)} {r}", x)

    def test_decimal_counter(self):
        for n in [0, 9, 10, 99, 100, 255]:
            a = Asm(60)
            d = Dec(a, 3)
            d.set(0)
            c = a.alloc()
            a.set(c, n)
            with a.loop(c):
                a.add(c, -1)
                d.inc()
            e = Dec(a, 3)
            e.set(0)
            for i in range(3):
                a.clear(e.e[i])
            d.copy_to(e)
            st, u = a.alloc(), a.alloc()
            t = a.alloc_testable()
            d.print(st, t, u)
            a.print_str("/")
            e.print(st, t, u)
            d.clear()
            e.clear()
            out, _ = run(a)
            self.assertEqual(out, f"{n}/{n}")

    def test_print_byte_and_divmod(self):
        for n in [0, 7, 16, 100, 255]:
            a = Asm(60)
            c, q, r = a.alloc(), a.alloc(), a.alloc()
            a.set(c, n)
            a.divmod_const(c, 16, q, r)
            print_byte(a, q)
            a.print_str(",")
            print_byte(a, r)
            out, _ = run(a)
            self.assertEqual(out, f"{n // 16},{n % 16}")

    def test_while_flag(self):
        a = Asm(60)
        w = Word(a)
        w.set(260)
        n = Word(a)
        with a.while_flag(w.nonzero):
            w.dec()
            n.inc()
        print_word(a, n)
        out, _ = run(a)
        self.assertEqual(out, "260")

    def test_walk_and_scan(self):
        # Cells 10, 13, 16, ... hold 1 up to a zero; walk to the end adding 1 to each, then
        # scan back to a zero sentinel at cell 7.
        a = Asm(10)
        for k in range(5):
            a.set(10 + 3 * k, 1)
        with a.walk(10, 3):
            a.add(10, 1)
        a.add(11, 65)  # the cell after the end
        a.out(11)
        a.clear(11)
        a.at(7)  # the last element
        a.scan(7, -3)
        a.assume(7)
        a.at(10)
        a.print_str("!")
        out, tape = run(a, keep={10, 13, 16, 19, 22})
        self.assertEqual(out, "A!")
        self.assertEqual([tape[10 + 3 * k] for k in range(6)], [2, 2, 2, 2, 2, 0])


    def test_a_test_of_a_cell_inside_its_own_non_zero_branch_is_refused(self):
        a = Asm(20)
        x = a.alloc_testable()
        with self.assertRaises(AssertionError):
            a.if_zero_else(x, nonzero=lambda: a.if_zero_else(x))
        a = Asm(20)
        x = a.alloc_testable()
        with self.assertRaises(AssertionError):
            a.if_zero_else(x, nonzero=lambda: a.add(x + 1, 1))


class Programs(unittest.TestCase):
    """Small instances of the generated programs compute what their models compute."""

    def check(self, gen, model, **params):
        src = gen(**params)
        self.assertEqual(bfi.run(src).decode("latin-1"), model(**params), params)

    def test_mandelbrot(self):
        p = dict(bfgen.MANDEL, W=12, H=5, MAXIT=12, dx=9, dy=20)
        self.check(bfgen.mandelbrot, bfgen.mandelbrot_model, **p)

    def test_primes(self):
        for n in [30, 200]:
            self.check(bfgen.primes, bfgen.primes_model, N=n)

    def test_nested(self):
        self.check(bfgen.nested, bfgen.nested_model, counts=[3, 2, 4])

    def test_collatz(self):
        self.check(bfgen.collatz, bfgen.collatz_model, N=100)

    def test_the_committed_programs_are_what_the_generator_writes(self):
        here = os.path.dirname(os.path.abspath(__file__))
        for name, (gen, _, params) in bfgen.PROGRAMS.items():
            with open(os.path.join(here, "..", "programs", name + ".bf")) as f:
                self.assertEqual(f.read(), gen(**params), f"{name}.bf: run bfgen.py --expect")


if __name__ == "__main__":
    unittest.main()
