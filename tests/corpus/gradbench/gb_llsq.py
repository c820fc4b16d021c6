"""GradBench ``llsq`` (cmpad's llsq_obj): a linear least-squares objective and its gradient.

``y(x) = 1/2 sum_{i<n} (s_i - x_0 - x_1 t_i - ... - x_{m-1} t_i^{m-1})^2`` with
``t_i = -1 + 2 i / (n - 1)`` and ``s_i = sign(t_i)``. Inputs: ``x = rand(m)``, ``m = 128``,
``n`` from 16 to 16,392; ``n`` is an integer, not differentiated. Closed form of the gradient:
``-V^T (s - V x)`` with the Vandermonde matrix ``V[i, j] = t_i^j``.
"""
from __future__ import annotations

import numpy as np

DEFAULT_SIZE = (16, 128)  # (n, m): the eval's smallest default
SMALL_SIZE = (5, 4)


def t(i, n):
    return -1 + i * 2 / (n - 1)


def llsq(x, n):
    """The scalar form of the C++ reference: a running product of t_i, a running sum of squares."""
    m = x.shape[0]
    total = 0.0
    for i in range(n):
        ti = t(i, n)
        inner = np.sign(ti)
        mul = 1.0
        for j in range(m):
            inner = inner - x[j] * mul
            mul = mul * ti
        total = total + inner * inner
    return total / 2


def llsq_vectorised(x, n):
    """The vectorised form (as the JAX tool's, a cumulative product of powers of t per row)."""
    m = x.shape[0]
    ts = -1 + np.arange(n) * 2 / (n - 1)
    powers = np.cumprod(np.concatenate([np.ones((n, 1)), np.repeat(ts[:, None], m - 1, axis=1)], axis=1), axis=1)
    residual = np.sign(ts) - powers @ x
    return np.sum(residual ** 2) / 2


def generate(size=SMALL_SIZE, seed=31337):
    n, m = size
    rng = np.random.RandomState(seed)
    return {"x": rng.rand(m), "n": n}


def closed_form_gradient(x, n):
    ts = -1 + np.arange(n) * 2 / (n - 1)
    vandermonde = ts[:, None] ** np.arange(x.shape[0])[None, :]
    return -vandermonde.T @ (np.sign(ts) - vandermonde @ x)
