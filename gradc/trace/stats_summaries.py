"""``scipy.stats`` summary statistics on traced values, as NumPy compositions: ``gmean``, ``hmean``, ``sem``,
``moment``, ``variation``, ``skew``, ``kurtosis`` (SciPy's formulas, ``bias=False`` corrections included) and
``expectile`` (solved exactly from the sorted data rather than by SciPy's root finder) and
``differential_entropy`` (the spacing estimators of Vasicek, van Es, Ebrahimi and Correa on the sorted data).

>>> import scipy.stats
>>> from gradc.trace import trace
>>> print(trace(lambda a: scipy.stats.gmean(a), np.ones(2)).name)
lambda_
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import TraceError
from gradc.trace import scipy_dispatch


def _prepare(what, a, axis, nan_policy="propagate"):
    if nan_policy != "propagate":
        raise TraceError(f"scipy.stats.{what}: nan_policy={nan_policy!r} is not supported on traced values",
                         hint="use nan_policy='propagate' (whether a NaN is present depends on the data)")
    a = np.asarray(a) if not hasattr(a, "aval") else a
    if axis is None:
        return np.reshape(a, (-1,)) * 1.0, 0
    return a * 1.0, axis


def _central(a, axis, order):
    return np.mean((a - np.mean(a, axis=axis, keepdims=True)) ** order, axis=axis)


def gmean(a, axis=0, dtype=None, weights=None):
    a, axis = _prepare("gmean", a, axis)
    if weights is None:
        return np.exp(np.mean(np.log(a), axis=axis))
    return np.exp(np.sum(weights * np.log(a), axis=axis) / np.sum(weights * np.ones_like(a), axis=axis))


def hmean(a, axis=0, dtype=None, *, weights=None):
    a, axis = _prepare("hmean", a, axis)
    if weights is None:
        return 1.0 / np.mean(1.0 / a, axis=axis)
    return np.sum(weights * np.ones_like(a), axis=axis) / np.sum(weights / a, axis=axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate"):
    a, axis = _prepare("sem", a, axis, nan_policy)
    return np.std(a, axis=axis, ddof=ddof) / np.sqrt(np.shape(a)[axis])


def moment(a, order=1, axis=0, nan_policy="propagate", *, center=None):
    a, axis = _prepare("moment", a, axis, nan_policy)
    if center is None and order == 1:  # SciPy: exactly 0, not the rounding of mean(a - mean(a))
        return np.sum(a * 0.0, axis=axis)
    middle = np.mean(a, axis=axis, keepdims=True) if center is None else center
    return np.mean((a - middle) ** order, axis=axis)


def variation(a, axis=0, nan_policy="propagate", ddof=0, *, keepdims=False):
    a, axis = _prepare("variation", a, axis, nan_policy)
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / np.mean(a, axis=axis, keepdims=keepdims)


def skew(a, axis=0, bias=True, nan_policy="propagate"):
    a, axis = _prepare("skew", a, axis, nan_policy)
    n = np.shape(a)[axis]
    g = _central(a, axis, 3) / _central(a, axis, 2) ** 1.5
    return g if bias or n <= 2 else g * np.sqrt((n - 1.0) * n) / (n - 2.0)


def kurtosis(a, axis=0, fisher=True, bias=True, nan_policy="propagate"):
    a, axis = _prepare("kurtosis", a, axis, nan_policy)
    n = np.shape(a)[axis]
    ratio = _central(a, axis, 4) / _central(a, axis, 2) ** 2
    if not bias and n > 3:
        ratio = ((n * n - 1.0) * ratio - 3.0 * (n - 1.0) ** 2) / ((n - 2.0) * (n - 3.0)) + 3.0
    return ratio - 3.0 if fisher else ratio


def expectile(a, alpha=0.5, *, weights=None):
    """The ``t`` with ``alpha sum w (a - t)+ = (1 - alpha) sum w (t - a)+`` over all of ``a``: the condition is
    linear in ``t`` between two neighbours of the sorted data, so each gap gives a candidate weighted mean
    ``t_k`` (weights ``1 - alpha`` below, ``alpha`` above) and the expectile is the first that lies in its gap.
    Its derivatives are those of that weighted mean: the implicit function's."""
    if isinstance(alpha, (int, float)) and not 0 <= alpha <= 1:
        raise TraceError(f"scipy.stats.expectile: alpha={alpha!r} is outside [0, 1]",
                         hint="the expectile level alpha must be in the range [0, 1]")
    a = np.asarray(a) if not hasattr(a, "aval") else a
    w = np.ones_like(a * 1.0) if weights is None else np.broadcast_to(weights, np.shape(a)) * 1.0  # SciPy's order
    a, w = np.reshape(a * 1.0, (-1,)), np.reshape(w, (-1,))
    order = np.argsort(a, kind="stable")
    ordered, ordered_w = a[order], w[order]
    below_w, below_s = np.cumsum(ordered_w), np.cumsum(ordered_w * ordered)
    above_w, above_s = np.sum(ordered_w) - below_w, np.sum(ordered_w * ordered) - below_s
    numerator = (1.0 - alpha) * below_s + alpha * above_s
    denominator = (1.0 - alpha) * below_w + alpha * above_w
    empty = denominator == 0.0  # alpha = 1 above the largest value: the expectile is that maximum
    candidate = np.where(empty, ordered, numerator / np.where(empty, 1.0, denominator))
    upper = np.concatenate([ordered[1:], np.full(1, np.inf)])
    # the gap its candidate lies in (least outside: rounding may push a t at a data point just out of both gaps)
    outside = np.maximum(ordered - candidate, 0.0) + np.maximum(candidate - upper, 0.0)
    best = outside == np.min(outside)
    first = best & (np.cumsum(best * 1) == 1)
    return np.sum(np.where(first, candidate, 0.0))


def _padded(x, m):
    """The sorted data with its first and last values repeated ``m`` times on either side (last axis)."""
    return np.concatenate([np.repeat(x[..., :1], m, axis=-1), x, np.repeat(x[..., -1:], m, axis=-1)], axis=-1)


def _spacing_entropy(x, n, m, method):
    if method == "van es":
        term = np.sum(np.log((n + 1) / m * (x[..., m:] - x[..., :-m])), axis=-1) / (n - m)
        return term + float(np.sum(1.0 / np.arange(m, n + 1))) + np.log(m) - np.log(n + 1)
    padded = _padded(x, m)
    if method == "correa":
        window = np.arange(-m, m + 1)[:, None]
        positions = np.arange(n)[None, :] + window + m  # (2m + 1, n): each point's window in the padded data
        values = padded[..., positions]
        centred = values - np.mean(values, axis=-2, keepdims=True)
        ratio = np.sum(centred * window, axis=-2) / (n * np.sum(centred ** 2, axis=-2))
        return -np.mean(np.log(ratio), axis=-1)
    spacing = padded[..., 2 * m:] - padded[..., :-2 * m]
    if method == "vasicek":
        return np.mean(np.log(n / (2 * m) * spacing), axis=-1)
    i = np.arange(1, n + 1)  # ebrahimi: the spacings at the ends, where the padding repeats values, weighted
    weight = np.where(i >= n - m + 1, 1 + (n - i) / m, np.where(i <= m, 1 + (i - 1) / m, 2.0))
    return np.mean(np.log(n * spacing / (weight * m)), axis=-1)


def differential_entropy(values, *, window_length=None, base=None, axis=0, method="auto", nan_policy="propagate",
                         keepdims=False):
    """SciPy's spacing estimates of the differential entropy; ``method="auto"`` picks as SciPy does by the
    sample size (van Es up to 10, Ebrahimi up to 1000, Vasicek beyond). Differentiable where the data are distinct
    (the sort's order is then locally constant)."""
    x, axis = _prepare("differential_entropy", values, axis, nan_policy)
    if keepdims:
        raise TraceError("scipy.stats.differential_entropy: keepdims=True is not supported on traced values",
                         hint="reshape the result with np.expand_dims")
    x = np.moveaxis(x, axis, -1)
    n = np.shape(x)[-1]
    m = math.floor(math.sqrt(n) + 0.5) if window_length is None else int(window_length)
    if not 2 <= 2 * m < n:
        raise TraceError(f"scipy.stats.differential_entropy: window length {m} must be positive and less than half "
                         f"the sample size {n}", hint="pass a smaller window_length= or more values")
    method = method.lower()
    if method == "auto":
        method = "van es" if n <= 10 else ("ebrahimi" if n <= 1000 else "vasicek")
    if method not in ("vasicek", "van es", "ebrahimi", "correa"):
        raise TraceError(f"scipy.stats.differential_entropy: unknown method={method!r}",
                         hint="use 'auto', 'vasicek', 'van es', 'ebrahimi' or 'correa'")
    if base is not None and base <= 0:
        raise TraceError(f"scipy.stats.differential_entropy: base={base!r} must be positive", hint="use base=None")
    result = _spacing_entropy(np.sort(x, axis=-1), n, m, method)
    return result if base is None else result / math.log(base)


for _fn in (gmean, hmean, sem, moment, variation, skew, kurtosis, expectile, differential_entropy):
    scipy_dispatch.register(f"scipy.stats.{_fn.__name__}", _fn)
