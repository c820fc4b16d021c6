"""Seeded programs made of selects: the elementwise ops whose C is a conditional (``np.where``,
``copysign``, ``maximum``, ``abs``, ``clip``, ``x * (x > 0)``), their conditions drawn from float
comparisons, boolean arguments broadcast along an axis, booleans turned into floats first (values
a compiler can prove the sign of) and their ``&``, ``|``, ``^`` and ``~``; arms that read arrays,
constants and scalars; float32 and float64; shapes a compiler unrolls whole and shapes it vectorises.

GCC 12 at ``-O3`` on an AVX-512 machine turned such a select's conditional loads into masked loads
with the wrong mask; these programs are the class that found it.

>>> cases = list(generate(2, seed=0))
>>> [c.source.startswith("def prog(x, y, b)") for c in cases]
[True, True]
"""
from __future__ import annotations

import numpy as np

from .sweep import Case
from .sweep import generate as _generate

SHAPES = [(2, 3, 2), (3, 4), (5,), (4, 1, 9), (17, 8)]
CONDITIONS = [
    "x > 0", "x < y", "b", "~b", "t > 0.5", "np.signbit(t)", "(x < 0) != (t < 0)", "(x > y) & b",
    "(x > 0) | ~b", "(x < 0) ^ b", "np.signbit(x) != np.signbit(t)", "(x > 0) & (t >= 0)",
]
SELECTS = [
    "np.where({c}, x, y)", "np.where({c}, W, y)", "np.where({c}, x * W, -y)", "np.where({c}, 2.0, x)",
    "np.where({c}, np.exp(x), np.sin(y))", "np.copysign(x, b) * W", "np.copysign(x, t - 0.5) * y",
    "np.maximum(x, y) * np.where({c}, W, 1.0)", "np.abs(x) * np.where({c}, y, W)", "np.clip(x, -0.4, y)",
    "x * ({c})", "np.where({c}, x, 0.0) * W + np.minimum(x, t)",
]


def one_case(rng):
    shape = SHAPES[rng.integers(len(SHAPES))]
    dtype = (np.float32, np.float64)[rng.integers(2)]
    terms = []
    for _ in range(rng.integers(1, 3)):
        c = CONDITIONS[rng.integers(len(CONDITIONS))]
        terms.append(SELECTS[rng.integers(len(SELECTS))].format(c=c))
    weights = np.round(rng.uniform(-2, 2, shape), 2).tolist()
    source = (
        "def prog(x, y, b):\n"
        "    t = b.astype(x.dtype)\n"
        f"    W = np.array({weights}, dtype=x.dtype)\n"
        f"    return np.sum(({' + '.join(terms)}) * W)\n"
    )
    x = rng.uniform(-1.5, 1.5, shape).astype(dtype)
    y = rng.uniform(-1.5, 1.5, shape).astype(dtype)
    x[np.abs(x - y) < 0.05] += 0.1  # no ties: finite differences across a switch are not a gradient
    b = rng.integers(0, 2, shape[-1:]).astype(bool)  # broadcast along the last axis
    return Case(source, [x, y, b], (0, 1), dtype)


def generate(n, seed):
    """``n`` select programs from ``seed``."""
    return _generate(n, seed, one_case)
