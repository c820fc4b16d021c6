"""Per-op table entries for loops and branches (``scan``, ``while_loop``, ``cond``, ``element``).

Merged into ``op_cases``; the same checks as every op: finite differences, jvp, second
order, batching, float32 and the C target (which refuses these ops by name today).
"""
from __future__ import annotations

import numpy as np
from op_cases import Case, NondiffCase, normal, uniform

import gradc


def rnn(x, w):
    """A tanh cell over the rows of ``x`` (a fori_loop carrying the state)."""
    return gradc.fori_loop(0, x.shape[0], lambda i, h: np.tanh(w @ h + x[i]), np.zeros(x.shape[1], x.dtype))


def scan_outputs(x, a):
    carry, ys = gradc.scan(lambda c, xi: (c * a + xi, np.sin(c) * xi), np.zeros_like(a), x)
    return ys * 2.0 + carry


def halve_until_small(x):
    """A while loop on a reduction of the carried vector (trips depend on the data, not on the tangent)."""
    return gradc.while_loop(lambda v: np.sum(v * v) > 0.05, lambda v: v * 0.5 + 0.01 * np.sin(v), x)


def branch(x, s):
    return gradc.cond(np.sum(s) > 0.0, lambda x, s: x * s, lambda x, s: np.exp(x) - s, x, s)


def branch_other_way(x, s):
    return gradc.cond(np.sum(s) > 0.0, lambda x, s: x * s, lambda x, s: np.exp(x) - s, x, -s)


def _weighted_norm(v, w):
    """A helper with a loop (kept as a function: a ``call`` equation)."""
    total = 0.0
    for k in range(v.shape[0]):
        total = total + w[k] * v[k] ** 2
    return total


def helper_calls(x, w):
    """The same helper called twice with one signature: one body, two ``call`` equations."""
    return _weighted_norm(x, w) * np.tanh(_weighted_norm(np.sin(x), w))


DIFF_CASES = [
    Case("fori_loop_rnn", rnn, [uniform(-0.5, 0.5, 5, 3), uniform(-0.5, 0.5, 3, 3)], ("scan", "element")),
    Case("scan_stacked_outputs", scan_outputs, [normal(4, 2), uniform(0.2, 0.9, 2)], ("scan", "element")),
    Case("while_loop_halving", halve_until_small, [uniform(0.5, 1.5, 3)], ("while_loop", "element")),
    Case("cond_true_branch", branch, [normal(3), uniform(0.5, 1.0, 3)], ("cond", "element")),
    Case("cond_false_branch", branch_other_way, [normal(3), uniform(0.5, 1.0, 3)], ("cond", "element")),
    Case("call_helper_twice", helper_calls, [normal(3), uniform(0.5, 1.0, 3)], ("call", "element")),
]
def _checked_floor(a):
    """floor(a), with the run-time check a raise on traced data becomes (it never holds at the table's inputs)."""
    from gradc.ops.checks import check
    check(np.any(a > 100.0), "ValueError", ("a > 100",), "op_cases_control.py")
    return np.floor(a)


NONDIFF_CASES: list = [
    NondiffCase("check_raise", _checked_floor, [lambda rng: rng.integers(-3, 3, 4) + rng.uniform(0.2, 0.8, 4)],
                ("check_raise", "floor")),
]
