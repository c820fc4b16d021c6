"""``scipy.linalg.lu``: LU with partial pivoting written in NumPy, so every target runs it and it differentiates.

Doolittle elimination column by column, the pivot the first entry of largest magnitude on or
below the diagonal (LAPACK's ``getrf`` choice, so ``P`` is SciPy's where no two candidates tie in
magnitude), rows swapped by a gather. Each of the ``min(m, n)`` steps is a few array operations
(a Python loop of static length, unrolled), so the emitted code is O(min(m, n)) statements. The
pivot choice has no derivative (a permutation is piecewise constant); ``L`` and ``U`` are
differentiated through the elimination, which is the derivative of the factorisation for a fixed
permutation. Works for rectangular ``a`` (``L`` is m x k, ``U`` k x n, ``k = min(m, n)``). Complex ``a`` pivots
on the largest ``|Re| + |Im|``, as LAPACK's ``zgetrf``.

>>> import numpy as np, gradc
>>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
>>> p, l, u = lu(a)
>>> bool(np.allclose(p @ l @ u, a)), float(u[0, 0])
(True, 3.0)
>>> gradc.grad(lambda a: lu(a)[2][1, 1])(a)  # U[1, 1] = 2 - 4/3: d/da of a01 - a00 a11 / a10
array([[-1.33333333,  1.        ],
       [ 0.44444444, -0.33333333]])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.ir.builder import Traced


def _swap(values, j, p):
    """``values`` with entries (rows) ``j`` and ``p`` exchanged (``p`` may be traced)."""
    rows = np.arange(values.shape[0])
    order = np.where(rows == j, p, np.where(rows == p, j, rows))
    if isinstance(order, Traced) and not isinstance(values, Traced):  # a constant gathered at traced positions
        values = values + np.zeros_like(p)
    return values[order]


def _factor(a):
    m, n = a.shape
    k = min(m, n)
    u = a + 0.0
    lower = np.zeros((m, k)) + 0.0 * a[:, :1]
    perm = np.arange(m)
    for j in range(k):
        column = u[j:, j]
        if np.dtype(column.dtype).kind == "c":  # LAPACK's izamax: the largest |Re| + |Im|
            p = j + np.argmax(np.abs(np.real(column)) + np.abs(np.imag(column)))
        else:
            p = j + np.argmax(np.abs(column))
        u, lower, perm = _swap(u, j, p), _swap(lower, j, p), _swap(perm, j, p)
        pivot = u[j, j]
        factors = np.where(pivot != 0.0, u[j + 1:, j] / np.where(pivot != 0.0, pivot, 1.0), 0.0)
        lower = np.concatenate([lower[:j + 1], np.concatenate(
            [lower[j + 1:, :j], factors[:, None], lower[j + 1:, j + 1:]], axis=1)], axis=0)
        below = u[j + 1:] - factors[:, None] * u[j][None, :]
        u = np.concatenate([u[:j + 1], below], axis=0)
    lower = lower + np.eye(m, k)
    upper = np.triu(u[:k])
    return perm, lower, upper


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """``scipy.linalg.lu`` (see the module docstring): ``(P, L, U)``, ``(PL, U)`` or ``(perm, L, U)``."""
    if not isinstance(a, Traced):
        a = np.asarray(a, dtype=np.float64)
    if len(a.shape) != 2:
        raise TraceError(f"scipy.linalg.lu: the matrix has shape {tuple(a.shape)}, not two axes",
                         where=user_location(), hint="factor one matrix at a time")
    if np.dtype(a.dtype).kind not in "fc":
        a = a.astype(np.float64)
    perm, lower, upper = _factor(a)
    if permute_l or p_indices:
        rows = np.argsort(perm)  # a = lower[rows] @ upper
        return (lower[rows], upper) if permute_l else (rows, lower, upper)
    real = {"complex128": "float64", "complex64": "float32"}.get(str(np.dtype(a.dtype)), a.dtype)  # SciPy's P: real
    p = (np.arange(a.shape[0])[:, None] == perm[None, :]).astype(real)  # A = P L U: P[perm[i], i] = 1
    return p, lower, upper
