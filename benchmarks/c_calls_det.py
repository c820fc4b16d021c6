"""GradBench's det (cofactor expansion by recursion) on the C target: compile time by size, gradient checked.

``det`` is written as GradBench's reference implementations write it: the first row's cofactors,
each minor made by ``np.delete`` twice, the recursion on shapes (each size one traced helper
body, emitted once as a ``static`` C function, with its derivative). For each size the table gives
the time to trace, differentiate, optimise and emit the C (``emit s``), the C compiler's time
(``cc s``), the lines of C and the number of helper functions in it; the gradient is checked
against NumPy's closed form ``det(A) * inv(A).T`` (and, up to ``--fd-max``, central differences).

    PYTHONPATH=. python benchmarks/c_calls_det.py              # sizes 4 to 11
    PYTHONPATH=. python benchmarks/c_calls_det.py --sizes 4 5  # some sizes
    PYTHONPATH=. python benchmarks/c_calls_det.py --variant sliced  # minors by slicing
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time

import numpy as np

import gradc
from gradc.backends.c import build as c_build

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
from cofactor import det  # noqa: E402  (the example of the README: det as GradBench writes it)


def det_sliced(A):
    """The same, each minor made by slicing and concatenation."""
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate([A[1:, :j], A[1:, j + 1:]], axis=1)
        total = total + (-1.0) ** j * A[0, j] * det_sliced(minor)
    return total


VARIANTS = {"delete": det, "sliced": det_sliced}


def central(f, A, h=1e-6):
    g = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[idx] = h
        g[idx] = (f(A + e) - f(A - e)) / (2 * h)
    return g


def measure(det, n: int, fd_max: int, run_max: int) -> dict:
    A = np.random.default_rng(n).normal(size=(n, n))
    t0 = time.perf_counter()
    source, _ = c_build.emit_sources_for(det, A)
    emitted = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GRADC_CACHE_DIR"] = tmp  # a cold cache: the compiler runs
        t0 = time.perf_counter()
        c = gradc.compile(det, A, target="c")
        total = time.perf_counter() - t0
        row = {"n": n, "emit s": emitted, "compile s": total, "cc s": max(total - emitted, 0.0),
               "lines": source.count("\n"), "functions": len(re.findall(r"^static (?:void|int) gradc_call", source,
                                                                          flags=re.M))}
        if n <= run_max:
            g = c.grad(A)
            closed = np.linalg.det(A) * np.linalg.inv(A).T
            row["vs numpy"] = float(np.max(np.abs(g - closed)) / (1 + np.max(np.abs(closed))))
            if n <= fd_max:
                row["vs fd"] = float(np.max(np.abs(g - central(det, A))) / (1 + np.max(np.abs(closed))))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=list(range(4, 12)))
    parser.add_argument("--fd-max", type=int, default=6, help="largest size checked by finite differences")
    parser.add_argument("--run-max", type=int, default=8, help="largest size whose gradient is run and checked")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="delete",
                        help="minors by np.delete (as GradBench writes it) or by slicing")
    args = parser.parse_args()
    print("| n | emit s | compile s (emit + cc + load) | lines of C | helper functions | grad vs NumPy | vs FD |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        r = measure(VARIANTS[args.variant], n, args.fd_max, args.run_max)
        print(f"| {n} | {r['emit s']:.2f} | {r['compile s']:.2f} | {r['lines']} | {r['functions']} | "
              f"{r.get('vs numpy', float('nan')):.1e} | {r.get('vs fd', float('nan')):.1e} |", flush=True)


if __name__ == "__main__":
    main()
