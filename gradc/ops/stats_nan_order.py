"""``np.nanquantile``, ``np.nanpercentile`` and ``np.nanmedian``: the quantiles of the values that are not NaN.

NaNs sort last, so the ``c`` values that are not NaN in a slice are its first ``c`` sorted entries;
a quantile's position ``q * (c - 1)`` depends on the count ``c`` computed when the code runs, and
the sorted values are read there by a gather (``take_along_axis``). The derivative flows to the one
or two values each quantile interpolates, as for ``np.quantile``; the weights depend on the count
only. A slice of NaNs only gives NaN, as in NumPy (which also warns).

>>> import numpy as np
>>> float(nanmedian(np.array([3.0, np.nan, 1.0, 2.0])))
2.0
>>> nanquantile(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]]), 0.25, axis=1)
array([1.5, nan])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import ShapeError, TraceError
from gradc.ir.registry import bind
from gradc.ir.types import dtype_name
from gradc.ops import reduce as red
from gradc.ops.reduce import reduced_shape
from gradc.ops.stats_order import METHODS, _along_last, _static_q, sort
from gradc.ops.values import aval, is_concrete


def _at(ordered, position):
    """The sorted values at ``position`` (one per slice, kept as a last axis of length one)."""
    return sh.take_along_axis(ordered, ew.astype(position, "i64"), aval(ordered).ndim - 1)


def _counted_quantile(ordered, count, q: float, method: str):
    n = aval(ordered).shape[-1]
    v = ew.mul(ew.sub(count, 1.0), q)
    lo = ew.clip(ew.floor(v), 0.0, float(n - 1))
    hi = ew.clip(bind("ceil", v), 0.0, float(n - 1))
    if method == "nearest":
        return _at(ordered, ew.clip(bind("rint", v), 0.0, float(n - 1)))
    low, high = _at(ordered, lo), _at(ordered, hi)
    if method == "lower":
        return low
    if method == "higher":
        return high
    if method == "midpoint":
        return ew.mul(ew.add(low, high), 0.5)
    return ew.add(low, ew.mul(ew.sub(high, low), ew.sub(v, lo)))


def nanquantile(a, q, axis=None, method="linear", keepdims=False, what="np.nanquantile"):
    """``np.nanquantile(a, q, axis, method=...)`` for static ``q`` (see the module docstring)."""
    if method not in METHODS:
        raise TraceError(f"{what}: method={method!r} is not supported",
                         hint=f"use one of {', '.join(METHODS)} (linear is NumPy's default)")
    weak = isinstance(q, (int, float)) and not isinstance(q, bool)
    q_dtype = None if weak or not is_concrete(q) else np.asarray(q).dtype
    q = _static_q(q, what)
    t = aval(a)
    if not t.is_float:  # no NaN possible: the plain quantile
        from gradc.ops.stats_order import quantile
        return quantile(a, q if q.ndim else float(q), axis, method, keepdims, what=what)
    dtype = np.result_type(t.np_dtype, 0.5 if weak else q_dtype)
    a = ew.astype(a, "f64" if dtype.kind != "f" else dtype_name(dtype))
    rows, axes = _along_last(a, axis)
    if aval(rows).shape[-1] == 0:
        raise ShapeError(f"{what} of an empty axis has no value", hint="take quantiles over a non-empty axis")
    ordered = sort(rows, -1)
    count = red.sum_(ew.astype(ew.logical_not(bind("isnan", rows)), "f64"), -1, keepdims=True)
    values = [ew.where(ew.equal(count, 0.0), np.nan, _counted_quantile(ordered, count, float(qk), method))
              for qk in q.ravel()]
    out_rest = reduced_shape(t.shape, axes, keepdims) if t.ndim else ()
    values = [sh.reshape(v, out_rest) for v in values]
    if q.ndim == 0:
        return values[0]
    stacked = sh.concatenate([sh.reshape(v, (1,) + out_rest) for v in values], 0)
    return sh.reshape(stacked, q.shape + out_rest)


def nanpercentile(a, q, axis=None, method="linear", keepdims=False):
    """``np.nanpercentile``: ``nanquantile`` of ``q / 100``.

    >>> float(nanpercentile(np.array([np.nan, 0.0, 4.0]), 25))
    1.0
    """
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        q = q / 100.0
    elif is_concrete(q):
        q = _static_q(np.asarray(q, dtype=np.float64) / 100.0, "np.nanpercentile")
    return nanquantile(a, q, axis, method, keepdims, what="np.nanpercentile")


def nanmedian(a, axis=None, keepdims=False):
    """``np.nanmedian``: the mean of the two middle values that are not NaN (see the module docstring)."""
    return nanquantile(a, 0.5, axis, "midpoint", keepdims, what="np.nanmedian")
