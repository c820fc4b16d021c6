"""``ufunc.accumulate`` and ``ufunc.reduce`` (with ``dtype=``, ``initial=``) on traced values (tables the tracer's
``__array_ufunc__`` reads), and ``np.nancumsum``/``np.nancumprod``.

``np.add.accumulate`` and ``np.multiply.accumulate`` are ``cumsum``/``cumprod`` (NumPy's order of operations);
``subtract``/``divide`` accumulate as ``x0 - cumsum(rest)`` and ``x0 / cumprod(rest)`` (NumPy's left fold).
The other associative ufuncs (``maximum``, ``minimum``, ``fmax``, ``fmin``, ``logaddexp``, ``logaddexp2``, the
logical and bitwise ones) accumulate by recursive doubling (``log2 n`` passes of the ufunc on shifted slices:
``O(n log n)`` work, no loop in the emitted code) and reduce by pairwise halving; each pass is the ufunc itself,
so derivatives come from its rule (a running maximum's gradient goes to the element that is the maximum). For
floating ``logaddexp`` the order of operations differs from NumPy's sequential one only in rounding.

>>> from gradc.trace import trace
>>> print(trace(lambda x: np.maximum.accumulate(x), np.ones(3)).eqns[-1].op)
concatenate
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.types import dtype_name
from gradc.ops import elementwise as ew
from gradc.ops import stats
from gradc.ops.stats_moments import _isnan
from gradc.ops.values import aval
from gradc.trace.numpy_dispatch import UFUNC_REDUCE

ASSOCIATIVE = (np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp, np.logaddexp2, np.logical_and,
               np.logical_or, np.bitwise_and, np.bitwise_or, np.bitwise_xor)


def _name(ufunc):
    return f"np.{ufunc.__name__}"


def _check(ufunc, method, dtype, out, extra):
    if out is not None or extra:
        given = sorted([*(["out"] if out is not None else []), *extra])
        raise TraceError(f"{_name(ufunc)}.{method}: {', '.join(k + '=' for k in given)} not supported by gradc",
                         hint="drop it and assign the result to a new name")


def _cast(x, dtype):
    return x if dtype is None else ew.astype(x, dtype_name(np.dtype(dtype)))


def _doubling(ufunc, x):
    """Inclusive scan of ``ufunc`` along axis 0 by recursive doubling (Hillis and Steele)."""
    n, k = aval(x).shape[0], 1
    while k < n:
        x = np.concatenate([x[:k], ufunc(x[:-k], x[k:])], axis=0)
        k *= 2
    return x


def accumulate(ufunc, array, axis=0, dtype=None, out=None, **extra):
    """``ufunc.accumulate(array, axis, dtype)`` on a traced array."""
    _check(ufunc, "accumulate", dtype, out, extra)
    x = _cast(array, dtype)
    if aval(x).ndim == 0:
        raise TraceError(f"{_name(ufunc)}.accumulate of a 0-d array", hint="pass an array with at least one axis")
    if ufunc is np.add:
        return stats.cumsum(x, axis)
    if ufunc is np.multiply:
        return stats.cumprod(x, axis)
    moved = np.moveaxis(x, axis, 0)
    if ufunc in (np.subtract, np.true_divide):
        rest = (stats.cumsum if ufunc is np.subtract else stats.cumprod)(moved[1:], 0)
        scanned = np.concatenate([moved[:1], ufunc(moved[:1], rest)], axis=0)
    else:
        scanned = _doubling(ufunc, moved)
    return np.moveaxis(scanned, 0, axis)


def _halving(ufunc, x):
    """``ufunc`` folded over axis 0 pairwise (an odd element carried to the next pass)."""
    while aval(x).shape[0] > 1:
        n = aval(x).shape[0]
        half = ufunc(x[: n // 2], x[n // 2: 2 * (n // 2)])
        x = np.concatenate([half, x[2 * (n // 2):]], axis=0) if n % 2 else half
    return x[0]


def _tree_reduce(ufunc):
    def apply(x, axis=0, keepdims=False):
        ndim = aval(x).ndim
        axes = tuple(range(ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
        axes = tuple(a % ndim for a in axes)
        if not axes:
            return x
        moved = np.moveaxis(x, axes, tuple(range(len(axes))))
        shape = aval(moved).shape
        if aval(moved).size == 0:
            raise TraceError(f"{_name(ufunc)}.reduce of an empty array has no identity in gradc",
                             hint="reduce a non-empty array")
        merged = np.reshape(moved, (int(np.prod(shape[: len(axes)])),) + tuple(shape[len(axes):]))
        out = _halving(ufunc, merged)
        if keepdims:
            out = np.expand_dims(out, axes)
        return out
    return apply


def reduce(ufunc, array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
    """``ufunc.reduce`` with NumPy's other keywords: ``dtype=``, ``initial=`` (combined with the reduction),
    and ``subtract``/``divide`` (NumPy's left fold: ``x0 - sum(rest)``, ``x0 / prod(rest)``)."""
    if where is not True:
        raise TraceError(f"{_name(ufunc)}.reduce with where= is not supported by gradc",
                         hint="mask first: np.where(mask, x, identity), then reduce")
    _check(ufunc, "reduce", dtype, out, {})
    x = _cast(array, dtype)
    if ufunc in (np.subtract, np.true_divide):
        if isinstance(axis, tuple) and len(axis) == 1:
            axis = axis[0]
        if isinstance(axis, tuple) or (axis is None and np.ndim(x) > 1):
            raise TraceError(f"{_name(ufunc)}.reduce is not reorderable: it takes one axis (NumPy's rule)",
                             hint="pass axis=k")
        moved = np.moveaxis(x, axis, 0) if axis is not None else x
        rest = (np.sum if ufunc is np.subtract else np.prod)(moved[1:], axis=0)
        value = ufunc(moved[0], rest)
        if keepdims:
            value = np.expand_dims(value, tuple(range(np.ndim(x))) if axis is None else axis)
    else:
        value = UFUNC_REDUCE[ufunc](x, axis, keepdims)
    return value if initial is np._NoValue else ufunc(value, initial)


def nancumsum(a, axis=None, dtype=None, out=None):
    """``np.nancumsum``: NaN counts as 0."""
    _check(np.add, "nancumsum", dtype, out, {})
    a = _cast(a, dtype)
    return stats.cumsum(ew.where(_isnan(a), 0, a), axis)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``np.nancumprod``: NaN counts as 1."""
    _check(np.multiply, "nancumprod", dtype, out, {})
    a = _cast(a, dtype)
    return stats.cumprod(ew.where(_isnan(a), 1, a), axis)


UFUNC_ACCUMULATE = {u: u for u in (np.add, np.multiply, np.subtract, np.true_divide, *ASSOCIATIVE)}
for _ufunc in ASSOCIATIVE:
    UFUNC_REDUCE.setdefault(_ufunc, _tree_reduce(_ufunc))
FUNCTIONS = {np.nancumsum: nancumsum, np.nancumprod: nancumprod}

__all__ = ["accumulate", "reduce", "nancumsum", "nancumprod", "UFUNC_ACCUMULATE", "FUNCTIONS"]
