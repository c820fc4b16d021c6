"""What `make demo` runs: the tutorial loss traced, differentiated, emitted and run.

It prints the IR, the emitted NumPy gradient module, and the gradient it
computes next to a finite-difference check; then the same gradient as C
(its header, built with the system compiler and run in process), next to
the NumPy target's numbers.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from logistic import loss  # noqa: E402

import gradc  # noqa: E402
from gradc.backends.c.build import emit_sources_for, find_compiler  # noqa: E402


def main():
    rng = np.random.default_rng(0)
    x, y = np.ones(5), np.zeros(3)
    w, b = rng.standard_normal((5, 3)), rng.standard_normal(3)
    print("== IR of loss (gradc.trace)")
    print(gradc.trace(loss, x, y, w, b))
    compiled = gradc.compile(loss, x, y, w, b, wrt=("w", "b"))
    print("\n== emitted NumPy module (gradc.compile(...).source)")
    print(compiled.source)
    value, (w_bar, b_bar) = compiled(x, y, w, b)
    print("== running it")
    print("loss  =", value)
    print("b_bar =", b_bar)
    h, e = 1e-6, np.zeros(3)
    e[0] = h
    fd = (loss(x, y, w, b + e) - loss(x, y, w, b - e)) / (2 * h)
    print(f"finite difference d loss / d b[0] = {fd:.10f}, gradc: {b_bar[0]:.10f}")
    run_c(x, y, w, b, value, w_bar, b_bar)


def run_c(x, y, w, b, value, w_bar, b_bar):
    if find_compiler() is None:
        source, header = emit_sources_for(loss, x, y, w, b, wrt=("w", "b"))
        print("\n== C target: no C compiler found (set $CC or install gcc); the emitted header is:")
        print(header)
        return
    c = gradc.compile(loss, x, y, w, b, wrt=("w", "b"), target="c")
    print("\n== the C header (gradc.compile(..., target='c').header)")
    print(c.header)
    c_value, (c_w_bar, c_b_bar) = c(x, y, w, b)
    print("== running the C gradient in process")
    print("loss  =", c_value)
    print("b_bar =", c_b_bar)
    worst = max(abs(c_value - value), np.max(abs(c_w_bar - w_bar)), np.max(abs(c_b_bar - b_bar)))
    print(f"C and NumPy targets differ by at most {worst:.1e}")


if __name__ == "__main__":
    main()
