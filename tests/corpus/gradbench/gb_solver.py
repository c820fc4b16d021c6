"""GradBench's gradient-descent solver (cpp/gradbench/gd.hpp) for ``saddle`` and ``particle``, in Python.

GradBench fixes the algorithm so that every tool follows the same path: step ``x - eta * g``; a step
that lowers f is taken (and after 10 taken steps in a row eta doubles), one that does not halves eta;
stop when ``|g| <= 1e-5`` or the step is shorter than 1e-5. Written as a user writes a solver:
``while True:`` with ``return`` inside; ``f`` and ``grad_f`` are any callables (plain functions,
gradc transforms, or traced code when the solver itself is differentiated).
"""
from __future__ import annotations

import numpy as np


def magnitude(v):
    return np.sqrt(np.sum(v * v))


def vector_dist(u, v):
    return np.sqrt(np.sum((u - v) * (u - v)))


def multivariate_argmin(f, grad_f, x):
    fx = f(x)
    gx = grad_f(x)
    i = 0
    eta = 1e-5
    while True:
        if magnitude(gx) <= 1e-5:
            return x
        elif i == 10:
            eta *= 2
            i = 0
        else:
            x_prime = x - eta * gx
            if vector_dist(x, x_prime) <= 1e-5:
                return x
            fx_prime = f(x_prime)
            if fx_prime < fx:
                x = x_prime
                fx = fx_prime
                gx = grad_f(x)
                i += 1
            else:
                eta /= 2
                i = 0


def multivariate_argmax(f, grad_f, x):
    return multivariate_argmin(lambda v: -f(v), lambda v: -grad_f(v), x)


def multivariate_max(f, grad_f, x):
    return f(multivariate_argmax(f, grad_f, x))


def within_gradbench_tolerance(expected, actual, tolerance=1e-4):
    """GradBench's validator: |x - y| / max(1, |x| + |y|) <= 1e-4 entrywise (ADBench's comparison)."""
    expected = np.asarray(expected, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    scale = np.maximum(np.abs(expected) + np.abs(actual), 1.0)
    return bool(np.all(np.abs(expected - actual) / scale <= tolerance))
