"""Select-heavy programs (tests/fuzz/selects.py) on the C target against NumPy and central differences,
and the emitted C's fused loops never load memory under a condition."""
import re
import warnings

import numpy as np
import pytest

import gradc

from . import selects
from .test_sweep import SCALE, SEED, accepted, check_c_batches, needs_cc


@needs_cc
def test_selects_c_target():
    check_c_batches(accepted(selects.generate(60 * SCALE, SEED + 700)))


def _end(expr: str, start: int, stops: str) -> int:
    """Where the operand starting at ``start`` ends: a closing bracket of its group, or one of ``stops``
    outside brackets."""
    depth = 0
    for n in range(start, len(expr)):
        ch = expr[n]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
            if depth < 0:
                return n
        elif depth == 0 and ch in stops:
            return n
    return len(expr)


def conditional_parts(expr: str) -> list:
    """The parts of the C expression ``expr`` evaluated only on a condition: the arms of each ``?:`` and
    the right operand of each ``&&`` and ``||``.

    >>> conditional_parts("g[k] = (c ? a[k] : (d ? 1 : e)) + (p && q[k]);")
    [' a[k] ', ' (d ? 1 : e)', ' 1 ', ' e', ' q[k]']
    """
    parts = []
    for m in re.finditer(r"\?|&&|\|\|", expr):
        if m.group() != "?":
            parts.append(expr[m.end():_end(expr, m.end(), ",;?:")])
            continue
        colon, nested = m.end(), 0
        while True:  # the `:` of this `?`, past the nested ones' pairs
            colon = _end(expr, colon, "?:,;")
            if colon == len(expr) or expr[colon] != "?" and (expr[colon] != ":" or not nested):
                break
            nested += 1 if expr[colon] == "?" else -1
            colon += 1
        parts.append(expr[m.end():colon])
        if colon < len(expr) and expr[colon] == ":":
            parts.append(expr[colon + 1:_end(expr, colon + 1, ",;")])
    return parts


@pytest.mark.parametrize("case", list(selects.generate(12, SEED + 800)))
def test_no_load_under_a_condition(case):
    """The C of a fused loop loads each operand before a select (NumPy computes both arms anyway):
    a load under a condition is what GCC 12 at -O3 miscompiled into a wrongly masked load."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source = gradc.compile(case.function(), *case.args, wrt=("x", "y"), target="c").c_source
    bad = [line for line in source.splitlines() if "for (" not in line
           and any("[" in part for part in conditional_parts(line.partition(" = ")[2]))]
    assert not bad, "\n".join(bad)


@needs_cc
def test_copysign_by_a_broadcast_bool():
    """The sweep's find: copysign of float32 by a broadcast bool, whose C gradient had 0s where NumPy has
    +-weights (GCC 12 -O3 -march=native on AVX-512 masked the arms' loads with the wrong mask)."""
    def f(x, y):
        return np.sum(np.copysign(x, y) * np.arange(1.0, 13.0).reshape(2, 3, 2))

    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 2)).astype(np.float32)
    y = np.array([False, True])
    want = np.where(np.signbit(x), -1.0, 1.0) * np.arange(1.0, 13.0).reshape(2, 3, 2)
    np.testing.assert_array_equal(gradc.compile(f, x, y, wrt="x").grad(x, y), want)
    np.testing.assert_array_equal(gradc.compile(f, x, y, wrt="x", target="c").grad(x, y), want)
