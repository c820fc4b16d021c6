"""Order statistics as compositions: sort, quantile/percentile/median, interp.

``sort`` gathers ``x`` at the indices of a nondiff ``argsort``, so its VJP is a
scatter of the cotangent back to where each value came from. The quantiles
take static positions in the sorted values (the array's length is static), so
each is an ``index`` of the sorted values and a linear interpolation with
constant weights. ``interp`` finds each point's segment with a nondiff
``searchsorted`` and interpolates with gathered knots, so it is differentiable
in ``x``, ``xp`` and ``fp``.

>>> import numpy as np
>>> float(quantile(np.array([4.0, 1.0, 3.0, 2.0]), 0.5))
2.5
"""
from __future__ import annotations

import math

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import ShapeError, TraceError
from gradc.ir import dims
from gradc.ir.registry import bind
from gradc.ir.types import dtype_name
from gradc.ops import stats
from gradc.ops.reduce import reduced_shape
from gradc.ops.values import aval, is_concrete, normalize_axes


def _along_last(x, axis):
    """``x`` with the ``axis`` axes moved to the end and merged into one (``axis=None``: flattened).

    Returns the array and the normalized axes.
    """
    t = aval(x)
    axes = normalize_axes(axis, t.ndim)
    if t.ndim == 0:
        return sh.reshape(x, (1,)), axes
    kept = tuple(i for i in range(t.ndim) if i not in axes)
    moved = sh.transpose(x, kept + axes)
    n = dims.prod([t.shape[a] for a in axes])
    return sh.reshape(moved, tuple(t.shape[i] for i in kept) + (n,)), axes


def sort(x, axis=-1):
    """``np.sort(x, axis)``: ``x`` gathered at its stable ``argsort`` indices (differentiable; ties keep order).

    >>> sort(np.array([[3.0, 1.0], [0.0, 2.0]]), 0)
    array([[0., 1.],
           [3., 2.]])
    """
    t = aval(x)
    if axis is None:
        x, axis = sh.reshape(x, (t.size,)), 0
        t = aval(x)
    elif t.ndim == 0:
        raise ShapeError("np.sort of a 0-d array needs axis=None", hint="pass axis=None, or sort a 1-d array")
    axis = normalize_axes(axis, t.ndim)[0]
    if t.shape[axis] == 1 or t.shape[axis] == 0:  # (a named size may be more than 1)
        return x
    return sh.take_along_axis(x, stats.argsort(x, axis, stable=True), axis)


# ---------------------------------------------------------------- quantiles
# NumPy's methods whose positions in the sorted values depend on n and q only: (lower index, upper index,
# weight of the upper one). The continuous methods other than "linear" (Hyndman & Fan's 4-9) are refused.
def _positions(method, n, q):
    v = q * (n - 1)
    lo, hi = math.floor(v), math.ceil(v)
    if method == "linear":
        return lo, hi, v - lo
    if method == "lower":
        return lo, lo, 0.0
    if method == "higher":
        return hi, hi, 0.0
    if method == "nearest":
        k = int(np.around(v))  # half to even, as NumPy
        return k, k, 0.0
    return lo, hi, 0.0 if lo == hi else 0.5  # midpoint


METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _static_q(q, what):
    if not is_concrete(q):
        raise TraceError(f"{what}: q depends on a traced value", hint="pass the quantiles as Python numbers or a "
                         "NumPy array (the positions in the sorted data are computed when tracing)")
    q = np.asarray(q, dtype=np.float64)
    if q.size and not (np.all(q >= 0.0) and np.all(q <= 1.0)):
        kind, bounds = ("percentiles", "[0, 100]") if what.endswith("percentile") else ("quantiles", "[0, 1]")
        raise ShapeError(f"{what}: {kind} must be in the range {bounds}", hint="check q")
    return q


def _pick(sorted_rows, k):
    spec = (sh.slice_item(None, None, None),) * (aval(sorted_rows).ndim - 1) + (("int", k),)
    return sh.index(sorted_rows, spec)


def _named_quantile(sorted_rows, n, q, method):
    """A quantile over an axis of named size ``n``: the positions ``q * (n - 1)`` computed when the code runs, the
    sorted values read there (the weights depend on ``n`` only: no derivative flows into them)."""
    from gradc.ops.sizes import dim_value
    from gradc.ops.special_numpy import ceil, rint

    v = ew.mul(dim_value(n - 1, sorted_rows, "f64"), float(q))
    lo_f = ew.floor(v)

    def pick(position):
        spec = (sh.slice_item(None, None, None),) * (aval(sorted_rows).ndim - 1) + (("array", 0),)
        return sh.gather(sorted_rows, [ew.astype(position, "i64")], spec)
    if method == "nearest":
        return pick(rint(v))
    low, high = pick(lo_f), pick(ceil(v))
    if method == "lower":
        return low
    if method == "higher":
        return high
    if method == "midpoint":
        return ew.mul(ew.add(low, high), 0.5)  # lo == hi: the value itself
    return ew.add(low, ew.mul(ew.sub(high, low), ew.sub(v, lo_f)))


def _one_quantile(sorted_rows, n, q, method):
    if not isinstance(n, int):
        return _named_quantile(sorted_rows, n, q, method)
    lo, hi, weight = _positions(method, n, float(q))
    low = _pick(sorted_rows, lo)
    if weight == 0.0:
        return low
    high = _pick(sorted_rows, hi)
    if weight == 0.5 and method == "midpoint":
        return ew.mul(ew.add(low, high), 0.5)
    return ew.add(low, ew.mul(ew.sub(high, low), weight))


def quantile(a, q, axis=None, method="linear", keepdims=False, what="np.quantile"):
    """``np.quantile(a, q, axis, method=...)`` for static ``q`` (methods: linear, lower, higher, nearest, midpoint).

    A slice holding a NaN gives NaN, as in NumPy. The derivative flows to the one or two sorted
    values each quantile interpolates.

    >>> quantile(np.array([[1.0, 5.0], [3.0, 4.0]]), [0.0, 0.5], axis=1)
    array([[1. , 3. ],
           [3. , 3.5]])
    """
    if method not in METHODS:
        raise TraceError(f"{what}: method={method!r} is not supported",
                         hint=f"use one of {', '.join(METHODS)} (linear is NumPy's default)")
    weak = isinstance(q, (int, float)) and not isinstance(q, bool)
    q_dtype = None if weak or not is_concrete(q) else np.asarray(q).dtype
    q = _static_q(q, what)
    t = aval(a)
    if method in ("linear", "midpoint"):  # interpolated: NumPy's promotion with q (a Python number is weak)
        dtype = np.result_type(t.np_dtype, 0.5 if weak else q_dtype)
        a = ew.astype(a, "f64" if dtype.kind != "f" else dtype_name(dtype))
    rows, axes = _along_last(a, axis)
    n = aval(rows).shape[-1]
    if n == 0:
        raise ShapeError(f"{what} of an empty axis has no value", hint="take quantiles over a non-empty axis")
    ordered = sort(rows, -1)
    values = [_one_quantile(ordered, n, qk, method) for qk in q.ravel()]
    if aval(ordered).is_float:
        has_nan = bind("isnan", _pick(ordered, n - 1))  # NaNs sort last: a NaN in a slice shows there
        values = [ew.where(has_nan, np.nan, v) for v in values]
    out_rest = reduced_shape(t.shape, axes, keepdims) if t.ndim else ()
    values = [sh.reshape(v, out_rest) for v in values]
    if q.ndim == 0:
        return values[0]
    if not values:  # no quantiles asked for: an empty array of the result's shape
        return np.zeros(q.shape + out_rest, dtype=aval(ordered).np_dtype)
    stacked = sh.concatenate([sh.reshape(v, (1,) + out_rest) for v in values], 0)
    return sh.reshape(stacked, q.shape + out_rest)


def percentile(a, q, axis=None, method="linear", keepdims=False):
    """``np.percentile``: ``quantile`` of ``q / 100``.

    >>> float(percentile(np.arange(5.0), 25))
    1.0
    """
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        q = q / 100.0  # stays a Python number: weak in the result's dtype, as in NumPy
    elif is_concrete(q):
        q = _static_q(np.asarray(q, dtype=np.float64) / 100.0, "np.percentile")
    return quantile(a, q, axis, method, keepdims, what="np.percentile")


def median(a, axis=None, keepdims=False):
    """``np.median``: the linear 0.5-quantile (the mean of the two middle values for an even count).

    >>> float(median(np.array([3.0, 1.0, 2.0, 10.0])))
    2.5
    """
    return quantile(a, 0.5, axis, "midpoint", keepdims, what="np.median")


# ---------------------------------------------------------------- interp
def interp(x, xp, fp, left=None, right=None):
    """``np.interp(x, xp, fp, left, right)``, differentiable in ``x``, ``xp`` (increasing) and ``fp``.

    >>> interp(np.array([0.5, 2.0, -1.0]), np.array([0.0, 1.0]), np.array([0.0, 10.0]))
    array([ 5., 10.,  0.])
    """
    xp_t, fp_t = aval(xp), aval(fp)
    if xp_t.ndim != 1 or fp_t.ndim != 1 or xp_t.shape != fp_t.shape:
        raise ShapeError(f"np.interp needs 1-d xp and fp of one length, not {xp_t} and {fp_t}",
                         hint="xp and fp are the knots' positions and values")
    n = xp_t.shape[0]
    if n == 0:
        raise ShapeError("np.interp needs at least one knot", hint="xp and fp must not be empty")
    # NumPy interpolates in float64 whatever the inputs' dtypes
    x, xp, fp = (ew.astype(v, "f64") if aval(v).dtype is not None else np.asarray(v, dtype=np.float64)
                 for v in (x, xp, fp))
    first, last = sh.index(fp, [("int", 0)]), sh.index(fp, [("int", n - 1)])
    left = first if left is None else left
    right = last if right is None else right
    x0_all, x1_all = sh.index(xp, [("int", 0)]), sh.index(xp, [("int", n - 1)])
    if n == 1:
        inside = first
    else:
        # segment j - 1 .. j holds x; at a knot (side="right") the segment starting there, at the end the last
        j = ew.maximum(ew.minimum(stats.searchsorted(xp, x, "right"), n - 1), 1)
        below = ew.sub(j, 1)
        x0, x1 = sh.gather(xp, [below], (("array", 0),)), sh.gather(xp, [j], (("array", 0),))
        y0, y1 = sh.gather(fp, [below], (("array", 0),)), sh.gather(fp, [j], (("array", 0),))
        slope = ew.div(ew.sub(y1, y0), ew.sub(x1, x0))
        inside = ew.add(ew.mul(slope, ew.sub(x, x0)), y0)
    out = ew.where(ew.less(x, x0_all), left, inside)
    return ew.where(ew.greater(x, x1_all), right, out)
