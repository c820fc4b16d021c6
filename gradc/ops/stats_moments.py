"""Moments as compositions of registry ops: var, std, average, the nan-reductions, ptp, cov, corrcoef.

Each is written the way NumPy computes it (``var``: the mean of squared
deviations from the mean), so values agree with NumPy to rounding and the
derivative comes from the ops' own rules. The nan-reductions replace NaN
entries by a neutral value with ``where``, whose VJP gives those entries a
zero gradient.

>>> import numpy as np
>>> float(var(np.array([1.0, 2.0, 3.0, 4.0]), ddof=1))
1.6666666666666667
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.linalg as la
import gradc.ops.reduce as red
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ir import dims
from gradc.ir.registry import bind
from gradc.ops.linalg_decomp import conj_of, real_of
from gradc.ops.sizes import dim_value
from gradc.ops.values import aval, normalize_axes


def as_float(x):
    """``x`` itself if it is a float or complex array, else as float64 (the statistics of integers are float64)."""
    return x if aval(x).is_inexact else ew.astype(x, "f64")


def _squared_magnitude(d):
    """``|d|**2``: NumPy's variance of complex values is the mean of the squared magnitudes (a real number)."""
    if not aval(d).is_complex:
        return ew.square(d)
    from gradc.ops.complex_numbers import imag, real
    return ew.add(ew.square(real(d)), ew.square(imag(d)))


def _count(shape, axes):
    return dims.prod([shape[a] for a in axes])


def _dof(n, ddof, what):
    dof = n - ddof
    if isinstance(dof, int) and dof <= 0:  # a named size (n - 1) is checked by NumPy's own result at run time
        raise ShapeError(f"{what}: {n} values with ddof={ddof} leave {dof} degrees of freedom",
                         hint="reduce over more values or use a smaller ddof")
    return dof


def var(a, axis=None, ddof=0, keepdims=False, mean=None, what="np.var"):
    """``np.var(a, axis, ddof=, keepdims=)``: ``sum((a - mean)**2) / (n - ddof)`` over the axes.

    >>> var(np.array([[1.0, 3.0], [2.0, 2.0]]), axis=1)
    array([1., 0.])
    """
    a = as_float(a)
    t = aval(a)
    if t.ndim == 0 and axis not in (None, ()):  # as NumPy's AxisError (np.sum alone takes axis=0 of a scalar)
        raise ShapeError(f"{what}: axis {axis!r} is out of bounds for a scalar (an array of dimension 0)",
                         hint="leave out axis for a scalar")
    axes = normalize_axes(axis, t.ndim)
    dof = _dof(_count(t.shape, axes), ddof, what)
    centre = red.mean(a, axes, keepdims=True) if mean is None else mean
    deviation = ew.sub(a, centre)
    total = red.sum_(_squared_magnitude(deviation), axes, keepdims)
    return ew.div(total, dim_value(dof, total, aval(total).dtype))


def std(a, axis=None, ddof=0, keepdims=False, mean=None):
    """``np.std``: the square root of ``var``, with derivative 0 where the variance is 0
    (``root_of_squares``).

    >>> float(std(np.array([1.0, 3.0])))
    1.0
    """
    return ew.root_of_squares(var(a, axis, ddof, keepdims, mean, what="np.std"))



def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """``np.average``: ``sum(a * w) / sum(w)``; ``returned=True`` gives ``(average, sum of weights)`` too.

    >>> float(average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0])))
    1.5
    """
    a = as_float(a)
    t = aval(a)
    axes = normalize_axes(axis, t.ndim)
    if weights is None:
        avg = red.mean(a, axes, keepdims)
        total = np.full(aval(avg).shape, float(_count(t.shape, axes)), dtype=aval(avg).np_dtype)
        return (avg, total) if returned else avg
    w = weights
    wt = aval(w)
    if wt.shape != t.shape:
        if axis is None:
            raise ShapeError(f"np.average: weights of shape {wt.shape} differ from a's {t.shape} and no axis is given",
                             hint="pass axis= when the weights are 1-d")
        if wt.ndim != 1 or len(axes) != 1 or wt.shape[0] != t.shape[axes[0]]:
            raise ShapeError(f"np.average: 1-d weights of shape {wt.shape} must have the length of axis {axis} "
                             f"of a {t}", hint="give one weight per entry along the axis")
        shape = [1] * t.ndim
        shape[axes[0]] = wt.shape[0]
        w = sh.reshape(w, shape)
    dtype = ew.result_dtype(a, w)
    if dtype not in ("f32", "f64"):
        dtype = "f64"
    w = ew.astype(w, dtype) if aval(w).dtype is not None else w
    full_w = sh.broadcast_to(w, t.shape)
    total = red.sum_(full_w, axes, keepdims)
    avg = ew.div(red.sum_(ew.mul(a, w), axes, keepdims), total)
    return (avg, sh.broadcast_to(total, aval(avg).shape)) if returned else avg


# ---------------------------------------------------------------- NaN-ignoring reductions
def _isnan(x):
    # the special family's test (C's isnan): ``x != x`` would do in NumPy, but SymPy folds it to False in C
    return bind("isnan", x)


def nansum(a, axis=None, keepdims=False):
    """``np.nansum``: the sum with NaN entries as 0 (they get a zero gradient).

    >>> float(nansum(np.array([1.0, np.nan, 2.0])))
    3.0
    """
    if not aval(a).is_float:
        return red.sum_(a, axis, keepdims)
    return red.sum_(ew.where(_isnan(a), 0.0, a), axis, keepdims)


def _valid_count(a, axes, keepdims):
    return red.sum_(ew.astype(ew.logical_not(_isnan(a)), aval(a).dtype), axes, keepdims)


def nanmean(a, axis=None, keepdims=False):
    """``np.nanmean``: the mean of the non-NaN entries (NaN for a slice of NaNs only).

    >>> float(nanmean(np.array([1.0, np.nan, 2.0])))
    1.5
    """
    a = as_float(a)
    axes = normalize_axes(axis, aval(a).ndim)
    return ew.div(nansum(a, axes, keepdims), _valid_count(a, axes, keepdims))


def nanvar(a, axis=None, ddof=0, keepdims=False):
    """``np.nanvar``: ``var`` of the non-NaN entries (NaN where fewer than ``ddof + 1`` remain).

    >>> float(nanvar(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    a = as_float(a)
    axes = normalize_axes(axis, aval(a).ndim)
    missing = _isnan(a)
    deviation = ew.where(missing, 0.0, ew.sub(a, nanmean(a, axes, keepdims=True)))
    dof = ew.sub(_valid_count(a, axes, keepdims), float(ddof))
    enough = ew.greater(dof, 0.0)
    # a safe divisor where the slice has too few values, so the unused branch's gradient is 0, not NaN
    quotient = ew.div(red.sum_(_squared_magnitude(deviation), axes, keepdims), ew.where(enough, dof, 1.0))
    return ew.where(enough, quotient, np.nan)


def nanstd(a, axis=None, ddof=0, keepdims=False):
    """``np.nanstd``: the square root of ``nanvar``.

    >>> float(nanstd(np.array([1.0, np.nan, 3.0])))
    1.0
    """
    return ew.sqrt(nanvar(a, axis, ddof, keepdims))


def _nan_extremum(a, axis, keepdims, reduce_fn, neutral):
    if not aval(a).is_float:
        return reduce_fn(a, axis, keepdims)
    axes = normalize_axes(axis, aval(a).ndim)
    result = reduce_fn(ew.where(_isnan(a), neutral, a), axes, keepdims)
    return ew.where(ew.greater(_valid_count(a, axes, keepdims), 0.0), result, np.nan)


def nanmax(a, axis=None, keepdims=False):
    """``np.nanmax``: the max of the non-NaN entries (NaN for a slice of NaNs only).

    >>> float(nanmax(np.array([1.0, np.nan, 2.0])))
    2.0
    """
    return _nan_extremum(a, axis, keepdims, red.max_, -np.inf)


def nanmin(a, axis=None, keepdims=False):
    """``np.nanmin``: the min of the non-NaN entries (NaN for a slice of NaNs only).

    >>> float(nanmin(np.array([1.0, np.nan, 2.0])))
    1.0
    """
    return _nan_extremum(a, axis, keepdims, red.min_, np.inf)


def ptp(a, axis=None, keepdims=False):
    """``np.ptp``: max minus min (peak to peak).

    >>> float(ptp(np.array([3.0, -1.0, 2.0])))
    4.0
    """
    return ew.sub(red.max_(a, axis, keepdims), red.min_(a, axis, keepdims))


# ---------------------------------------------------------------- covariance
def _as_rows(m, rowvar):
    t = aval(m)
    if t.ndim > 2:
        raise ShapeError(f"np.cov: m has more than 2 dimensions ({t})", hint="pass a 1-d or 2-d array")
    if t.ndim < 2:
        return sh.reshape(m, (1, t.size))
    return m if rowvar else sh.transpose(m, (1, 0))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """``np.cov``: ``X_c @ (X_c * w).T / fact`` with ``X_c`` the rows less their (weighted) means.

    >>> cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    rows = [_as_rows(m, rowvar)] + ([] if y is None else [_as_rows(y, rowvar)])
    dtype = "c128" if any(aval(r).is_complex for r in rows) else "f64"  # NumPy's: float64 or complex128
    x = ew.astype(rows[0], dtype)
    if y is not None:
        x = sh.concatenate([x, ew.astype(rows[1], dtype)], 0)
    n = aval(x).shape[1]
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    for given, name in ((fweights, "fweights"), (aweights, "aweights")):
        if given is not None:
            if aval(given).shape != (n,):
                raise ShapeError(f"np.cov: {name} must be 1-d with one weight per observation ({n}), not "
                                 f"{aval(given)}", hint="give one weight per column (per row with rowvar=False)")
            given = ew.astype(given, "f64" if dtype == "c128" else dtype)  # real weights
            w = given if w is None else ew.mul(w, given)
    if w is None:
        centred = ew.sub(x, red.mean(x, 1, keepdims=True))
        fact = dim_value(_dof(n, ddof, "np.cov"), x, "f64")
        scaled = centred
    else:
        v1 = red.sum_(w)
        centred = ew.sub(x, ew.div(red.sum_(ew.mul(x, w), 1, keepdims=True), v1))
        if aweights is None:
            fact = ew.sub(v1, float(ddof))
        else:
            fact = ew.sub(v1, ew.div(ew.mul(red.sum_(ew.mul(w, ew.astype(aweights, aval(w).dtype))), float(ddof)),
                                     v1))
        scaled = ew.mul(centred, w)
    c = ew.div(la.matmul(centred, conj_of(sh.transpose(scaled, (1, 0)))), fact)  # X_c X_c^H for complex rows
    return sh.reshape(c, ()) if aval(c).shape == (1, 1) else c


def corrcoef(x, y=None, rowvar=True):
    """``np.corrcoef``: ``cov`` divided by the outer product of the standard deviations.

    >>> corrcoef(np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    c = cov(x, y, rowvar)
    if aval(c).ndim == 0:
        return _clip_unit(ew.div(c, c))
    k = aval(c).shape[0]
    d = sh.gather(c, [np.arange(k), np.arange(k)], (("array", 0), ("array", 1)))
    stddev = ew.sqrt(real_of(d))  # the variances: real also of complex rows
    c = ew.div(c, sh.reshape(stddev, (k, 1)))
    return _clip_unit(ew.div(c, sh.reshape(stddev, (1, k))))


def _clip_unit(c):
    """NumPy's last step of ``corrcoef``: rounding can leave |r| a few ulps above 1, so the real part (and the
    imaginary part of complex rows) is clipped to [-1, 1]. Where the clip acts, the exact coefficient is at its
    extreme (|r| = 1), where its derivative is 0 as well."""
    if not aval(c).is_complex:
        return ew.clip(c, -1.0, 1.0)
    real_part = ew.clip(bind("real", c), -1.0, 1.0)
    imag_part = ew.clip(bind("imag", c), -1.0, 1.0)
    return ew.add(ew.astype(real_part, aval(c).dtype), ew.mul(ew.astype(imag_part, aval(c).dtype), 1j))
