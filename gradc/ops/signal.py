"""``scipy.signal.convolve`` and ``correlate`` of n-d arrays, as compositions of registry ops.

The full convolution ``out[n] = sum_k a[n - k] v[k]`` is the sum, over the entries ``k``
of the smaller operand ``v``, of the larger one ``a`` scaled by ``v[k]`` and added at the
offset ``k`` (an ``index_add`` at a slice: ``out[k0:k0 + n0, ...] += a * v[k]``). Each term is a
registry op with a C lowering and a tested VJP, so both targets have the convolution and
its derivatives in both operands. The graph grows with the smaller operand's size: meant
for filters and kernels; two long 1-d signals use ``np.convolve``'s primitive instead (one op,
``convolve``, whose C lowering the C backend's convolutions provide).
``'same'`` and ``'valid'`` are centred slices of the full result, as SciPy takes them;
``correlate(a, v)`` is ``convolve(a, v reversed)``.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
array([0. , 1. , 2.5, 4. , 1.5])
>>> correlate(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), "valid")
array([3., 5.])
"""
from __future__ import annotations

import itertools

import numpy as np

from gradc.errors import ShapeError, TraceError
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops import stats
from gradc.ops.index_add import index_add
from gradc.ops.values import aval, first_traced, lift, result_dtype

MODES = ("full", "same", "valid")
METHODS = ("auto", "direct", "fft")


def _check(what, a, v, mode, method):
    if mode not in MODES:
        raise TraceError(f"{what}: acceptable mode flags are 'valid', 'same', or 'full', not {mode!r}",
                         hint="pass mode='full', 'same' or 'valid'")
    if method not in METHODS:
        raise TraceError(f"{what}: acceptable method flags are 'auto', 'direct', or 'fft', not {method!r}",
                         hint="drop method= (gradc computes the same values either way)")
    ta, tv = aval(a), aval(v)
    if ta.ndim != tv.ndim:
        raise ShapeError(f"{what}: in1 and in2 should have the same dimensionality ({ta.ndim} != {tv.ndim})",
                         hint="reshape one input so both have the same number of axes")
    for t in (ta, tv):
        if not all(isinstance(d, int) for d in t.shape):
            raise ShapeError(f"{what} of arrays of named size", hint="compile for fixed sizes")
    if mode == "valid" and not (all(p >= q for p, q in zip(ta.shape, tv.shape)) or
                                all(q >= p for p, q in zip(ta.shape, tv.shape))):
        raise ShapeError(f"{what}: for 'valid' mode, one must be at least as large as the other in every dimension "
                         f"(shapes {ta.shape} and {tv.shape})", hint="use mode='full' or 'same'")


def _as_float_operands(a, v):
    dtype = result_dtype(a, v)
    dtype = dtype if dtype in ("f64", "f32") else "f64"
    anchor = first_traced([a, v])
    out = []
    for x in (a, v):
        x = lift(x, anchor)
        out.append(x if aval(x).dtype == dtype else ew.astype(x, dtype))
    return out


LONG_KERNEL = 16  # 1-d kernels longer than this use the ``convolve`` primitive (one op, not one per entry)


def _full(a, v):
    """The full n-d convolution, the loop over the smaller operand's entries."""
    if aval(v).size > aval(a).size:
        a, v = v, a
    if aval(v).ndim == 1 and aval(v).size > LONG_KERNEL:  # two long signals: np.convolve's primitive
        return stats.convolve_full(a, v)
    ta, tv = aval(a), aval(v)
    shape = tuple(p + q - 1 for p, q in zip(ta.shape, tv.shape))
    out = sh.broadcast_to(lift(np.zeros((), ta.np_dtype), first_traced([a, v])), shape)
    for k in itertools.product(*(range(q) for q in tv.shape)):
        weight = sh.index(v, tuple(("int", i) for i in k)) if k else v
        spec = tuple(sh.slice_item(i, i + p, None) for i, p in zip(k, ta.shape))
        out = index_add(out, ew.mul(a, weight), [], spec)
    return out


def _centred(full, shape):
    start = [(f - s) // 2 for f, s in zip(aval(full).shape, shape)]
    return sh.index(full, tuple(sh.slice_item(b, b + s, None) for b, s in zip(start, shape)))


def convolve(in1, in2, mode="full", method="auto", what="scipy.signal.convolve"):
    """``scipy.signal.convolve(in1, in2, mode)`` (see the module docstring)."""
    _check(what, in1, in2, mode, method)
    a, v = _as_float_operands(in1, in2)
    s1, s2 = aval(a).shape, aval(v).shape
    if aval(a).size == 0 or aval(v).size == 0:
        return np.zeros((0,) * len(s1), aval(a).np_dtype)
    if len(s1) == 0:
        return ew.mul(a, v)
    full = _full(a, v)
    if mode == "full":
        return full
    if mode == "same":
        return _centred(full, s1)
    return _centred(full, tuple(abs(p - q) + 1 for p, q in zip(s1, s2)))


def correlate(in1, in2, mode="full", method="auto", what="scipy.signal.correlate"):
    """``scipy.signal.correlate(in1, in2, mode)``: the convolution with ``in2`` reversed along every axis."""
    _check(what, in1, in2, mode, method)
    a, v = _as_float_operands(in1, in2)
    nd = aval(v).ndim
    swapped = mode == "valid" and all(q >= p for p, q in zip(aval(a).shape, aval(v).shape)) and \
        aval(a).shape != aval(v).shape
    if swapped:  # SciPy correlates the larger with the smaller and reverses the result
        a, v = v, a
    flipped = sh.index(v, (sh.slice_item(None, None, -1),) * nd) if nd else v
    out = convolve(a, flipped, mode, method, what)
    if swapped and nd:
        out = sh.index(out, (sh.slice_item(None, None, -1),) * nd)
    return out


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, what="scipy.signal.convolve2d"):
    """``scipy.signal.convolve2d`` with zero fill (the other boundaries are refused)."""
    _boundary(what, in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode, what=what)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, what="scipy.signal.correlate2d"):
    """``scipy.signal.correlate2d`` with zero fill (the other boundaries are refused)."""
    _boundary(what, in1, in2, boundary, fillvalue)
    return correlate(in1, in2, mode, what=what)


def _boundary(what, in1, in2, boundary, fillvalue):
    if boundary not in ("fill",) or (not isinstance(fillvalue, (int, float)) or fillvalue != 0):
        raise TraceError(f"{what} with boundary={boundary!r}, fillvalue={fillvalue!r} is not supported by gradc",
                         hint="use boundary='fill' with fillvalue=0, or pad the input with np.pad first")
    if aval(in1).ndim != 2 or aval(in2).ndim != 2:
        raise ShapeError(f"{what}: in1 and in2 should both be 2-d arrays", hint="pass matrices")
