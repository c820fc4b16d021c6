"""Differences, integrals and scans as compositions: diff, trapezoid, cumulative_sum/prod, convolve's modes.

``diff`` is slices subtracted; ``trapezoid`` the sum of slices times the
spacing; NumPy 2.1's ``cumulative_sum``/``cumulative_prod`` are ``cumsum``/``cumprod``
with an optional initial 0/1 in front; ``convolve`` and ``correlate`` slice the
full convolution (the ``convolve`` primitive) as NumPy's modes do.

>>> import numpy as np
>>> diff(np.array([1.0, 4.0, 9.0]))
array([3., 5.])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as red
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ops import stats
from gradc.ops.values import aval, normalize_axes


def _slice_along(ndim, axis, start, stop):
    spec = [sh.slice_item(None, None, None)] * ndim
    spec[axis] = sh.slice_item(start, stop, None)
    return spec


def _edge(value, like, axis, what):
    """``prepend``/``append`` as an array like ``like`` of length 1 along ``axis`` (scalars broadcast)."""
    t = aval(like)
    v = aval(value)
    if v.ndim == 0:
        shape = list(t.shape)
        shape[axis] = 1
        # a Python number counts as a NumPy array (float64 or int64), as np.diff converts it
        value = sh.broadcast_to(value if v.dtype is not None else np.asarray(value), shape)
    elif v.ndim != t.ndim or any(a != b for i, (a, b) in enumerate(zip(v.shape, t.shape)) if i != axis):
        raise ShapeError(f"np.diff: {what} of shape {v.shape} does not fit an array of shape {t.shape} along "
                         f"axis {axis}", hint="give it the array's shape except along the axis, or pass a scalar")
    return value


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff(a, n, axis, prepend=, append=)``: ``a[1:] - a[:-1]`` along the axis, ``n`` times.

    >>> diff(np.array([[1.0, 2.0, 4.0]]), prepend=0.0)
    array([[1., 1., 2.]])
    """
    if n < 0:
        raise ShapeError(f"np.diff: order n={n} must be non-negative", hint="pass n >= 0")
    t = aval(a)
    if t.ndim == 0:
        raise ShapeError("np.diff needs at least a 1-d array", hint="a 0-d value has no differences")
    if n == 0:
        return a
    axis = normalize_axes(axis, t.ndim)[0]
    parts = [a]
    if prepend is not None:
        parts.insert(0, _edge(prepend, a, axis, "prepend"))
    if append is not None:
        parts.append(_edge(append, a, axis, "append"))
    if len(parts) > 1:
        dtype = ew.result_dtype(*parts)
        a = sh.concatenate([ew.astype(p, dtype) for p in parts], axis)
    if aval(a).dtype == "bool":
        raise ShapeError("np.diff of booleans is not supported", hint="convert with .astype(np.int64) first")
    for _ in range(n):
        length = aval(a).shape[axis]
        if length == 0:
            break
        nd = aval(a).ndim
        a = ew.sub(sh.index(a, _slice_along(nd, axis, 1, None)), sh.index(a, _slice_along(nd, axis, None, -1)))
    return a


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid(y, x, dx, axis)``: the sum of ``spacing * (y[1:] + y[:-1]) / 2`` along the axis.

    >>> float(trapezoid(np.array([0.0, 1.0, 4.0]), x=np.array([0.0, 1.0, 2.0])))
    3.0
    """
    t = aval(y)
    if t.ndim == 0:
        raise ShapeError("np.trapezoid needs at least a 1-d array", hint="integrate a sequence of values")
    axis = normalize_axes(axis, t.ndim)[0]
    if x is None:
        spacing = dx
    else:
        xt = aval(x)
        if xt.ndim == 1:
            if xt.shape[0] != t.shape[axis]:
                raise ShapeError(f"np.trapezoid: x has {xt.shape[0]} points but y has {t.shape[axis]} along axis "
                                 f"{axis}", hint="give one x per value of y along the axis")
            shape = [1] * t.ndim
            shape[axis] = xt.shape[0] - 1
            spacing = sh.reshape(diff(x), shape)
        else:
            spacing = diff(x, axis=axis)
    upper = sh.index(y, _slice_along(t.ndim, axis, 1, None))
    lower = sh.index(y, _slice_along(t.ndim, axis, None, -1))
    return red.sum_(ew.div(ew.mul(spacing, ew.add(upper, lower)), 2.0), axis)


def cumulative(name, x, axis=None, include_initial=False):
    """NumPy 2.1's ``cumulative_sum``/``cumulative_prod`` (``name``): ``axis`` may be omitted for 1-d only.

    >>> cumulative("sum", np.array([1.0, 2.0]), include_initial=True)
    array([0., 1., 3.])
    """
    t = aval(x)
    if axis is None:
        if t.ndim > 1:
            raise ShapeError(f"np.cumulative_{name} of a {t.ndim}-d array needs axis=",
                             hint="pass the axis to accumulate along")
        if t.ndim == 0:
            raise ShapeError(f"np.cumulative_{name} needs at least a 1-d array", hint="pass a 1-d array")
        axis = 0
    axis = normalize_axes(axis, t.ndim)[0]
    out = stats.cumsum(x, axis) if name == "sum" else stats.cumprod(x, axis)
    if not include_initial:
        return out
    shape = list(aval(out).shape)
    shape[axis] = 1
    start = np.full(shape, 0 if name == "sum" else 1, dtype=aval(out).np_dtype)
    return sh.concatenate([start, out], axis)


def _modes(what, mode):
    if mode not in ("full", "same", "valid"):
        raise ShapeError(f"{what}: mode must be 'full', 'same' or 'valid', not {mode!r}", hint="pick one of the three")


def _one_d(what, a, v):
    for arr in (a, v):
        if aval(arr).ndim > 1 or aval(arr).size == 0:
            raise ShapeError(f"{what} needs two non-empty 1-d arrays, not {aval(a)} and {aval(v)}",
                             hint="flatten them, or convolve the rows one at a time")
    return [sh.reshape(arr, (1,)) if aval(arr).ndim == 0 else arr for arr in (a, v)]


def _slice(full, start, length):
    if start == 0 and length == aval(full).shape[0]:
        return full
    return sh.index(full, [sh.slice_item(start, start + length, None)])


def convolve(a, v, mode="full"):
    """``np.convolve(a, v, mode)`` for 1-d arrays: the full convolution, sliced for 'same' and 'valid'.

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), "same")
    array([1. , 2.5, 4. ])
    """
    _modes("np.convolve", mode)
    a, v = _one_d("np.convolve", a, v)
    n, m = aval(a).shape[0], aval(v).shape[0]
    big, small = max(n, m), min(n, m)
    full = stats.convolve_full(a, v)
    if mode == "same":
        return _slice(full, (small - 1) // 2, big)
    if mode == "valid":
        return _slice(full, small - 1, big - small + 1)
    return full


def correlate(a, v, mode="valid"):
    """``np.correlate(a, v, mode)`` for real 1-d arrays: the convolution with ``v`` reversed.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0]), "full")
    array([1., 2., 3., 0.])
    """
    _modes("np.correlate", mode)
    a, v = _one_d("np.correlate", a, v)
    n, m = aval(a).shape[0], aval(v).shape[0]
    big, small = max(n, m), min(n, m)
    full = stats.convolve_full(a, stats.flip(v, 0))
    if mode == "same":  # NumPy centres the window one place later when v is the longer one
        return _slice(full, (small - 1) // 2 if n >= m else small // 2, big)
    if mode == "valid":
        return _slice(full, small - 1, big - small + 1)
    return full
