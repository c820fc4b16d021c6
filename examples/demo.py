"""What `make demo` runs: the tutorial loss traced, differentiated, emitted and run.

It prints the IR, the emitted NumPy gradient module, and the gradient it
computes next to a finite-difference check.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from logistic import loss  # noqa: E402

import gradc  # noqa: E402


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


if __name__ == "__main__":
    main()
