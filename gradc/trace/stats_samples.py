"""More ``scipy.stats`` functions of samples on traced values, as NumPy compositions: ``rankdata`` (static
ranks), ``circmean``/``circvar``/``circstd``, ``gstd``, ``gzscore``, ``zmap``, ``scoreatpercentile``,
``wasserstein_distance`` and ``energy_distance`` (1-d, weights allowed), ``kstat``/``kstatvar``, and
``boxcox``/``yeojohnson`` with a given ``lmbda``, ``percentileofscore``.

Ranks are piecewise constant in the data: ``rankdata``'s result has no derivative (zero, computed by
comparisons; SciPy's tie methods). The distances between samples are integrals of the difference of their
empirical distribution functions: they differentiate through the sorted values (where the steps are), not
through the step heights (counts). ``boxcox``/``yeojohnson`` without ``lmbda`` fit it by maximum likelihood
(an optimisation): refused, with the fix.

>>> import scipy.stats
>>> from gradc.trace import trace
>>> print(trace(lambda a: scipy.stats.circmean(a), np.ones(3)).name)
lambda_
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.ops import checks
from gradc.trace import scipy_dispatch
from gradc.trace.stats_descriptive import _array, _flat_or, _nan_policy, _ranks


def _keepdims(what, keepdims):
    if keepdims:
        raise TraceError(f"scipy.stats.{what}: keepdims=True is not supported by gradc",
                         hint="expand the result with np.expand_dims(result, axis)")


# ---------------------------------------------------------------- ranks
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """SciPy's ranks (1-based; ``average``, ``min``, ``max``, ``dense`` or ``ordinal`` for ties), by
    comparisons: piecewise constant in ``a``, so they carry no derivative."""
    _nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise TraceError(f"scipy.stats.rankdata: method={method!r} is not one of SciPy's",
                         hint="use 'average', 'min', 'max', 'dense' or 'ordinal'")
    a, axis = _flat_or(a, axis)
    if method == "average":
        return _ranks(a, axis)
    if np.issubdtype(a.aval.np_dtype if hasattr(a, "aval") else np.asarray(a).dtype, np.floating):
        checks.check(np.any(np.isnan(a)), "ValueError",
                     (f"scipy.stats.rankdata(method={method!r}) of data holding a NaN: SciPy returns float NaN ranks "
                      "there, integer ranks elsewhere (a dtype that depends on the values)",), user_location() or "")
    moved = np.moveaxis(a, axis, -1)
    left, right = moved[..., :, None], moved[..., None, :]
    below = np.sum(right < left, axis=-1)
    if method == "min":
        ranks = below + 1
    elif method == "max":
        ranks = np.sum(right <= left, axis=-1)
    elif method == "ordinal":  # ties in order of appearance
        n = np.shape(moved)[-1]
        earlier = np.tril(np.ones((n, n), dtype=bool), -1)
        ranks = below + np.sum((right == left) & earlier, axis=-1) + 1
    else:  # dense: the number of distinct values below, plus one
        copies = np.sum(right == left, axis=-1)
        ranks = np.round(np.sum((right < left) / copies[..., None, :], axis=-1)).astype(np.int64) + 1
    return np.moveaxis(ranks.astype(np.int64), -1, axis)


# ---------------------------------------------------------------- circular statistics
def _circular(samples, high, low, axis):
    period = high - low
    scaled = (_array(samples) * 1.0) * (2.0 * math.pi / period)
    return np.sin(scaled), np.cos(scaled), period


def circmean(samples, high=2 * math.pi, low=0, axis=None, nan_policy="propagate", *, keepdims=False):
    """The mean direction, in ``[low, high)``."""
    _nan_policy("circmean", nan_policy)
    _keepdims("circmean", keepdims)
    sin, cos, period = _circular(samples, high, low, axis)
    angle = np.arctan2(np.sum(sin, axis=axis), np.sum(cos, axis=axis))
    return np.mod(angle * (period / (2.0 * math.pi)) - low, period) + low


def _resultant(samples, high, low, axis):
    sin, cos, _ = _circular(samples, high, low, axis)
    return np.minimum(np.sqrt(np.mean(sin, axis=axis) ** 2 + np.mean(cos, axis=axis) ** 2), 1.0)


def circvar(samples, high=2 * math.pi, low=0, axis=None, nan_policy="propagate", *, keepdims=False):
    """``1 - R``, ``R`` the mean resultant length."""
    _nan_policy("circvar", nan_policy)
    _keepdims("circvar", keepdims)
    return 1.0 - _resultant(samples, high, low, axis)


def circstd(samples, high=2 * math.pi, low=0, axis=None, nan_policy="propagate", *, normalize=False,
            keepdims=False):
    """``sqrt(-2 log R)`` (in the samples' units unless ``normalize``)."""
    _nan_policy("circstd", nan_policy)
    _keepdims("circstd", keepdims)
    out = np.sqrt(-2.0 * np.log(_resultant(samples, high, low, axis)))
    return out if normalize else out * ((high - low) / (2.0 * math.pi))


# ---------------------------------------------------------------- standardisations
def gstd(a, axis=0, ddof=1, *, keepdims=False, nan_policy="propagate"):
    """The geometric standard deviation: ``exp(std(log a))``."""
    _nan_policy("gstd", nan_policy)
    return np.exp(np.std(np.log(_array(a) * 1.0), axis=axis, ddof=ddof, keepdims=keepdims))


def zmap(scores, compare, axis=0, ddof=0, nan_policy="propagate"):
    """``scores`` standardised by ``compare``'s mean and standard deviation."""
    _nan_policy("zmap", nan_policy)
    same = scores is compare
    compare = _array(compare) * 1.0
    centre = np.mean(compare, axis=axis, keepdims=True)
    spread = np.std(compare, axis=axis, ddof=ddof, keepdims=True)
    z = (_array(scores) - centre) / spread
    if same:  # SciPy's zscore: a constant slice is NaN, not the rounding of 0 / 0
        z = np.where(spread <= np.abs(np.finfo(float).eps * centre), np.nan, z)
    return z


def gzscore(a, *, axis=0, ddof=0, nan_policy="propagate"):
    """The z-score of ``log a``."""
    log = np.log(_array(a) * 1.0)
    return zmap(log, log, axis, ddof, nan_policy)


def scoreatpercentile(a, per, limit=(), interpolation_method="fraction", axis=None):
    """The score at percentile ``per`` (``fraction``: linear interpolation, ``lower``, ``higher``)."""
    if limit:
        raise TraceError("scipy.stats.scoreatpercentile with limit=: which values count depends on the data",
                         hint="select the values with np.where first, or use np.percentile")
    methods = {"fraction": "linear", "lower": "lower", "higher": "higher"}
    if interpolation_method not in methods:
        raise TraceError(f"scipy.stats.scoreatpercentile: interpolation_method={interpolation_method!r} is not one "
                         "of SciPy's", hint="use 'fraction', 'lower' or 'higher'")
    return np.percentile(_array(a) * 1.0, per, axis=axis, method=methods[interpolation_method])


# ---------------------------------------------------------------- distances between samples
def _cdf(values, weights, at):
    order = np.argsort(values)
    index = np.searchsorted(values[order], at, side="right")
    if weights is None:
        return index / np.shape(values)[0]
    weights = _array(weights) * 1.0 + values * 0.0  # traced with the values (their order indexes it)
    cumulative = np.concatenate([np.zeros(1), np.cumsum(np.take(weights, order))])
    return np.take(cumulative, index) / cumulative[-1]


def _cdf_integral(power, u, v, u_weights, v_weights, what):
    u, v = _array(u) * 1.0, _array(v) * 1.0
    if np.ndim(u) != 1 or np.ndim(v) != 1:
        raise TraceError(f"scipy.stats.{what} of arrays with more than one axis", hint="pass 1-d samples")
    every = np.sort(np.concatenate([u, v]))
    deltas = np.diff(every)
    gap = _cdf(u, u_weights, every[:-1]) - _cdf(v, v_weights, every[:-1])
    if power == 1:
        return np.sum(np.abs(gap) * deltas)
    return np.sqrt(np.sum(gap * gap * deltas))


def wasserstein_distance(u_values, v_values, u_weights=None, v_weights=None):
    """The first Wasserstein distance of two 1-d empirical distributions."""
    return _cdf_integral(1, u_values, v_values, u_weights, v_weights, "wasserstein_distance")


def energy_distance(u_values, v_values, u_weights=None, v_weights=None):
    """The energy distance of two 1-d empirical distributions."""
    return math.sqrt(2.0) * _cdf_integral(2, u_values, v_values, u_weights, v_weights, "energy_distance")


# ---------------------------------------------------------------- k-statistics
def kstat(data, n=2, *, axis=None, nan_policy="propagate", keepdims=False):
    """The ``n``-th k-statistic (the unbiased cumulant estimator), ``n`` in 1..4."""
    _nan_policy("kstat", nan_policy)
    _keepdims("kstat", keepdims)
    if n not in (1, 2, 3, 4):
        raise TraceError(f"scipy.stats.kstat: n={n!r} must be 1, 2, 3 or 4", hint="pass n in 1..4")
    data, axis = _flat_or(data, axis)
    data = data * 1.0
    m = float(np.shape(data)[axis])
    s1, s2, s3, s4 = (np.sum(data ** k, axis=axis) for k in (1, 2, 3, 4))
    if n == 1:
        return s1 / m
    if n == 2:
        return (m * s2 - s1 * s1) / (m * (m - 1.0))
    if n == 3:
        return (2 * s1 ** 3 - 3 * m * s1 * s2 + m * m * s3) / (m * (m - 1.0) * (m - 2.0))
    return (-6 * s1 ** 4 + 12 * m * s1 ** 2 * s2 - 3 * m * (m - 1.0) * s2 ** 2 - 4 * m * (m + 1) * s1 * s3
            + m * m * (m + 1) * s4) / (m * (m - 1.0) * (m - 2.0) * (m - 3.0))


def kstatvar(data, n=2, *, axis=None, nan_policy="propagate", keepdims=False):
    """An unbiased estimator of the variance of the ``n``-th k-statistic (``n`` 1 or 2)."""
    _nan_policy("kstatvar", nan_policy)
    _keepdims("kstatvar", keepdims)
    data, axis = _flat_or(data, axis)
    m = float(np.shape(data)[axis])
    if n == 1:
        return kstat(data, 2, axis=axis) / m
    if n == 2:
        k2, k4 = kstat(data, 2, axis=axis), kstat(data, 4, axis=axis)
        return (2 * m * k2 ** 2 + (m - 1.0) * k4) / (m * (m + 1.0))
    raise TraceError(f"scipy.stats.kstatvar: n={n!r} must be 1 or 2", hint="pass n=1 or n=2")


# ---------------------------------------------------------------- power transforms with a given lambda
def _given(what, lmbda, extra):
    if lmbda is None or any(v is not None for v in extra):
        raise TraceError(f"scipy.stats.{what} without lmbda fits it by maximum likelihood (an optimisation), "
                         "which gradc does not trace", hint=f"pass lmbda= (fit it once outside, scipy.stats.{what}"
                                                            "(data)[1]), or use scipy.special.boxcox(x, lmbda)")


def boxcox(x, lmbda=None, alpha=None, optimizer=None):
    """``(x^lmbda - 1) / lmbda`` (``log x`` at 0) for a given ``lmbda``."""
    _given("boxcox", lmbda, (alpha, optimizer))
    return _power_log(np.log(_array(x) * 1.0), lmbda)


_SMALL = 1e-7  # below it, (e^(l u) - 1) / l is its series u + l u^2 / 2 (the next term, l^2 u^3 / 6, is negligible)


def _power_log(u, lmbda):
    """``(exp(lmbda u) - 1) / lmbda``, ``u`` at ``lmbda = 0``, with the limit's derivative in ``lmbda`` there."""
    small = np.abs(lmbda) < _SMALL
    safe = np.where(small, 1.0, lmbda)
    return np.where(small, u + lmbda * u * u * 0.5, np.expm1(safe * u) / safe)


def yeojohnson(x, lmbda=None):
    """Yeo and Johnson's transform for a given ``lmbda`` (both signs of ``x``)."""
    _given("yeojohnson", lmbda, ())
    x = _array(x) * 1.0
    positive = x >= 0
    up = np.log1p(np.where(positive, x, 0.0))
    down = np.log1p(-np.where(positive, 0.0, x))
    return np.where(positive, _power_log(up, lmbda), -_power_log(down, 2.0 - lmbda))


def percentileofscore(a, score, kind="rank", nan_policy="propagate"):
    """The percentile rank of ``score`` among the values of a 1-d ``a`` (counts: no derivative)."""
    _nan_policy("percentileofscore", nan_policy)
    if kind not in ("rank", "strict", "weak", "mean"):
        raise TraceError(f"scipy.stats.percentileofscore: kind={kind!r} is not one of SciPy's",
                         hint="use 'rank', 'strict', 'weak' or 'mean'")
    a, score = _array(a) * 1.0, _array(score) * 1.0
    if np.ndim(a) != 1:
        raise TraceError("scipy.stats.percentileofscore: a must be 1-dimensional", hint="pass a 1-d array")
    n = np.shape(a)[0]
    below = np.sum(a < score[..., None], axis=-1)
    at_most = np.sum(a <= score[..., None], axis=-1)
    percent = {"rank": lambda: (below + at_most + (below < at_most)) * (50.0 / n),
               "strict": lambda: below * (100.0 / n), "weak": lambda: at_most * (100.0 / n),
               "mean": lambda: (below + at_most) * (50.0 / n)}[kind]()
    nan = np.any(np.isnan(a)) | np.isnan(score)  # SciPy: NaN for a NaN score, everywhere for a NaN in a
    return np.where(nan, np.nan, percent)


def _refused(name, hint):
    def refuse(*args, **kwargs):
        raise TraceError(f"scipy.stats.{name} is not supported by gradc on traced values", hint=hint)
    return refuse


for _fn in (rankdata, circmean, circvar, circstd, gstd, zmap, gzscore, scoreatpercentile, wasserstein_distance,
            energy_distance, kstat, kstatvar, boxcox, yeojohnson, percentileofscore):
    scipy_dispatch.register(f"scipy.stats.{_fn.__name__}", _fn)
scipy_dispatch.register("scipy.stats.sigmaclip", _refused(
    "sigmaclip", "how many values it keeps depends on the data; clip with np.where(np.abs(z) < k, a, np.nan) and "
                 "use the nan-aware reductions"))
scipy_dispatch.register("scipy.stats.multiscale_graphcorr", _refused(
    "multiscale_graphcorr", "its p-value is a permutation test; compute it on constant data outside"))

__all__ = ["rankdata", "circmean", "circvar", "circstd", "gstd", "zmap", "gzscore", "scoreatpercentile",
           "wasserstein_distance", "energy_distance", "kstat", "kstatvar", "boxcox", "yeojohnson", "percentileofscore"]
