"""Minimise the Rosenbrock function with a gradient compiled by gradc.

Run it: ``python examples/rosenbrock_scipy.py``. With SciPy installed, the
compiled gradient is passed to ``scipy.optimize.minimize(..., jac=...)``
(BFGS); without SciPy (or with ``--no-scipy``), plain gradient descent with
backtracking runs instead.
Either way the minimum at (1, 1, ..., 1) is found.
"""
import sys

import numpy as np

import gradc


def rosenbrock(x):
    """The n-dimensional Rosenbrock function; its minimum is 0 at x = (1, ..., 1)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def gradient_descent(value_and_grad, x, steps=20000, tol=1e-10):
    """Gradient descent with a backtracking (Armijo) line search."""
    step = 1e-3
    for i in range(steps):
        f, g = value_and_grad(x)
        if g @ g < tol:
            return x, i
        while True:
            candidate = x - step * g
            if rosenbrock(candidate) <= f - 0.5 * step * (g @ g):
                break
            step *= 0.5
        x = candidate
        step *= 2.0
    return x, steps


def main(n=5, use_scipy=True):
    x0 = np.full(n, -1.0)
    x0[::2] = -1.2
    compiled = gradc.compile(rosenbrock, x0)  # traced, differentiated and emitted for f64[n]
    print(f"rosenbrock at x0 = {rosenbrock(x0):.4f}")
    try:
        from scipy.optimize import minimize
    except ImportError:
        minimize = None
    if not use_scipy:
        minimize = None
    if minimize is not None:
        result = minimize(compiled.forward, x0, jac=compiled.grad, method="BFGS", options={"gtol": 1e-8})
        x, how = result.x, f"scipy.optimize.minimize (BFGS) with gradc's jac: {result.nit} iterations"
    else:
        x, steps = gradient_descent(compiled.value_and_grad, x0)
        how = f"gradient descent with gradc's gradient (without SciPy): {steps} steps"
    print(how)
    print("x* =", np.round(x, 6))
    print(f"rosenbrock at x* = {rosenbrock(x):.3e}")
    return x


if __name__ == "__main__":
    main(use_scipy="--no-scipy" not in sys.argv)
