#!/usr/bin/env python3
"""Arrays filled in loops: gradc's emitted gradient against a hand-written NumPy loop with its own adjoint loop.

Workloads (issue 26, item 1):

* ``fill``: ``out = np.zeros(n); for i in range(n): out[i] = np.sin(x[i]) * x[i]``, loss ``sum(out)``.
* ``recurrence``: ``out[0] = x[0]; for i in 1..n-1: out[i] = out[i - 1] * c + np.sin(x[i])``
  (``c = 0.5``, so the values stay bounded), loss ``sum(out)``: each iteration reads the slot written before.

For n = 10^3, 10^4, 10^5, 10^6 (``--quick``: 10^3 and 10^4): the gradient (``compile(...).grad``) of
the NumPy target and a hand-written NumPy loop with its own hand-written adjoint loop (the same
Python-level loop structure: the fair peer for code kept as a loop), per-call medians of interleaved
runs (``run.py``'s harness), their ratio, and the time per element (flat when the growth is linear).
The gradients are checked against the hand-written ones first. ``--c`` adds the C target's gradient
(``target="c"``, which writes in place too: linear, arrays past 64 KB in the caller's work buffer),
"-" where no C compiler is found.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/fill_loop.py [--quick] [--c]
"""
from __future__ import annotations

import argparse
import functools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import interleaved  # noqa: E402

import gradc  # noqa: E402

SIZES = (1_000, 10_000, 100_000, 1_000_000)
C = 0.5


def fill(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out)


def fill_grad_by_hand(x):
    """The loop and its adjoint loop, written by hand (no tape needed: the adjoint reads x only)."""
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sin(x[i]) * x[i]
    out_bar = np.ones(n)
    x_bar = np.zeros(n)
    for i in range(n - 1, -1, -1):
        xi = x[i]
        x_bar[i] += out_bar[i] * (np.cos(xi) * xi + np.sin(xi))
        out_bar[i] = 0.0
    return x_bar


def recurrence(x):
    n = x.shape[0]
    out = np.zeros(n)
    out[0] = x[0]
    for i in range(1, n):
        out[i] = out[i - 1] * C + np.sin(x[i])
    return np.sum(out)


def recurrence_grad_by_hand(x):
    n = x.shape[0]
    out = np.zeros(n)
    out[0] = x[0]
    for i in range(1, n):
        out[i] = out[i - 1] * C + np.sin(x[i])
    out_bar = np.ones(n)
    x_bar = np.zeros(n)
    for i in range(n - 1, 0, -1):
        g = out_bar[i]
        out_bar[i] = 0.0
        x_bar[i] += g * np.cos(x[i])
        out_bar[i - 1] += g * C
    x_bar[0] += out_bar[0]
    return x_bar


WORKLOADS = {"fill": (fill, fill_grad_by_hand), "recurrence": (recurrence, recurrence_grad_by_hand)}


def _c_compile(f, x):
    """``gradc.compile(..., target="c")``, or None where no C compiler is found."""
    from gradc.backends.c import build

    if build.find_compiler() is None:
        return None
    return gradc.compile(f, x, target="c")


def table(name, sizes, repeat, with_c):
    f, by_hand = WORKLOADS[name]
    print(f"{name}: gradient per call (median of {repeat} interleaved runs)")
    print(f"  {'n':>9}  {'gradc NumPy':>12}  {'hand loop':>10}  {'ratio':>6}  {'ns/elem':>8}  {'C':>10}")
    rng = np.random.default_rng(0)
    for n in sizes:
        x = rng.uniform(-1.0, 1.0, n)
        compiled = gradc.compile(f, x)
        expected = by_hand(x)
        got = compiled.grad(x)
        assert np.allclose(got, expected, rtol=1e-10, atol=1e-12), f"{name} n={n}: gradient differs"
        fns = [functools.partial(compiled.grad, x), functools.partial(by_hand, x)]
        in_c = _c_compile(f, x) if with_c else None
        if in_c is not None:
            assert np.allclose(in_c.grad(x), expected, rtol=1e-10, atol=1e-12), f"{name} n={n}: C gradient differs"
            fns.append(functools.partial(in_c.grad, x))
        min_time = 0.05 if n <= 10_000 else 0.2
        times = interleaved(fns, min_time=min_time, repeat=repeat)
        c_text = f"{times[2] * 1e3:8.2f}ms" if in_c is not None else f"{'-':>10}"
        print(f"  {n:>9}  {times[0] * 1e3:10.2f}ms  {times[1] * 1e3:8.2f}ms  {times[0] / times[1]:6.2f}  "
              f"{times[0] / n * 1e9:8.0f}  {c_text}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 10^3 and 10^4 only (a smoke run)")
    parser.add_argument("--c", action="store_true", help="add the C target's column (needs a C compiler)")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.quick else SIZES
    repeat = 3 if args.quick else 5
    for name in WORKLOADS:
        table(name, sizes, repeat, args.c)


if __name__ == "__main__":
    main()
