"""``scipy.linalg``'s triangular and factored solves and ``expm``, on the matrix primitives.

``cho_factor`` returns the factor with zeros (not SciPy's leftover values) in the other
triangle; ``lu_factor`` returns stand-ins that only ``lu_solve`` accepts, which then solves
with the factored matrix itself (LAPACK's gesv is getrf + getrs, so the values agree).

>>> cho_solve(cho_factor(np.diag([4.0, 1.0])), np.array([4.0, 1.0]))
array([1., 1.])
"""
from __future__ import annotations

import numpy as np  # noqa: F401  (the examples)

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import TraceError
from gradc.ir.registry import bind
from gradc.ops.linalg_api import _squares, _with_batch, as_float, cholesky, refuse_complex, solve
from gradc.ops.linalg_decomp import conj_of, eye_like, mT, tri, triangular_solve
from gradc.ops.values import aval, broadcast_shapes


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, what="scipy.linalg.solve_triangular"):
    """``scipy.linalg.solve_triangular`` (batched like ``solve``).

    >>> solve_triangular(np.array([[2.0, 2.0], [0.0, 1.0]]), np.array([4.0, 1.0]))
    array([1., 1.])
    """
    a = _squares(a, what)
    a, b = as_float(a, b)
    refuse_complex(b, what)
    if trans in ("C", 2):  # the conjugate transpose (the transpose of a real matrix)
        a, trans = conj_of(a), True
    elif trans in ("T", 1):
        trans = True
    elif trans in (0, "N"):
        trans = False
    else:
        raise TraceError(f"{what}: trans={trans!r}", hint="use trans=0 (or 'N'), 1 (or 'T') or 2 (or 'C')")
    if unit_diagonal:  # the diagonal is taken as ones, whatever a holds there
        a = ew.add(tri(a, lower, -1 if lower else 1), eye_like(a))
    vector = aval(b).ndim == aval(a).ndim - 1
    if vector:
        b = sh.reshape(b, aval(b).shape + (1,))
    batch = broadcast_shapes(aval(a).shape[:-2], aval(b).shape[:-2], what=f"{what} batch dimensions")
    x = triangular_solve(_with_batch(a, batch), _with_batch(b, batch), lower, trans)
    return sh.reshape(x, aval(x).shape[:-1]) if vector else x


def cho_factor(a, lower=False, what="scipy.linalg.cho_factor"):
    """``(c, lower)``; c is the factor with zeros (not SciPy's leftover values) in the other triangle."""
    return cholesky(a, upper=not lower, what=what), bool(lower)


def cho_solve(c_and_lower, b, what="scipy.linalg.cho_solve"):
    """``scipy.linalg.cho_solve``: two triangular solves.

    >>> cho_solve(cho_factor(np.diag([4.0, 1.0])), np.array([4.0, 1.0]))
    array([1., 1.])
    """
    c, lower = c_and_lower  # a = L L^H (lower) or U^H U: solve with the factor, then its conjugate transpose
    y = solve_triangular(c, b, trans=0 if lower else 2, lower=lower, what=what)
    return solve_triangular(c, y, trans=2 if lower else 0, lower=lower, what=what)


def lu_factor(a, what="scipy.linalg.lu_factor"):
    """``(lu, piv)`` stand-ins: gradc solves with ``a`` itself (LAPACK's gesv is getrf + getrs)."""
    a = _squares(a, what)
    return LUFactor(a, "lu"), LUFactor(a, "piv")


def lu_solve(lu_and_piv, b, trans=0, what="scipy.linalg.lu_solve"):
    """``scipy.linalg.lu_solve`` of a ``lu_factor`` result: a solve with the factored matrix.

    >>> lu_solve(lu_factor(np.diag([2.0, 4.0])), np.array([2.0, 4.0]))
    array([1., 1.])
    """
    lu = lu_and_piv[0]
    if not isinstance(lu, LUFactor):
        raise TraceError(f"{what} needs the result of scipy.linalg.lu_factor in the same function",
                         hint="call lu_factor(a) inside the differentiated function, or use np.linalg.solve(a, b)")
    a = lu.matrix if trans == 0 else mT(lu.matrix) if trans == 1 else conj_of(mT(lu.matrix))  # 2: a^H x = b
    return solve(a, b, what=what)


class LUFactor:
    """What ``lu_factor`` returns under gradc: only ``lu_solve`` can use it."""

    __slots__ = ("matrix", "part")

    def __init__(self, matrix, part):
        self.matrix = matrix
        self.part = part

    def _refuse(self, *args, **kwargs):
        raise TraceError(f"the {self.part!r} result of scipy.linalg.lu_factor is only usable by "
                         "scipy.linalg.lu_solve under gradc",
                         hint="for a determinant use np.linalg.slogdet(a); for a solve use lu_solve")

    __array__ = __array_function__ = __array_ufunc__ = __getitem__ = __add__ = __mul__ = __matmul__ = _refuse
    shape = property(_refuse)


def expm(a, what="scipy.linalg.expm"):
    """``scipy.linalg.expm``: the matrix exponential (its derivative is the Frechet derivative).

    >>> expm(np.zeros((2, 2)))
    array([[1., 0.],
           [0., 1.]])
    """
    return bind("expm", _squares(a, what))
