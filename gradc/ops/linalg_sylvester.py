"""SciPy's Sylvester solver, banded solvers and the derivative rule of ``sqrtm``, from registry ops.

* ``solve_sylvester(a, b, q)``: ``a x + x b = q`` is one linear system in the entries of ``x``
  (row-major): ``(kron(a, I) + kron(I, b^T)) vec(x) = vec(q)``, solved by ``solve``. Its
  derivatives (in ``a``, ``b`` and ``q``) are those of ``kron`` and ``solve``. The system has
  ``(n m)^2`` entries: meant for the small matrices of a model, not for n in the hundreds.
* ``solve_continuous_lyapunov`` is ``solve_sylvester(a, a^T, q)``; ``solve_discrete_lyapunov``
  (``x - a x a^T = q``) the system ``(I - kron(a, a)) vec(x) = vec(q)``.
* ``solve_banded((l, u), ab, b)`` and ``solveh_banded(ab, b, lower)``: the dense matrix SciPy's
  band storage stands for (one static ``gather``; entries outside the band read a zero, so
  their gradient is zero, as SciPy ignores them), then ``solve``.
* ``scipy.linalg.sqrtm``'s rules (in ``gradc.trace.scipy_dispatch``, which computes the root) are
  Sylvester equations: ``da = dy y + y dy``, so ``dy`` solves one in ``y``, and ``a_bar`` solves
  ``y^T a_bar + a_bar y^T = y_bar``.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> solve_sylvester(np.eye(2), np.eye(2), 2.0 * np.ones((2, 2)))
array([[1., 1.],
       [1., 1.]])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, TraceError
from gradc.ops import contract as ct
from gradc.ops import elementwise as ew
from gradc.ops import linalg_api as lin
from gradc.ops import shape as sh
from gradc.ops.linalg_decomp import conj_of, mT, real_of
from gradc.ops.values import aval, first_traced, lift


def _matrix(x, what, name):
    t = aval(x)
    if t.ndim != 2 or not all(isinstance(d, int) for d in t.shape):
        raise ShapeError(f"{what}: {name} must be a matrix of fixed size, not of shape {t.shape}",
                         hint="pass 2-d arrays")
    return t.shape


def _float(x, anchor):
    x = lift(x, anchor)
    return x if aval(x).dtype in ("f64", "f32", "c128", "c64") else ew.astype(x, "f64")


def solve_sylvester(a, b, q, what="scipy.linalg.solve_sylvester"):
    """``x`` with ``a x + x b = q`` (see the module docstring)."""
    anchor = first_traced([a, b, q])
    a, b, q = (_float(x, anchor) for x in (a, b, q))
    (n, n2), (m, m2), qs = _matrix(a, what, "a"), _matrix(b, what, "b"), _matrix(q, what, "q")
    if n != n2 or m != m2 or qs != (n, m):
        raise ShapeError(f"{what}: a must be n x n, b m x m and q n x m (got {aval(a).shape}, {aval(b).shape}, "
                         f"{aval(q).shape})", hint="a x + x b = q with x of q's shape")
    dtype = np.result_type(aval(a).np_dtype, aval(b).np_dtype)
    system = ew.add(ct.kron(a, np.eye(m, dtype=dtype)), ct.kron(np.eye(n, dtype=dtype), mT(b)))
    x = lin.solve(system, sh.reshape(q, (n * m,)), what=what)
    return sh.reshape(x, (n, m))


def solve_continuous_lyapunov(a, q, what="scipy.linalg.solve_continuous_lyapunov"):
    """``x`` with ``a x + x a^H = q``."""
    return solve_sylvester(a, conj_of(mT(lift(a, first_traced([a, q])))), q, what=what)


def solve_discrete_lyapunov(a, q, method=None, what="scipy.linalg.solve_discrete_lyapunov"):
    """``x`` with ``x - a x a^H = q``: ``(I - kron(a, conj(a))) vec(x) = vec(q)`` (row-major), solved."""
    if method not in (None, "direct", "bilinear"):
        raise ShapeError(f"{what}: unknown method {method!r}", hint="pass method='direct' or 'bilinear' (or none)")
    anchor = first_traced([a, q])
    a, q = _float(a, anchor), _float(q, anchor)
    (n, n2), qs = _matrix(a, what, "a"), _matrix(q, what, "q")
    if n != n2 or qs != (n, n):
        raise ShapeError(f"{what}: a and q must be square matrices of one size (got {aval(a).shape}, "
                         f"{aval(q).shape})", hint="x - a x a^T = q with x of q's shape")
    system = ew.sub(np.eye(n * n, dtype=aval(a).np_dtype), ct.kron(a, conj_of(a)))
    return sh.reshape(lin.solve(system, sh.reshape(q, (n * n,)), what=what), (n, n))


def _band_positions(n, rows_above, rows_below, lower_storage=None):
    """For each entry (i, j) of the n x n matrix, its place in the flattened band storage (``-1``: outside)."""
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    if lower_storage is None:  # solve_banded's storage: a[i, j] = ab[u + i - j, j]
        row = rows_above + i - j
        inside = (j - rows_above <= i) & (i <= j + rows_below)
        return np.where(inside, row * n + j, -1)
    if lower_storage:  # solveh_banded, lower: a[i, j] = ab[i - j, j] for i >= j, mirrored
        lo_i, lo_j = np.maximum(i, j), np.minimum(i, j)
        return np.where(lo_i - lo_j <= rows_below, (lo_i - lo_j) * n + lo_j, -1)
    up_i, up_j = np.minimum(i, j), np.maximum(i, j)  # upper: a[i, j] = ab[u + i - j, j] for i <= j, mirrored
    return np.where(up_j - up_i <= rows_above, (rows_above + up_i - up_j) * n + up_j, -1)


def _dense(ab, positions):
    """The matrix whose entries are ``ab``'s at ``positions`` (zero at -1)."""
    flat = sh.reshape(ab, (aval(ab).size,))
    zero = lift(np.zeros(1, aval(ab).np_dtype), first_traced([ab]))  # what entries outside the band read
    flat = sh.concatenate([flat, zero], 0)
    index = np.where(positions < 0, aval(ab).size, positions).astype(np.int64)
    return sh.gather(flat, [index], (("array", 0),))


def solve_banded(l_and_u, ab, b, what="scipy.linalg.solve_banded"):
    """``scipy.linalg.solve_banded((l, u), ab, b)``: the dense system SciPy's band storage stands for."""
    lower, upper = (int(v) for v in l_and_u)
    ab = _float(ab, first_traced([ab, b]))
    rows, n = _matrix(ab, what, "ab")
    if rows != lower + upper + 1:
        raise ShapeError(f"{what}: invalid values for the number of lower and upper diagonals: l+u+1 "
                         f"({lower + upper + 1}) does not equal ab.shape[0] ({rows})",
                         hint="ab has one row per diagonal: u above, the main one, l below")
    return lin.solve(_dense(ab, _band_positions(n, upper, lower)), _float(b, ab), what=what)


def solveh_banded(ab, b, lower=False, what="scipy.linalg.solveh_banded"):
    """``scipy.linalg.solveh_banded(ab, b, lower)``: the symmetric matrix of the band storage, solved."""
    ab = _float(ab, first_traced([ab, b]))
    rows, n = _matrix(ab, what, "ab")
    positions = _band_positions(n, rows - 1, rows - 1, lower_storage=bool(lower))
    if not aval(ab).is_complex:
        return lin.solve(_dense(ab, positions), _float(b, ab), what=what)
    # Hermitian: the stored triangle as it is, its mirror conjugated, the diagonal's imaginary part unread
    i, j = np.indices((n, n))
    stored = (i >= j) if lower else (i <= j)
    kept, mirrored = np.where(stored & (i != j), positions, -1), np.where(~stored, positions, -1)
    diagonal = ew.astype(real_of(_dense(ab, np.where(i == j, positions, -1))), aval(ab).dtype)
    dense = ew.add(ew.add(_dense(ab, kept), conj_of(_dense(ab, mirrored))), diagonal)
    return lin.solve(dense, _float(b, ab), what=what)


def check_square(a, what) -> int:
    """``n`` for an ``n x n`` matrix ``a``; a clear error otherwise."""
    n, m = _matrix(a, what, "the argument")
    if n != m:
        raise ShapeError(f"{what}: expected a square matrix, not of shape {aval(a).shape}", hint="pass n x n")
    if aval(a).dtype not in ("f64", "f32", "c128", "c64", "i64", "i32"):
        raise TraceError(f"{what} of a {aval(a).dtype} matrix is not supported", hint="pass a float or complex matrix")
    return n
