"""``scipy.stats`` descriptive statistics on traced values, as NumPy compositions: ``entropy``, ``pearsonr``,
``spearmanr``, ``trim_mean``, ``describe``, ``iqr``, ``tmean``/``tvar``/``tstd``/``tsem``/``tmin``/``tmax``,
``median_abs_deviation`` and ``mode`` (SciPy's signatures and result objects).

Derivatives: the sort-based statistics (``trim_mean``, ``iqr``, ``median_abs_deviation``) differentiate as
``np.sort`` and ``np.percentile`` do (through the values at the sorted positions). The trimmed statistics' limits
are constants: a value inside them counts, one outside does not. ``spearmanr`` correlates *ranks*, which are
piecewise constant in the data: its statistic and p-value have a zero derivative (the ranks are computed by
comparisons and held static; ties get SciPy's average rank). ``mode``'s value has no meaningful derivative
(moving one copy of the mode changes which value is the mode): differentiating it is refused by name; its
``count`` is an integer. ``pearsonr``'s p-value is the incomplete beta function of the statistic, as SciPy's
(differentiable in the data).

>>> import scipy.stats
>>> from gradc.trace import trace
>>> print(trace(lambda a: scipy.stats.tmean(a, (0.0, 2.0)), np.ones(3)).name)
lambda_
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from gradc.errors import TraceError
from gradc.ops import special_incomplete
from gradc.ops import special_scipy as sc
from gradc.ops.refused_derivative import refuse_derivative
from gradc.ops.special_stats import evaluate
from gradc.trace import scipy_dispatch, stats_summaries

PearsonRResult = namedtuple("PearsonRResult", ["statistic", "pvalue"])
SignificanceResult = namedtuple("SignificanceResult", ["statistic", "pvalue"])
DescribeResult = namedtuple("DescribeResult", ["nobs", "minmax", "mean", "variance", "skewness", "kurtosis"])
ModeResult = namedtuple("ModeResult", ["mode", "count"])

_NORMAL_IQR = 1.3489795003921634  # 2 sqrt(2) erfinv(1/2): the standard normal's interquartile range
_NORMAL_MAD = 0.6744897501960817  # its median absolute deviation, ndtri(3/4)


def _array(a):
    return a if hasattr(a, "aval") else np.asarray(a)


def _nan_policy(what, nan_policy, allowed=("propagate",)):
    if nan_policy not in allowed:
        raise TraceError(f"scipy.stats.{what}: nan_policy={nan_policy!r} is not supported on traced values",
                         hint=f"use nan_policy={allowed[0]!r} (whether a NaN is present depends on the data)")


def _flat_or(a, axis):
    """``a`` and ``axis``, flattened when ``axis`` is None (SciPy's reading)."""
    a = _array(a)
    return (np.reshape(a, (-1,)), 0) if axis is None else (a, axis)


def _alternative(what, alternative):
    if alternative not in ("two-sided", "less", "greater"):
        raise TraceError(f"scipy.stats.{what}: alternative={alternative!r} is not one of SciPy's",
                         hint="use 'two-sided', 'less' or 'greater'")


# ---------------------------------------------------------------- information
def entropy(pk, qk=None, base=None, axis=0, *, nan_policy="propagate", keepdims=False):
    """Shannon entropy of ``pk`` (normalised along ``axis``), or the relative entropy to ``qk``."""
    _nan_policy("entropy", nan_policy)
    pk = _array(pk) * 1.0
    pk = pk / np.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        value = np.sum(sc.entr(pk), axis=axis, keepdims=keepdims)
    else:
        qk = _array(qk) * 1.0
        qk = qk / np.sum(qk, axis=axis, keepdims=True)
        pk, qk = np.broadcast_arrays(pk, qk)
        value = np.sum(sc.rel_entr(pk, qk), axis=axis, keepdims=keepdims)
    return value if base is None else value / float(np.log(base))


# ---------------------------------------------------------------- correlations
def _correlation(x, y, axis):
    xm = x - np.mean(x, axis=axis, keepdims=True)
    ym = y - np.mean(y, axis=axis, keepdims=True)
    r = np.sum(xm * ym, axis=axis) / np.sqrt(np.sum(xm * xm, axis=axis) * np.sum(ym * ym, axis=axis))
    return np.clip(r, -1.0, 1.0)


def pearsonr(x, y, *, alternative="two-sided", method=None, axis=0):
    """Pearson's correlation and the p-value of its exact test (the null distribution of ``r`` is a beta)."""
    _alternative("pearsonr", alternative)
    if method is not None:
        raise TraceError("scipy.stats.pearsonr: method= (permutation or bootstrap tests) is not supported by gradc",
                         hint="drop method= (the exact beta-distribution test is used)")
    x, y = np.broadcast_arrays(_array(x) * 1.0, _array(y) * 1.0)
    n = np.shape(x)[axis]
    if n < 2:
        raise TraceError("scipy.stats.pearsonr: x and y must have length at least 2", hint="pass more samples")
    r = _correlation(x, y, axis)
    if n == 2:  # SciPy: r is +-1 and the p-value 1
        return PearsonRResult(r, r * 0.0 + 1.0)
    half = n / 2.0 - 1.0  # r = 2 B - 1 with B ~ beta(n/2 - 1, n/2 - 1)
    upper = {"two-sided": 1.0 - np.abs(r), "greater": 1.0 - r, "less": 1.0 + r}[alternative]
    p = special_incomplete.betainc(half, half, upper * 0.5, public="scipy.stats.pearsonr")
    return PearsonRResult(r, p * 2.0 if alternative == "two-sided" else p)


def _ranks(a, axis):
    """SciPy's average ranks of ``a`` along ``axis`` (1-based; ties share their mean rank), by comparisons:
    piecewise constant in ``a``, so they carry no derivative. A slice holding a NaN is NaN (SciPy's propagate)."""
    a = np.moveaxis(a, axis, -1)
    left, right = a[..., :, None], a[..., None, :]
    below = np.sum((right < left).astype(np.float64), axis=-1)
    equal = np.sum((right == left).astype(np.float64), axis=-1)
    ranks = np.where(np.any(np.isnan(a), axis=-1, keepdims=True), np.nan, below + 0.5 * equal + 0.5)
    return np.moveaxis(ranks, -1, axis)


def spearmanr(a, b=None, axis=0, nan_policy="propagate", alternative="two-sided"):
    """Spearman's rank correlation (Pearson's of the ranks; the ranks are static, so its derivative is 0) and
    the p-value of the t test SciPy uses."""
    _nan_policy("spearmanr", nan_policy)
    _alternative("spearmanr", alternative)
    a = _array(a) * 1.0
    if axis is None:
        a = np.reshape(a, (-1,))
        axis = 0
    if np.ndim(a) > 2:
        raise TraceError("scipy.stats.spearmanr takes 1-d or 2-d arrays", hint="reshape the samples to 2-d")
    if b is not None:
        b = _array(b) * 1.0
        if np.ndim(a) == 1 and np.ndim(b) == 1:
            a, axis = np.stack([a, b], axis=1), 0
        else:
            a = np.concatenate([a, b], axis=1 - axis % 2)
    if np.ndim(a) == 1:
        raise TraceError("scipy.stats.spearmanr of one 1-d array needs a second one", hint="pass b=")
    axis = axis % 2
    ranks = _ranks(a, axis)
    rows = ranks if axis == 1 else ranks.T  # variables in rows
    n = np.shape(a)[axis]
    centred = rows - np.mean(rows, axis=1, keepdims=True)
    norms = np.sqrt(np.sum(centred * centred, axis=1))
    r = np.clip((centred @ centred.T) / (norms[:, None] * norms[None, :]), -1.0, 1.0)
    r = np.where(np.eye(np.shape(r)[0], dtype=bool), r / r, r)  # each variable with itself: exactly 1 (NaN stays)
    dof = n - 2.0
    # t = r sqrt(dof / ((1 + r)(1 - r))); at r = +-1 the p-value is 0 or 1 (t infinite)
    inside = np.abs(r) < 1.0
    safe = np.where(inside, r, 0.0)
    t = np.where(inside, safe * np.sqrt(dof / ((1.0 + safe) * (1.0 - safe))), np.sign(r) * np.inf)
    if alternative == "two-sided":
        p = evaluate("t", "sf", np.abs(t), (dof,), 0.0) * 2.0
    else:
        p = evaluate("t", "sf" if alternative == "greater" else "cdf", t, (dof,), 0.0)
    if np.shape(r)[0] == 2:
        return SignificanceResult(r[0, 1], p[0, 1])
    return SignificanceResult(r, p)


# ---------------------------------------------------------------- trimmed and robust statistics
def trim_mean(a, proportiontocut, axis=0):
    """The mean of ``a`` with ``int(proportiontocut * n)`` values cut from each end along ``axis``."""
    a, axis = _flat_or(a, axis)
    n = np.shape(a)[axis]
    low = int(proportiontocut * n)
    high = n - low
    if low >= high:
        raise TraceError(f"scipy.stats.trim_mean: proportiontocut={proportiontocut} cuts every value",
                         hint="pass a proportion below 0.5")
    kept = np.take(np.sort(a * 1.0, axis=axis), np.arange(low, high), axis=axis)
    return np.mean(kept, axis=axis)


def _mask(a, limits, inclusive):
    if limits is None:
        return None
    lower, upper = limits
    outside = np.zeros(np.shape(a), dtype=bool)  # SciPy masks the values outside (a NaN stays, and propagates)
    if lower is not None:
        outside = outside | ((a < lower) if inclusive[0] else (a <= lower))
    if upper is not None:
        outside = outside | ((a > upper) if inclusive[1] else (a >= upper))
    return ~outside


def tmean(a, limits=None, inclusive=(True, True), axis=None):
    """The mean of the values of ``a`` within ``limits`` (constants)."""
    a, axis = _flat_or(a, axis)
    keep = _mask(a, limits, inclusive)
    if keep is None:
        return np.mean(a * 1.0, axis=axis)
    return np.sum(np.where(keep, a * 1.0, 0.0), axis=axis) / np.sum(keep, axis=axis)


def tvar(a, limits=None, inclusive=(True, True), axis=0, ddof=1):
    """The variance of the values of ``a`` within ``limits`` (``ddof`` as SciPy's: 1)."""
    a, axis = _flat_or(a, axis)
    a = a * 1.0
    keep = _mask(a, limits, inclusive)
    if keep is None:
        return np.var(a, axis=axis, ddof=ddof)
    count = np.sum(keep, axis=axis)
    centre = np.sum(np.where(keep, a, 0.0), axis=axis, keepdims=True) / np.expand_dims(count, axis)
    return np.sum(np.where(keep, (a - centre) ** 2, 0.0), axis=axis) / (count - ddof)


def tstd(a, limits=None, inclusive=(True, True), axis=0, ddof=1):
    """The square root of ``tvar``."""
    return np.sqrt(tvar(a, limits, inclusive, axis, ddof))


def tsem(a, limits=None, inclusive=(True, True), axis=0, ddof=1):
    """The standard error of the trimmed mean: ``tstd / sqrt(count)``."""
    a, axis = _flat_or(a, axis)
    keep = _mask(a, limits, inclusive)
    count = np.shape(a)[axis] if keep is None else np.sum(keep, axis=axis)
    return tstd(a, limits, inclusive, axis, ddof) / np.sqrt(count)


def _extremum(reduce, fill, a, limit, axis, inclusive, lower):
    a, axis = _flat_or(a, axis)
    if limit is None:
        return reduce(a, axis=axis)
    outside = (a < limit if inclusive else a <= limit) if lower else (a > limit if inclusive else a >= limit)
    keep = ~outside  # a NaN is kept, and propagates (SciPy's masking)
    return reduce(np.where(keep, a * 1.0, fill), axis=axis)


def tmin(a, lowerlimit=None, axis=0, inclusive=True, nan_policy="propagate"):
    """The minimum of the values of ``a`` at or above ``lowerlimit``."""
    _nan_policy("tmin", nan_policy)
    return _extremum(np.min, np.inf, a, lowerlimit, axis, inclusive, True)


def tmax(a, upperlimit=None, axis=0, inclusive=True, nan_policy="propagate"):
    """The maximum of the values of ``a`` at or below ``upperlimit``."""
    _nan_policy("tmax", nan_policy)
    return _extremum(np.max, -np.inf, a, upperlimit, axis, inclusive, False)


def _scale(what, scale, normal):
    if isinstance(scale, str):
        if scale != "normal":
            raise TraceError(f"scipy.stats.{what}: scale={scale!r} is not one of SciPy's", hint="use 'normal'")
        return normal
    return scale


def iqr(x, axis=None, rng=(25, 75), scale=1.0, nan_policy="propagate", interpolation="linear", keepdims=False):
    """The interquartile range (``rng`` percentiles apart), divided by ``scale``."""
    _nan_policy("iqr", nan_policy, ("propagate", "omit"))
    percentile = np.nanpercentile if nan_policy == "omit" else np.percentile
    x = _array(x) * 1.0
    low, high = (percentile(x, q, axis=axis, method=interpolation, keepdims=keepdims) for q in rng)
    return (high - low) / _scale("iqr", scale, _NORMAL_IQR)


def median_abs_deviation(x, axis=0, center=np.median, scale=1.0, nan_policy="propagate"):
    """The median of ``|x - center(x)|`` along ``axis``, divided by ``scale``."""
    _nan_policy("median_abs_deviation", nan_policy)
    x, axis = _flat_or(x, axis)
    x = x * 1.0
    middle = np.expand_dims(center(x, axis=axis), axis)
    return np.median(np.abs(x - middle), axis=axis) / _scale("median_abs_deviation", scale, _NORMAL_MAD)


# ---------------------------------------------------------------- summaries
def describe(a, axis=0, ddof=1, bias=True, nan_policy="propagate"):
    """``nobs``, ``(min, max)``, mean, variance (``ddof``), skewness and kurtosis along ``axis``."""
    _nan_policy("describe", nan_policy)
    a, axis = _flat_or(a, axis)
    a = a * 1.0
    return DescribeResult(np.shape(a)[axis], (np.min(a, axis=axis), np.max(a, axis=axis)), np.mean(a, axis=axis),
                          np.var(a, axis=axis, ddof=ddof), stats_summaries.skew(a, axis, bias),
                          stats_summaries.kurtosis(a, axis, True, bias))


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most frequent value along ``axis`` (the smallest of equally frequent ones) and its count. The value
    has no derivative (refused by name); the count is an integer."""
    _nan_policy("mode", nan_policy)
    a, axis = _flat_or(a, axis)
    moved = np.moveaxis(a, axis, -1)
    left, right = moved[..., :, None], moved[..., None, :]
    counts = np.sum((left == right) | (np.isnan(left) & np.isnan(right)), axis=-1)  # NaNs count as one value
    best = np.max(counts, axis=-1, keepdims=True)
    # the smallest of the most frequent values, NaN only when it is the only one (fmin skips NaN; SciPy's order)
    value = np.fmin.reduce(np.where(counts == best, moved, np.nan), axis=-1)
    value = refuse_derivative(value, what="scipy.stats.mode",
                              hint="the most frequent value does not change smoothly with the data; hold it "
                                   "constant with gradc.stop_gradient if that is what you mean")
    count = best[..., 0]
    if keepdims:
        value, count = np.expand_dims(value, axis), np.expand_dims(count, axis)
    return ModeResult(value, count)


for _fn in (entropy, pearsonr, spearmanr, trim_mean, tmean, tvar, tstd, tsem, tmin, tmax, iqr,
            median_abs_deviation, describe, mode):
    scipy_dispatch.register(f"scipy.stats.{_fn.__name__}", _fn)

__all__ = ["entropy", "pearsonr", "spearmanr", "trim_mean", "tmean", "tvar", "tstd", "tsem", "tmin", "tmax", "iqr",
           "median_abs_deviation", "describe", "mode"]
